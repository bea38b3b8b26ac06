// The per-task timing model (timing.h): bytes and MACs from the task's registers, and the
// time of a task alone on one core.
#include "driver/emu/npu/timing.h"

#include <algorithm>

#include "driver/common/cbuf_limits.h"
#include "driver/emu/npu/task_config.h"

namespace ork::emu {

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

TaskDemand task_demand(const TaskConfig& cfg) {
  double mpc = kInt8MacsPerCycle;
  switch (cfg.type) {
    case NpuType::int8: mpc = kInt8MacsPerCycle; break;
    case NpuType::fp16: mpc = kFp16MacsPerCycle; break;
    case NpuType::int4: mpc = kInt4MacsPerCycle; break;
  }
  // The weight DMA reads WEIGHT_SIZE0 bytes (the columns the DPU writes, whole atoms).
  return make_demand({.mc = cfg.mc, .kt = cfg.kt, .cols = cfg.cols, .weight_bytes = static_cast<double>(cfg.b_bytes),
                      .row_bytes = static_cast<double>(cfg.row_bytes()),
                      .out_elem_bytes = static_cast<double>(cfg.out_bytes()), .macs_per_cycle = mpc});
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

}  // namespace ork::emu
