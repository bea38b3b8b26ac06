// ork_run --bench-orders (docs/execution.md "Measurements"): the three orders side by side
// in one run at board speed. Timing runs: the emulator with the timing-only PC in timed mode
// (each job takes its modelled board time and moves no byte, so the host's work overlaps
// it as on the board; --inflight matmuls at once, and the scheduled order again with one,
// for what asynchronous submission gains), the real disk (optionally capped with --io-rate to balance I/O and device time); scheduled,
// fifo and sequential interleaved, --repeat rounds; outputs not computed, so these runs
// are reported `checked: false` with the reason. Correctness runs: the same plans once on
// the computing device (--device), every output against the CPU reference. Reports
// min / median / max per order, the ratios per round, and the targets.
#pragma once

#include <cstdint>
#include <string>

#include "driver/common/npu_window.h"

namespace ork::tools {

struct BenchArgs {
  std::string path, device_name;
  int64_t tokens = 2, m = 1;
  uint64_t budget_bytes = 0;
  uint64_t window_bytes = hw::kNpuWindowBytes;  // the NPU window the slots may take (lib/exec/exec_plan.h)
  int cores = 3, repeats = 3, inflight = 2;
  double disk_bytes_per_ns = 1.2;  // the plans' disk rate (GB/s); --io-rate replaces it
  double io_rate = 0;              // bytes/s cap of the reader; 0 = the disk as it is
  bool json = false;
};

int run_bench_orders(const BenchArgs& args);

}  // namespace ork::tools
