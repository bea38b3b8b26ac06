// The emulated NPU's cores on a time line: each core is its own timeline (busy until its
// last job ends), and all cores share one DRAM bandwidth limit (timing.h
// kSharedDramBytesPerNs). The fake kernel (driver/emu/kernel) asks this what a submit costs:
// rknpu reports it as hw_elapse_time, and in timed mode a job completes only then.
#pragma once

#include <array>
#include <chrono>
#include <span>
#include <vector>

#include "driver/common/result.h"
#include "driver/emu/npu/pc.h"
#include "driver/emu/npu/timing.h"

namespace ork::emu {

// ORK_EMU_TIMING: unset, "" or "fast" -> false (results at once, modelled time reported);
// "timed" -> true (completion waits for the modelled time). Anything else: -EINVAL naming
// the value. lib/api reads it where it creates the emulator's kernel.
Result<bool> timed_from_env();
// The same setting as tools report it: "fast", "timed", or "invalid" (the device's open
// names the bad value).
const char* timing_name_from_env();

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

// Adds one PC kick (run_chain's result) to a core's work: its completed tasks' demands,
// or, from an executor that reports time but no demands, its modelled_ns as given.
void add_chain(CoreWork& work, const ChainResult& chain);

// Runs every work item from its start (ns) to its end, concurrently: each pays
// p.submit_ns (once, or per task with submit_per_task), then per task p.task_ns, its DRAM
// phase (weight + feature + output bytes, no faster than the MACs and the core's DMA allow:
// timing.h) and its MACs past the resident rows (serial_ns). Cores in a DRAM phase at the
// same moment split p.shared_dram_bytes_per_ns fairly (water-filling: a core that needs
// less leaves the rest to the others). Returns each item's end (ns). Pure.
std::vector<double> simulate_cores(std::span<const CoreWork> work, std::span<const double> start_ns,
                                   const TimingParams& p = {});

class NpuTimeline {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr int kCores = 3;

  explicit NpuTimeline(TimingParams p = {}) : p_(p) {}

  struct Slot {
    double elapsed_ns = 0;  // first core's start to last core's end: hw_elapse_time
    Clock::time_point done; // when the job completes (timed mode; now in fast mode)
  };
  // fast: the submit alone (every core idle, all starting together); nothing is kept.
  // timed: each core starts at max(now, the end of its previous job), and keeps its end.
  // DRAM is shared among the cores of this submit; jobs of other submits overlapping in
  // time do not slow it (docs/timing-model.md, "What the model leaves out").
  // `submitted`: when the job reached the kernel (the emulator's own compute time overlaps
  // the modelled time instead of adding to it); default: now.
  Slot schedule(std::span<const CoreWork> work, bool timed, Clock::time_point submitted = {});

  const TimingParams& params() const { return p_; }

 private:
  TimingParams p_;
  std::array<Clock::time_point, kCores> busy_until_{};
};

}  // namespace ork::emu
