// The SVG Gantt chart: for each panel (input order above the new order) one row for the
// DMA engine, one per core and the live bytes over time, on one shared time axis.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "tools/ork_sched/render.h"

namespace ork::sched {

namespace {

constexpr double kLeft = 80;     // px, row labels
constexpr double kWidth = 920;   // px, the time axis
constexpr double kRow = 22;      // px per DMA/core row
constexpr double kMemory = 56;   // px, the live-bytes chart
constexpr double kGap = 34;      // px between panels

std::string escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

// 1, 2 or 5 times a power of ten, giving about 8 ticks.
int64_t tick_step(int64_t span) {
  const double raw = std::max(1.0, static_cast<double>(span) / 8.0);
  const double power = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * power >= raw) return static_cast<int64_t>(m * power);
  return static_cast<int64_t>(10 * power);
}

struct Canvas {
  std::string body;
  double scale = 1;  // px per cycle

  double x(int64_t t) const { return kLeft + static_cast<double>(t) * scale; }
  void box(int64_t begin, int64_t end, double y, const char* fill, const std::string& label) {
    const double w = std::max(1.0, static_cast<double>(end - begin) * scale);
    body += fmt::format("<rect x='{:.1f}' y='{:.1f}' width='{:.1f}' height='{}' fill='{}' stroke='#333' "
                        "stroke-width='0.5'><title>{} [{}, {})</title></rect>\n",
                        x(begin), y + 2, w, kRow - 4, fill, escape(label), begin, end);
    if (w > 7.0 * static_cast<double>(label.size()))
      body += fmt::format("<text x='{:.1f}' y='{:.1f}' font-size='10' text-anchor='middle'>{}</text>\n",
                          x(begin) + w / 2, y + kRow / 2 + 4, escape(label));
  }
};

const char* fill_for(const Stream& s, const TimedOp& t) {
  if (t.op < 0) return "#e57373";  // spill / reload
  switch (s.ops[t.op].kind) {
    case OpKind::load: return "#64b5f6";
    case OpKind::store: return "#81c784";
    case OpKind::start: return "#ffb74d";
    default: return "#bdbdbd";
  }
}

double draw_panel(Canvas& c, const Stream& s, const Panel& p, double top, int64_t span) {
  c.body += fmt::format("<text x='4' y='{:.1f}' font-size='13' font-weight='bold'>{}: {} cycles</text>\n",
                        top + 14, escape(p.title), p.sim.makespan);
  const double rows = top + 22;
  for (int r = 0; r <= s.cores; ++r)
    c.body += fmt::format("<text x='4' y='{:.1f}' font-size='11'>{}</text>\n", rows + r * kRow + 15,
                          r == 0 ? std::string("DMA") : fmt::format("core {}", r - 1));
  for (const TimedOp& t : p.sim.timeline) {
    const bool dma = t.op < 0 || s.ops[t.op].kind == OpKind::load || s.ops[t.op].kind == OpKind::store;
    if (dma) c.box(t.begin, t.end, rows, fill_for(s, t), timed_label(s, p, t));
    else if (t.core >= 0) c.box(t.begin, t.end, rows + (t.core + 1) * kRow, fill_for(s, t), s.ops[t.op].name);
  }
  const double mem_top = rows + (s.cores + 1) * kRow + 6;
  const double mem_base = mem_top + kMemory;
  int64_t most = s.memory_bytes;
  for (const LivePoint& l : p.sim.live) most = std::max(most, l.bytes);
  auto y = [&](int64_t bytes) { return mem_base - kMemory * static_cast<double>(bytes) / static_cast<double>(most); };
  std::string path = fmt::format("M{:.1f},{:.1f}", c.x(0), mem_base);
  int64_t last = 0;
  for (const LivePoint& l : p.sim.live) {
    path += fmt::format(" L{:.1f},{:.1f} L{:.1f},{:.1f}", c.x(l.time), y(last), c.x(l.time), y(l.bytes));
    last = l.bytes;
  }
  path += fmt::format(" L{:.1f},{:.1f} L{:.1f},{:.1f} Z", c.x(span), y(last), c.x(span), mem_base);
  c.body += fmt::format("<text x='4' y='{:.1f}' font-size='11'>live bytes</text>\n", mem_top + 14);
  c.body += fmt::format("<path d='{}' fill='#ce93d8' stroke='#6a1b9a' stroke-width='0.7'/>\n", path);
  c.body += fmt::format("<line x1='{:.1f}' x2='{:.1f}' y1='{:.1f}' y2='{:.1f}' stroke='#c62828' "
                        "stroke-dasharray='4,3'><title>memory {} bytes</title></line>\n",
                        c.x(0), c.x(span), y(s.memory_bytes), y(s.memory_bytes), s.memory_bytes);
  const int64_t step = tick_step(span);
  for (int64_t t = 0; t <= span; t += step)
    c.body += fmt::format("<line x1='{0:.1f}' x2='{0:.1f}' y1='{1:.1f}' y2='{2:.1f}' stroke='#999' "
                          "stroke-width='0.5'/><text x='{0:.1f}' y='{3:.1f}' font-size='9' "
                          "text-anchor='middle'>{4}</text>\n",
                          c.x(t), rows, mem_base + 3, mem_base + 13, t);
  return mem_base + 14 + kGap;
}

}  // namespace

std::string render_svg(const Stream& s, const std::vector<Panel>& panels) {
  int64_t span = 1;
  for (const Panel& p : panels) span = std::max(span, p.sim.makespan);
  Canvas c;
  c.scale = kWidth / static_cast<double>(span);
  double top = 4;
  for (const Panel& p : panels) top = draw_panel(c, s, p, top, span);
  return fmt::format("<svg xmlns='http://www.w3.org/2000/svg' width='{:.0f}' height='{:.0f}' "
                     "font-family='sans-serif'>\n<rect width='100%' height='100%' fill='white'/>\n{}</svg>\n",
                     kLeft + kWidth + 20, top, c.body);
}

}  // namespace ork::sched
