// mc_prof's model outputs (calibrate.h): the published figures' leave-one-out table and the
// refit from a board report.
#include "tools/mc_prof/calibrate.h"


#include <map>

#include <fmt/format.h>

#include "driver/timing/timing_model.h"
#include "tools/common/cli.h"
#include "tools/mc_prof/board_report.h"
#include "tools/mc_prof/model_fit.h"
#include "tools/mc_prof/split.h"

namespace ork::tools {
namespace {

using Json = nlohmann::json;  // not "json": report.h declares a function ork::tools::json

Json params_json(const timing::TimingParams& p) {
  return {{"task_ns", p.task_ns},
          {"core_dma_bytes_per_ns", p.core_dma_bytes_per_ns},
          {"shared_dram_bytes_per_ns", p.shared_dram_bytes_per_ns},
          {"serial_mac_efficiency", p.serial_mac_efficiency},
          {"submit_ns", p.submit_ns},
          {"clock_hz", p.clock_hz}};
}

Json spread_json(const std::vector<double>& errors, const std::vector<std::string>& names) {
  const Spread3 s = abs_spread(errors, names);
  return {{"min_abs_error_percent", s.min}, {"median_abs_error_percent", s.median},
          {"max_abs_error_percent", s.max}, {"worst", s.worst}, {"count", errors.size()}};
}

Json setup_json(const Setup& s, int64_t m) {
  return {{"m", s.m_unknown ? m : s.m}, {"m_stated", !s.m_unknown}, {"k", s.k}, {"n", s.n}, {"cores", s.cores},
          {s.per_tile ? "mc" : "mc_cap", s.mc}, {"layout", s.per_tile ? "per_tile" : "chained"}};
}

}  // namespace

Json published_report() {
  const auto& all = published_figures();
  std::vector<Figure> train;
  for (const Figure& f : all)
    if (f.train) train.push_back(f);
  const FitResult refit = fit(train);  // from the shipped constants
  // The shipped model: timing_model.h's constants, with the M the training fit chose.
  const FitResult shipped{timing::TimingParams{}, refit.experiment_m, 0};
  const auto judged = judge(all, shipped, true);
  Json figs = Json::array();
  std::vector<double> fit_err, held_err, loo_err;
  std::vector<std::string> fit_names, held_names, names;
  for (const Judged& j : judged) {
    const Figure& f = *j.figure;
    figs.push_back({{"name", f.name},
                    {"published_us", f.published_us},
                    {"modelled_us", j.modelled_us},
                    {"error_percent", j.error_percent},
                    {"fitted", f.train},
                    {"loo_modelled_us", j.loo_modelled_us},
                    {"loo_error_percent", j.loo_error_percent},
                    {"setup", setup_json(f.setup, shipped.experiment_m)},
                    {"source", f.source}});
    (f.train ? fit_err : held_err).push_back(j.error_percent);
    (f.train ? fit_names : held_names).push_back(f.name);
    loo_err.push_back(j.loo_error_percent);
    names.push_back(f.name);
  }
  return {{"figures", figs},
          {"model", {{"params", params_json(shipped.params)},
                     {"experiment_m", shipped.experiment_m},
                     {"refit_params", params_json(refit.params)},
                     {"source", "driver/timing/timing_model.h; docs/timing-model.md"}}},
          {"training", spread_json(fit_err, fit_names)},
          {"held_out", spread_json(held_err, held_names)},
          {"leave_one_out", spread_json(loo_err, names)}};
}

std::string published_table(const Json& r) {
  std::string out = fmt::format("{:<36} {:>9} {:>9} {:>7} {:>6} {:>9} {:>7}\n", "published figure", "published",
                                "model", "error", "fitted", "left out", "error");
  for (const Json& f : r["figures"])
    out += fmt::format("{:<36} {:>9.0f} {:>9.1f} {:>+6.1f}% {:>6} {:>9.1f} {:>+6.1f}%\n", f["name"].get<std::string>(),
                       f["published_us"].get<double>(), f["modelled_us"].get<double>(), f["error_percent"].get<double>(),
                       f["fitted"].get<bool>() ? "yes" : "no", f["loo_modelled_us"].get<double>(),
                       f["loo_error_percent"].get<double>());
  auto line = [&](const char* what, const Json& s) {
    out += fmt::format("{}: |error| min {:.1f} % / median {:.1f} % / max {:.1f} % (worst: {})\n", what,
                       s["min_abs_error_percent"].get<double>(), s["median_abs_error_percent"].get<double>(),
                       s["max_abs_error_percent"].get<double>(), s["worst"].get<std::string>());
  };
  line("fitted figures", r["training"]);
  line("held-out figures", r["held_out"]);
  line("leave-one-out", r["leave_one_out"]);
  out += fmt::format("experiment M (not published; chosen by the fit): {}\n", r["model"]["experiment_m"].dump());
  return out;
}

namespace {

// The old model (timing_model.h) and the model refitted on `figs`, figure by figure.
Json calibration(const std::string& path, const std::vector<Figure>& figs) {
  const FitResult old_model{timing::TimingParams{}, 0, 0};
  const FitResult new_model = fit(figs);
  const bool loo = figs.size() > 4;  // left-out errors need more figures than parameters
  const auto before = judge(figs, old_model, false);
  const auto after = judge(figs, new_model, loo);
  Json rows = Json::array();
  std::vector<double> old_err, new_err, loo_err;
  std::vector<std::string> names;
  for (size_t i = 0; i < figs.size(); ++i) {
    Json r = {{"name", figs[i].name},            {"measured_us", figs[i].published_us},
              {"old_us", before[i].modelled_us}, {"old_error_percent", before[i].error_percent},
              {"new_us", after[i].modelled_us},  {"new_error_percent", after[i].error_percent}};
    if (loo) r["loo_us"] = after[i].loo_modelled_us, r["loo_error_percent"] = after[i].loo_error_percent;
    rows.push_back(r);
    old_err.push_back(before[i].error_percent);
    new_err.push_back(after[i].error_percent);
    loo_err.push_back(after[i].loo_error_percent);
    names.push_back(figs[i].name);
  }
  Json out = {{"tool", "mc_prof"},       {"calibrate", path},
              {"old", {{"params", params_json(old_model.params)}, {"error", spread_json(old_err, names)}}},
              {"new", {{"params", params_json(new_model.params)}, {"error", spread_json(new_err, names)}}},
              {"figures", rows}};
  if (loo) out["new"]["leave_one_out"] = spread_json(loo_err, names);
  return out;
}

void print_spread(const char* what, const Json& s) {
  fmt::print("{}: |error| min {:.1f} % / median {:.1f} % / max {:.1f} % (worst: {})\n", what,
             s["min_abs_error_percent"].get<double>(), s["median_abs_error_percent"].get<double>(),
             s["max_abs_error_percent"].get<double>(), s["worst"].get<std::string>());
}

void print_calibration(const Json& out) {
  const size_t n = out["figures"].size();
  const bool loo = out["new"].contains("leave_one_out");
  fmt::print("mc_prof --calibrate {}: {} figures; old = timing_model.h's constants, new = refitted on the report\n",
             out["calibrate"].get<std::string>(), n);
  if (n < 4)
    fmt::print("note: {} figures for 4 fitted parameters: the ones they do not constrain stay near their old values\n", n);
  fmt::print("{:<32} {:>10} {:>10} {:>7} {:>10} {:>7}{}\n", "figure", "measured", "old", "error", "new", "error",
             loo ? fmt::format(" {:>10} {:>7}", "left out", "error") : "");
  for (const Json& r : out["figures"])
    fmt::print("{:<32} {:>10.1f} {:>10.1f} {:>+6.1f}% {:>10.1f} {:>+6.1f}%{}\n", r["name"].get<std::string>(),
               r["measured_us"].get<double>(), r["old_us"].get<double>(), r["old_error_percent"].get<double>(),
               r["new_us"].get<double>(), r["new_error_percent"].get<double>(),
               loo ? fmt::format(" {:>10.1f} {:>+6.1f}%", r["loo_us"].get<double>(), r["loo_error_percent"].get<double>()) : "");
  print_spread("old", out["old"]["error"]);
  print_spread("new", out["new"]["error"]);
  if (loo) print_spread("new, each figure left out", out["new"]["leave_one_out"]);
  const Json& o = out["old"]["params"];
  const Json& p = out["new"]["params"];
  fmt::print("parameters (timing_model.h), old -> new:\n  kTaskNs {:.2f} -> {:.2f}\n  kCoreDmaBytesPerNs {:.5f} -> {:.5f}\n"
             "  kSharedDramBytesPerNs {:.5f} -> {:.5f}\n  kSerialMacEfficiency {:.6f} -> {:.6f}\n",
             o["task_ns"].get<double>(), p["task_ns"].get<double>(), o["core_dma_bytes_per_ns"].get<double>(),
             p["core_dma_bytes_per_ns"].get<double>(), o["shared_dram_bytes_per_ns"].get<double>(),
             p["shared_dram_bytes_per_ns"].get<double>(), o["serial_mac_efficiency"].get<double>(),
             p["serial_mac_efficiency"].get<double>());
}

// The submit / task split per interface (split.h): the fitted costs beside timing.h's split
// (which stays as it is: only a board's report changes it, by hand, docs/timing-model.md).
Json split_fits(const std::map<std::string, std::vector<SplitRow>>& split) {
  Json out = Json::object();
  for (const auto& [iface, rows] : split) {
    auto f = fit_split(rows);
    if (!f) {
      out[iface] = {{"error", f.error().message}};
      continue;
    }
    out[iface] = {{"submit_us", f->submit_us},     {"task_us", f->task_us}, {"work_us", f->work_us},
                  {"max_residual_percent", f->max_residual_percent},
                  {"model_submit_us", timing::kSubmitNs / 1e3}, {"model_task_us", timing::kTaskNs / 1e3}, {"rows", rows.size()}};
  }
  return out;
}

void print_split(const Json& split) {
  for (const auto& [iface, f] : split.items()) {
    if (f.contains("error")) {
      fmt::print("split {}: {}\n", iface, f["error"].get<std::string>());
      continue;
    }
    fmt::print("split {}: {:.1f} us per submit (model {:.1f}), {:.1f} us per task (model {:.1f}); worst row {:.1f} %\n", iface,
               f["submit_us"].get<double>(), f["model_submit_us"].get<double>(), f["task_us"].get<double>(),
               f["model_task_us"].get<double>(), f["max_residual_percent"].get<double>());
  }
}

}  // namespace

int calibrate(const std::string& path, bool as_json) {
  auto report = read_board_report(path);
  if (!report) {
    fmt::print(stderr, "mc_prof: --calibrate: {}\n", report.error().message);
    return code(Exit::bad_usage);
  }
  const std::vector<Figure>* figs = &report->figures;
  for (const std::string& s : report->skipped) fmt::print(stderr, "mc_prof: --calibrate: skipped {}\n", s);
  for (const Figure& f : *figs)
    if (!(modelled_us(f.setup, {}) > 0)) {
      fmt::print(stderr, "mc_prof: --calibrate: report '{}': figure \"{}\": the planner refuses {} x {} x {} on {} cores\n",
                 path, f.name, f.setup.m, f.setup.k, f.setup.n, f.setup.cores);
      return code(Exit::bad_usage);
    }
  Json out = calibration(path, *figs);
  out["skipped"] = report->skipped;
  out["split"] = split_fits(report->split);
  if (as_json) fmt::print("{}\n", out.dump(2));
  else print_calibration(out), print_split(out["split"]);
  return code(Exit::ok);
}

}  // namespace ork::tools
