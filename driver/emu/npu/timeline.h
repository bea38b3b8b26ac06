// The emulated NPU's cores on a time line: each core is its own timeline (busy until its
// last job ends), and all cores share one DRAM bandwidth limit (the simulation and the
// model are driver/timing: core_sim.h, timing_model.h). The fake kernel (driver/emu/kernel)
// asks this what a submit costs: rknpu reports it as hw_elapse_time, and in timed mode a
// job completes only then.
#pragma once

#include <array>
#include <chrono>
#include <span>
#include <vector>

#include "driver/common/result.h"
#include "driver/emu/npu/pc.h"
#include "driver/timing/core_sim.h"

namespace ork::emu {

// ORK_EMU_TIMING: unset, "" or "fast" -> false (results at once, modelled time reported);
// "timed" -> true (completion waits for the modelled time). Anything else: -EINVAL naming
// the value. lib/api reads it where it creates the emulator's kernel.
Result<bool> timed_from_env();
// The same setting as tools report it: "fast", "timed", or "invalid" (the device's open
// names the bad value).
const char* timing_name_from_env();

// Adds one PC kick (run_chain's result) to a core's work: its completed tasks' demands,
// or, from an executor that reports time but no demands, its modelled_ns as given.
void add_chain(timing::CoreWork& work, const ChainResult& chain);

class NpuTimeline {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr int kCores = 3;

  explicit NpuTimeline(timing::TimingParams p = {}) : p_(p) {}

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
  Slot schedule(std::span<const timing::CoreWork> work, bool timed, Clock::time_point submitted = {});

  const timing::TimingParams& params() const { return p_; }

 private:
  timing::TimingParams p_;
  std::array<Clock::time_point, kCores> busy_until_{};
};

}  // namespace ork::emu
