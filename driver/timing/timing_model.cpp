// The per-task timing model (timing_model.h): bytes and MACs from the task's shape, and the
// time of a task alone on one core.
#include "driver/timing/timing_model.h"

#include <algorithm>

#include "driver/common/cbuf_limits.h"

namespace ork::timing {

TaskDemand make_demand(const TileShape& t) {
  TaskDemand d;
  d.weight_bytes = t.weight_bytes;
  d.feature_bytes = static_cast<double>(t.mc) * t.row_bytes;
  d.output_bytes = static_cast<double>(t.mc) * t.cols * t.out_elem_bytes;
  const int64_t resident = std::min(t.mc, hw::resident_rows(t.kt));
  d.macs = static_cast<double>(resident) * t.kt * t.cols;
  d.serial_macs = static_cast<double>(t.mc - resident) * t.kt * t.cols;
  d.macs_per_cycle = t.macs_per_cycle;
  return d;
}

double compute_ns(const TaskDemand& d, const TimingParams& p) {
  return d.macs / d.macs_per_cycle / p.clock_hz * 1e9;
}

double serial_ns(const TaskDemand& d, const TimingParams& p) {
  return d.serial_macs / (d.macs_per_cycle * p.serial_mac_efficiency) / p.clock_hz * 1e9;
}

double task_alone_ns(const TaskDemand& d, const TimingParams& p) {
  const double bw = p.core_dma_bytes_per_ns;
  const double weights = std::max(d.weight_bytes / bw, compute_ns(d, p));
  return p.task_ns + weights + (d.feature_bytes + d.output_bytes) / bw + serial_ns(d, p);
}

TaskDemand int8_tile_demand(int64_t mc, int64_t k, int64_t n) {
  return make_demand({.mc = mc, .kt = k, .cols = n, .weight_bytes = static_cast<double>(k) * n,
                      .row_bytes = static_cast<double>(k), .out_elem_bytes = 4, .macs_per_cycle = kInt8MacsPerCycle});
}

}  // namespace ork::timing
