// The emulated NPU's timing model: what one task costs, from the registers it ran with.
// Every constant is here, with its source; docs/timing-model.md has the calibration table
// (model vs docs/hardware.md 10) and what the model leaves out. Units: ns and bytes (bytes per ns =
// GB/s). The multi-core timelines and the shared DRAM limit are in timeline.h.
#pragma once

#include <cstdint>

namespace ork::emu {

struct TaskConfig;  // task_config.h

// ---- Constants (one place) ------------------------------------------------------------

// NPU core clock: 1 GHz (JAS post 1, from the TRM; docs/hardware.md section 5). The M-tile
// experiment pinned the NPU at 1.0 GHz ("the max") for its sweeps.
inline constexpr double kNpuClockHz = 1e9;
// MACs per cycle per core: 1024 int8, 512 fp16 (JAS posts 1 and 3 from the TRM,
// docs/hardware.md 5: 2 TOPS int8 / 1 TFLOPS fp16 per core at 1 GHz). int4: no public figure for
// this path; modelled at the int8 rate (an assumption, docs/timing-model.md).
inline constexpr double kInt8MacsPerCycle = 1024;
inline constexpr double kFp16MacsPerCycle = 512;
inline constexpr double kInt4MacsPerCycle = 1024;
// One core's DMA from DRAM: 11.32 GB/s. Least-squares fit of the M-tile experiment's 7 one-core
// points (K = 2048: mc = 4/8/16/31 at N = 2048, N = 512/2048/4096 at mc = 31) to
// fixed + (weight + feature + output bytes) / bandwidth; the experiment's own estimate: "~4 MB
// at N = 2048 in ~380 us ~ 11 GB/s = DRAM bandwidth".
inline constexpr double kCoreDmaBytesPerNs = 11.32;
// The same fit's fixed cost of one submit in the experiment (one task per submit): 118.1 us. Split
// (an assumption, see docs/timing-model.md) into the submit (ioctl, PC kick, completion
// interrupt, waiter wake-up: librknnrt's ~30 us per-call floor for a 1x32x16 matmul,
// rknn-toolkit2 #154, docs/hardware.md section 6) and the rest, paid by every task.
inline constexpr double kSeedSubmitFixedNs = 118100;
inline constexpr double kSubmitNs = 30000;
inline constexpr double kTaskNs = kSeedSubmitFixedNs - kSubmitNs;  // 88.1 us
// All cores together cannot pull more than 20 GB/s from DRAM: the middle of the 17-22 GB/s
// sequential bandwidth measured on RK3588 (Turing Pi RK1 benchmarks; theoretical peak
// 4 x 16-bit LPDDR4x at 4267 MT/s = 34 GB/s, Radxa forum "Rock 5A lpddr4x memory
// bandwidth"). No NPU-side figure exists (docs/hardware.md section 6).
inline constexpr double kSharedDramBytesPerNs = 20.0;

struct TimingParams {
  double clock_hz = kNpuClockHz;
  double core_dma_bytes_per_ns = kCoreDmaBytesPerNs;
  double shared_dram_bytes_per_ns = kSharedDramBytesPerNs;
  double submit_ns = kSubmitNs;
  double task_ns = kTaskNs;
};

// ---- One task ---------------------------------------------------------------------------

// What one task asks of its core and of DRAM.
struct TaskDemand {
  double weight_bytes = 0;   // the weight DMA (WEIGHT_SIZE0): K x N, re-streamed every task
  double feature_bytes = 0;  // mc rows x K elements
  double output_bytes = 0;   // mc rows x N columns x output element bytes
  double macs = 0;           // mc x K x N
  double macs_per_cycle = kInt8MacsPerCycle;

  double dram_bytes() const { return weight_bytes + feature_bytes + output_bytes; }
};

TaskDemand task_demand(const TaskConfig& cfg);

// How the parts overlap (docs/hardware.md 10.1): rows are nearly free (mc = 4 -> 31 adds 23 us at
// K = N = 2048), so the MACs run under the weight stream; the feature and output bytes add
// on top at the same bandwidth (0.85 us per row measured vs 0.90 modelled). So a task alone
// on DRAM at `bw` bytes/ns takes
//   task_ns + max(weight / bw, compute) + (feature + output) / bw.
double compute_ns(const TaskDemand& d, const TimingParams& p = {});
double task_alone_ns(const TaskDemand& d, const TimingParams& p = {});

// The M-tile experiment's unit: one submit of one task (an M-tile of mc rows, K, N, int8)
// alone on one core: submit_ns + task_alone_ns.
double seed_submit_ns(uint32_t mc, uint32_t k, uint32_t n, const TimingParams& p = {});

}  // namespace ork::emu
