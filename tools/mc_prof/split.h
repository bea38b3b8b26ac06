// The experiment that separates the fixed cost per submit from the fixed cost per task
// (docs/timing-model.md "Per submit or per task"): the same work, N tasks of one small
// matmul on one core, run as one chained submit of N tasks and as N submits of one task
// each, at N = 1, 3, 12, 48. On the model (timing.h) a chained submit takes
// submit + N (task + work) and N single submits N (submit + task + work), so
//   separate - chained = (N - 1) submit,   chained = submit + N (task + work):
// the two lines give both costs (fit_split). `mc_prof --split` measures the rows on a device
// (the board runbook runs it, docs/board.md); `mc_prof --calibrate REPORT` fits them.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "driver/common/result.h"

struct ork_device;

namespace ork::tools {

inline constexpr int kSplitTasks[] = {1, 3, 12, 48};

struct SplitRow {
  int tasks = 0;                    // N
  int64_t m = 0, k = 0, n = 0;      // the matmul: M = 4 N rows in M-tiles of 4 (mc_cap), one task each
  double chained_us = 0;            // one submit of the N tasks (median over the repeats)
  double separate_us = 0;           // N submits of one task each, summed (median)
  std::string device_source;        // "kernel" (rknpu hw_elapse_time) or "wall" (rocket)
  int repeat = 0;
};

// The rows on `device` (an NPU: rknpu, rocket or emu), one core, `warmup` + `repeat` rounds.
Result<std::vector<SplitRow>> measure_split(ork_device& device, int warmup, int repeat);

struct SplitFit {
  double submit_us = 0;      // per submit, from separate - chained
  double task_us = 0;        // per task, chained's slope less the model's work per task
  double work_us = 0;        // the model's work per task (timing.h, fixed costs left out)
  double max_residual_percent = 0;  // the worst row's |model - measured| / measured, refitted
};

// Least squares over the rows (at least two sizes of N, device times). -EINVAL otherwise.
Result<SplitFit> fit_split(const std::vector<SplitRow>& rows);

nlohmann::json split_row_json(const SplitRow& r, const std::string& interface);
// A report's "split" rows of one interface (an object per row, as split_row_json writes).
Result<SplitRow> split_row_from_json(const nlohmann::json& j);

}  // namespace ork::tools
