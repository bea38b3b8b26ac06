// The NPU's timing model: what one task costs, from its shape (rows, K, columns, bytes).
// Every constant is here, with its source; docs/timing-model.md has the calibration table
// (model vs the published M-tile experiment) and what the model leaves out. Units: ns and
// bytes (bytes per ns = GB/s). Cores sharing the DRAM limit are core_sim.h. Read by the
// emulated NPU (driver/emu/npu: a task's demand from its registers, task_config.h; the
// cores' timelines, timeline.h) and by the board projection (lib/exec: a plan's tasks),
// which therefore does not depend on the emulator.
#pragma once

#include <cstdint>

namespace ork::timing {

// ---- Constants (one place) ------------------------------------------------------------

// NPU core clock: 1 GHz (Jas's posts, from the TRM; docs/hardware.md section 5). The
// published M-tile experiment (oRKLLM/ork-driver:AGENTS.md "Weight-DMA amortization",
// commit 6775334) pinned the NPU at 1.0 GHz ("the max") for its sweeps.
inline constexpr double kNpuClockHz = 1e9;
// MACs per cycle per core: 1024 int8, 512 fp16 (Jas's posts from the TRM, docs/hardware.md
// section 5: 2 TOPS int8 / 1 TFLOPS fp16 per core at 1 GHz). int4: no public figure for
// this path; modelled at the int8 rate (an assumption, docs/timing-model.md).
inline constexpr double kInt8MacsPerCycle = 1024;
inline constexpr double kFp16MacsPerCycle = 512;
inline constexpr double kInt4MacsPerCycle = 1024;
// The four fitted parameters (docs/timing-model.md "The fit": least squares in log error
// over the training figures of the published M-tile experiment, tools/mc_prof/model_fit.cpp;
// `mc_prof --published` refits them and test_mc_prof_fit checks they are what the fit gives).
//
// One core's DMA from DRAM: every M-tile re-streams its K x N weights at this rate (the
// experiment's own estimate: "~4 MB at N = 2048 in ~380 us ~ 11 GB/s").
inline constexpr double kCoreDmaBytesPerNs = 11.56503;
// Fixed cost of every task (PC fetch of the regcmd, CNA/CORE/DPU set-up, completion): with
// kSubmitNs, 125.2 us per M-tile submit (the experiment's own reading: "~130 us fixed").
inline constexpr double kTaskNs = 95169.92;
// All cores together pull at most this from DRAM (multi-core contention). The fit lands
// inside RK3588's measured 17-22 GB/s sequential CPU bandwidth .. 34 GB/s theoretical
// (Turing Pi RK1 benchmarks; 4 x 16-bit LPDDR4x at 4267 MT/s, Radxa forum); no NPU-side
// figure is published (docs/hardware.md section 6).
inline constexpr double kSharedDramBytesPerNs = 25.96448;
// Rows past the resident-row budget R(kt) (driver/common/cbuf_limits.h: 32 at K = 2048,
// 16 at K = 3584) stream their activations; their MACs do not hide under the weight stream
// and run after it at this fraction of the peak rate. Rows <= R: MACs under the weights
// (the sweep's rows 4..31 are nearly free).
inline constexpr double kSerialMacEfficiency = 0.927781;
// The submit (ioctl, PC kick, completion interrupt, waiter wake-up): librknnrt's ~30 us
// per-call floor for a 1x32x16 matmul (airockchip/rknn-toolkit2#154; docs/hardware.md
// section 6).
// Not fitted: in the published figures every submit has one task, so only the sum
// kSubmitNs + kTaskNs is seen (an assumption, docs/timing-model.md).
inline constexpr double kSubmitNs = 30000;

struct TimingParams {
  double clock_hz = kNpuClockHz;
  double core_dma_bytes_per_ns = kCoreDmaBytesPerNs;
  double shared_dram_bytes_per_ns = kSharedDramBytesPerNs;
  double submit_ns = kSubmitNs;
  double task_ns = kTaskNs;
  double serial_mac_efficiency = kSerialMacEfficiency;
};

// ---- One task ---------------------------------------------------------------------------

// What one task asks of its core and of DRAM.
struct TaskDemand {
  double weight_bytes = 0;   // the weight DMA (WEIGHT_SIZE0): K x N, re-streamed every task
  double feature_bytes = 0;  // mc rows x K elements
  double output_bytes = 0;   // mc rows x N columns x output element bytes
  double macs = 0;           // MACs of the first min(mc, R(kt)) rows: under the weight stream
  double serial_macs = 0;    // MACs of the rows past R(kt): after the weight stream
  double macs_per_cycle = kInt8MacsPerCycle;

  double dram_bytes() const { return weight_bytes + feature_bytes + output_bytes; }
};

// One task's shape, whoever knows it (the registers, or a plan): mc rows of kt, `cols`
// output columns. The one place that splits the MACs at the resident-row budget.
struct TileShape {
  int64_t mc = 0, kt = 0, cols = 0;
  double weight_bytes = 0;    // the weight DMA's length
  double row_bytes = 0;       // one feature row
  double out_elem_bytes = 4;  // one output element
  double macs_per_cycle = kInt8MacsPerCycle;
};
TaskDemand make_demand(const TileShape& t);

// An int8 M-tile of mc rows x K x N (int32 out), as the planner's full-K tasks run it.
TaskDemand int8_tile_demand(int64_t mc, int64_t k, int64_t n);

// How the parts overlap (the published M-tile experiment): rows up to R are nearly free
// (mc = 4 -> 31 adds 23 us at K = N = 2048), so their MACs run under the weight stream; the
// feature and output bytes add on top at the same bandwidth; the rows past R add their MACs
// after it. So a task alone on DRAM at `bw` bytes/ns takes
//   task_ns + max(weight / bw, compute) + (feature + output) / bw + serial.
double compute_ns(const TaskDemand& d, const TimingParams& p = {});
double serial_ns(const TaskDemand& d, const TimingParams& p = {});
double task_alone_ns(const TaskDemand& d, const TimingParams& p = {});

}  // namespace ork::timing
