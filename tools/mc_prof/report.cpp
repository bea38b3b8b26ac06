#include "tools/mc_prof/report.h"

#include <algorithm>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace ork::tools {

std::string table(const std::vector<Row>& rows) {
  size_t w = 14;  // the label column fits the longest label (the published sweep: "K2048/1c/mg_max*64")
  for (const Row& r : rows) w = std::max(w, r.label.size());
  std::string out = fmt::format("{:<{}} {:>6} {:>6} {:>6} {:>5} {:>6} {:>7} {:>11} {:>26} {:>10} {:>8} {:>9} {:>10} {:>9} {:>9}\n",
                                "config", w, "M", "K", "N", "cores", "mc", "submits", "us/matmul", "min / median / max",
                                "us/submit", "pack", "submit", "device", "unpack", "build");
  for (const Row& r : rows) {
    const Measurement& m = r.m;
    out += fmt::format("{:<{}} {:>6} {:>6} {:>6} {:>5} {:>6} {:>7} {:>11.1f} {:>26} {:>10.1f} {:>8.1f} {:>9.1f} {:>10} {:>9.1f} {:>9.1f}\n",
                       r.label, w, m.config.m, m.config.k, m.config.n, m.config.cores, m.mc, m.submits, m.us_per_matmul,
                       fmt::format("{:.1f} / {:.1f} / {:.1f}", m.us_min, m.us_median, m.us_max), m.us_per_submit, m.pack_us, m.submit_us,
                       m.device_us < 0 ? std::string("-") : fmt::format("{:.1f}", m.device_us), m.unpack_us, m.build_us);
  }
  return out;
}

std::string json(const std::vector<Row>& rows, const std::string& sweep, const std::string& device,
                 const std::string& timing, const nlohmann::json& extra) {
  nlohmann::json j = extra;
  j["tool"] = "mc_prof";
  j["device"] = device;
  j["timing"] = timing.empty() ? nlohmann::json(nullptr) : nlohmann::json(timing);
  j["sweep"] = sweep;
  j["unit"] = "us";
  j["rows"] = nlohmann::json::array();
  for (const Row& r : rows) {
    const Measurement& m = r.m;
    j["rows"].push_back({{"label", r.label},
                         {"m", m.config.m},
                         {"k", m.config.k},
                         {"n", m.config.n},
                         {"cores", m.config.cores},
                         {"mc_cap", m.config.mc_cap},
                         {"mc", m.mc},
                         {"tasks", m.tasks},
                         {"submits", m.submits},
                         {"iters", m.config.iters},
                         {"us_per_matmul", m.us_per_matmul},
                         {"us_min", m.us_min},
                         {"us_median", m.us_median},
                         {"us_max", m.us_max},
                         {"us_per_submit", m.us_per_submit},
                         {"pack_us", m.pack_us},
                         {"submit_us", m.submit_us},
                         {"device_us", m.device_us < 0 ? nlohmann::json(nullptr) : nlohmann::json(m.device_us)},
                         {"device_source", m.device_source},
                         {"unpack_us", m.unpack_us},
                         {"lookup_us", m.lookup_us},
                         {"build_us", m.build_us}});
  }
  return j.dump(2) + "\n";
}

std::string csv(const std::vector<Row>& rows) {
  std::string out = "label,m,k,n,cores,mc_cap,mc,tasks,submits,us_per_matmul,us_per_submit,pack_us,submit_us,device_us,unpack_us,build_us,us_min,us_median,us_max\n";
  for (const Row& r : rows) {
    const Measurement& m = r.m;
    out += fmt::format("{},{},{},{},{},{},{},{},{},{:.3f},{:.3f},{:.3f},{:.3f},{},{:.3f},{:.3f},{:.3f},{:.3f},{:.3f}\n", r.label, m.config.m,
                       m.config.k, m.config.n, m.config.cores, m.config.mc_cap, m.mc, m.tasks, m.submits,
                       m.us_per_matmul, m.us_per_submit, m.pack_us, m.submit_us,
                       m.device_us < 0 ? std::string() : fmt::format("{:.3f}", m.device_us), m.unpack_us, m.build_us,
                       m.us_min, m.us_median, m.us_max);
  }
  return out;
}

std::string svg(const std::vector<Row>& rows, const std::string& title, bool with_wall) {
  constexpr double W = 720, H = 420, L = 80, R = 20, T = 40, B = 70;
  double ymax = 1;
  for (const Row& r : rows) ymax = std::max({ymax, with_wall ? r.m.us_per_matmul : 0.0, r.m.device_us});
  ymax *= 1.1;
  const double n = static_cast<double>(std::max<size_t>(rows.size(), 1));
  auto x = [&](size_t i) { return L + (W - L - R) * (static_cast<double>(i) + 0.5) / n; };
  auto y = [&](double v) { return T + (H - T - B) * (1 - v / ymax); };
  std::string s = fmt::format(
      "<svg xmlns='http://www.w3.org/2000/svg' width='{0}' height='{1}' font-family='sans-serif' font-size='12'>\n"
      "<rect width='{0}' height='{1}' fill='white'/>\n<text x='{2}' y='22' font-size='15'>{3}</text>\n",
      W, H, L, title);
  s += fmt::format("<line x1='{0}' y1='{1}' x2='{0}' y2='{2}' stroke='black'/><line x1='{0}' y1='{2}' x2='{3}' y2='{2}' stroke='black'/>\n",
                   L, T, H - B, W - R);
  for (int t = 0; t <= 4; ++t) {
    const double v = ymax * t / 4;
    s += fmt::format("<text x='{}' y='{}' text-anchor='end'>{:.0f}</text><line x1='{}' y1='{}' x2='{}' y2='{}' stroke='#ddd'/>\n",
                     L - 6, y(v) + 4, v, L, y(v), W - R, y(v));
  }
  s += fmt::format("<text x='18' y='{}' transform='rotate(-90 18 {})'>µs per matmul</text>\n", (T + H - B) / 2,
                   (T + H - B) / 2);
  auto polyline = [&](auto value, const char* color) {
    std::string pts;
    for (size_t i = 0; i < rows.size(); ++i)
      if (value(rows[i]) >= 0) pts += fmt::format("{:.1f},{:.1f} ", x(i), y(value(rows[i])));
    if (pts.empty()) return std::string();
    std::string out = fmt::format("<polyline fill='none' stroke='{}' stroke-width='2' points='{}'/>\n", color, pts);
    for (size_t i = 0; i < rows.size(); ++i)
      if (value(rows[i]) >= 0)
        out += fmt::format("<circle cx='{:.1f}' cy='{:.1f}' r='3' fill='{}'/>\n", x(i), y(value(rows[i])), color);
    return out;
  };
  if (with_wall) s += polyline([](const Row& r) { return r.m.us_per_matmul; }, "#1f77b4");
  s += polyline([](const Row& r) { return r.m.device_us; }, "#d62728");
  for (size_t i = 0; i < rows.size(); ++i)
    // Alternate rows of labels so that long ones (the published sweep's) do not overlap.
    s += fmt::format("<text x='{:.1f}' y='{}' text-anchor='middle'>{}</text>\n", x(i), H - B + 18 + (i % 2) * 16,
                     rows[i].label);
  if (with_wall) s += fmt::format("<text x='{}' y='{}' fill='#1f77b4'>wall µs/matmul</text>\n", L, H - 20);
  s += fmt::format("<text x='{}' y='{}' fill='#d62728'>device µs/matmul (kernel-reported)</text>\n", L + 160, H - 20);
  return s + "</svg>\n";
}

}  // namespace ork::tools
