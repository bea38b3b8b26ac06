// The per-task timing model (timing.h): bytes and MACs from the task's registers, and the
// time of a task alone on one core.
#include "driver/emu/npu/timing.h"

#include <algorithm>

#include "driver/emu/npu/task_config.h"

namespace ork::emu {

TaskDemand task_demand(const TaskConfig& cfg) {
  TaskDemand d;
  // The weight DMA reads WEIGHT_SIZE0 bytes (the columns the DPU writes, whole atoms).
  d.weight_bytes = cfg.b_bytes;
  d.feature_bytes = static_cast<double>(cfg.mc) * cfg.row_bytes();
  d.output_bytes = static_cast<double>(cfg.mc) * cfg.cols * cfg.out_bytes();
  d.macs = static_cast<double>(cfg.mc) * cfg.kt * cfg.cols;
  switch (cfg.type) {
    case NpuType::int8: d.macs_per_cycle = kInt8MacsPerCycle; break;
    case NpuType::fp16: d.macs_per_cycle = kFp16MacsPerCycle; break;
    case NpuType::int4: d.macs_per_cycle = kInt4MacsPerCycle; break;
  }
  return d;
}

double compute_ns(const TaskDemand& d, const TimingParams& p) {
  return d.macs / d.macs_per_cycle / p.clock_hz * 1e9;
}

double task_alone_ns(const TaskDemand& d, const TimingParams& p) {
  const double bw = p.core_dma_bytes_per_ns;
  const double weights = std::max(d.weight_bytes / bw, compute_ns(d, p));
  return p.task_ns + weights + (d.feature_bytes + d.output_bytes) / bw;
}

double seed_submit_ns(uint32_t mc, uint32_t k, uint32_t n, const TimingParams& p) {
  TaskDemand d;
  d.weight_bytes = static_cast<double>(k) * n;
  d.feature_bytes = static_cast<double>(mc) * k;
  d.output_bytes = static_cast<double>(mc) * n * 4;  // int32 output
  d.macs = static_cast<double>(mc) * k * n;
  return p.submit_ns + task_alone_ns(d, p);
}

}  // namespace ork::emu
