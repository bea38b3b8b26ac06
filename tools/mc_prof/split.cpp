// The submit / task split experiment (split.h).
#include "tools/mc_prof/split.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include <fmt/format.h>

#include "driver/common/json.h"
#include "driver/timing/timing_model.h"
#include "lib/api/device.h"
#include "lib/matmul/context.h"
#include "lib/matmul/run.h"
#include "lib/ref/random.h"
#include "tools/common/spread.h"
#include "tools/mc_prof/model_fit.h"

namespace ork::tools {
namespace {

constexpr int64_t kRows = 4, kK = 512, kN = 64;  // one task: an M-tile of 4 rows, K and N whole

// One way of running the work: its device time (kernel) or wall time, µs. `known` false
// when the kernel reports none (rocket).
Result<double> timed(driver::Kmd& kmd, const std::vector<driver::SubmitDesc>& descs, bool& known) {
  double device = 0;
  const auto t0 = std::chrono::steady_clock::now();
  for (const driver::SubmitDesc& d : descs) {
    auto r = kmd.submit(d);
    if (!r) return r.error();
    if (r->hw_elapse_ns < 0) known = false;
    device += static_cast<double>(r->hw_elapse_ns) / 1e3;
  }
  const double wall = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
  return known ? device : wall;
}

Result<SplitRow> measure_one(ork_device& dev, int tasks, int warmup, int repeat) {
  const int64_t m = kRows * tasks;
  const auto w = ref::random_int8(static_cast<size_t>(kK * kN), 2);
  auto weights = matmul::ResidentWeights::create(*dev.backend->kmd(), matmul::DType::int8, kK, kN, w.data());
  if (!weights) return weights.error();
  auto ctx = matmul::build_call_context(*dev.backend->kmd(), **weights, m, {.cores = 1, .mc_cap = kRows});
  if (!ctx) return ctx.error();
  const auto& groups = (*ctx)->groups;
  if (groups.size() != 1 || groups[0].submit.desc().jobs.size() != 1 || groups[0].submit.desc().jobs[0].tasks.size() != static_cast<size_t>(tasks))
    return make_error(-EINVAL, fmt::format("the plan of {} x {} x {} in M-tiles of {} is not {} tasks on one core", m, kK, kN,
                                           kRows, tasks));
  const driver::SubmitDesc& chained = groups[0].submit.desc();
  std::vector<driver::SubmitDesc> separate;
  for (const driver::TaskRef& t : chained.jobs[0].tasks) {  // the same tasks, one a submit
    driver::SubmitDesc d = chained;
    d.jobs[0].tasks = {t};
    separate.push_back(std::move(d));
  }
  std::vector<double> c, s;
  bool known = true;
  for (int i = 0; i < warmup + repeat; ++i) {
    auto tc = timed(*dev.backend->kmd(), {chained}, known);
    if (!tc) return make_error(tc.error().code, fmt::format("N = {}, chained: {}", tasks, tc.error().message));
    auto ts = timed(*dev.backend->kmd(), separate, known);
    if (!ts) return make_error(ts.error().code, fmt::format("N = {}, separate: {}", tasks, ts.error().message));
    if (i >= warmup) c.push_back(*tc), s.push_back(*ts);
  }
  return SplitRow{tasks, m, kK, kN, spread(std::move(c)).median, spread(std::move(s)).median, known ? "kernel" : "wall", repeat};
}

}  // namespace

Result<std::vector<SplitRow>> measure_split(ork_device& dev, int warmup, int repeat) {
  if (dev.backend->kmd() == nullptr) return make_error(-EINVAL, "--split needs an NPU device (rknpu, rocket or emu), not cpu");
  if (repeat < 1) return make_error(-EINVAL, "--split needs --repeat >= 1");
  std::vector<SplitRow> rows;
  for (int n : kSplitTasks) {
    auto r = measure_one(dev, n, warmup, repeat);
    if (!r) return r.error();
    rows.push_back(*r);
  }
  return rows;
}

Result<SplitFit> fit_split(const std::vector<SplitRow>& rows) {
  std::vector<const SplitRow*> use;
  for (const SplitRow& r : rows)
    if (r.device_source == "kernel") use.push_back(&r);
  if (use.size() < 2 || use.front()->tasks == use.back()->tasks)
    return make_error(-EINVAL, "the split fit needs device times (\"device_source\": \"kernel\") at two sizes of N or more");
  // separate - chained = (N - 1) s: least squares through the origin in (N - 1).
  double xy = 0, xx = 0;
  for (const SplitRow* r : use) xy += (r->tasks - 1) * (r->separate_us - r->chained_us), xx += double(r->tasks - 1) * (r->tasks - 1);
  SplitFit f;
  f.submit_us = xx > 0 ? xy / xx : 0;
  // chained - s = N (task + work): through the origin in N.
  double ny = 0, nn = 0;
  for (const SplitRow* r : use) ny += r->tasks * (r->chained_us - f.submit_us), nn += double(r->tasks) * r->tasks;
  const double per_task = ny / nn;
  // The model's work per task: one task's modelled time less its two fixed costs.
  const Setup one{kRows, kK, kN, 1, kRows, true, false};
  f.work_us = modelled_us(one, timing::TimingParams{}) - (timing::kSubmitNs + timing::kTaskNs) / 1e3;
  f.task_us = per_task - f.work_us;
  for (const SplitRow* r : use) {
    const double c = f.submit_us + r->tasks * per_task, s = r->tasks * (f.submit_us + per_task);
    f.max_residual_percent = std::max({f.max_residual_percent, std::abs(c - r->chained_us) / r->chained_us * 100,
                                       std::abs(s - r->separate_us) / r->separate_us * 100});
  }
  return f;
}

nlohmann::json split_row_json(const SplitRow& r, const std::string& interface) {
  return {{"interface", interface}, {"tasks", r.tasks},   {"m", r.m}, {"k", r.k}, {"n", r.n}, {"cores", 1}, {"mc_cap", kRows},
          {"chained_us", r.chained_us}, {"separate_us", r.separate_us}, {"device_source", r.device_source},
          {"repeat", r.repeat}};
}

Result<SplitRow> split_row_from_json(const nlohmann::json& j) {
  if (!j.is_object()) return make_error(-EINVAL, fmt::format("a split row must be an object, got {}", j.dump()));
  SplitRow r;
  auto tasks = json_int<int>(j, "tasks", 1, 4095, "split row");
  if (!tasks) return tasks.error();
  r.tasks = *tasks;
  for (auto [key, dst] : {std::pair{"chained_us", &r.chained_us}, std::pair{"separate_us", &r.separate_us}}) {
    if (!j.contains(key) || !j[key].is_number() || !(j[key].get<double>() > 0) || !std::isfinite(j[key].get<double>()))
      return make_error(-EINVAL, fmt::format("split row N = {}: \"{}\" must be a positive time", r.tasks, key));
    *dst = j[key].get<double>();
  }
  r.device_source = j.contains("device_source") && j["device_source"].is_string() ? j["device_source"].get<std::string>() : "";
  return r;
}

}  // namespace ork::tools
