// Cores on a time line sharing one DRAM limit: each core runs its tasks one after another
// (timing_model.h prices each), and cores in a DRAM phase at the same moment split
// kSharedDramBytesPerNs. The emulated NPU's timelines (driver/emu/npu/timeline.h) and the
// board projection's plan timing (lib/exec) both run this one simulation.
#pragma once

#include <span>
#include <vector>

#include "driver/timing/timing_model.h"

namespace ork::timing {

// One core's share of a submit (or one rocket job): its tasks in order.
struct CoreWork {
  int core = 0;
  std::vector<TaskDemand> tasks;
  // >= 0: a stand-in chain executor's own modelled time (fake kernel tests), taken as the
  // core's whole busy time instead of submit + tasks.
  double given_ns = -1;
  // true: every task is its own submit (the published experiment's layout: one submit per
  // M-tile); false: one submit for all of them (libork's chained command lists).
  bool submit_per_task = false;
};

// Runs every work item from its start (ns) to its end, concurrently: each pays
// p.submit_ns (once, or per task with submit_per_task), then per task p.task_ns, its DRAM
// phase (weight + feature + output bytes, no faster than the MACs and the core's DMA allow:
// timing.h) and its MACs past the resident rows (serial_ns). Cores in a DRAM phase at the
// same moment split p.shared_dram_bytes_per_ns fairly (water-filling: a core that needs
// less leaves the rest to the others). Returns each item's end (ns). Pure.
std::vector<double> simulate_cores(std::span<const CoreWork> work, std::span<const double> start_ns,
                                   const TimingParams& p = {});

}  // namespace ork::timing
