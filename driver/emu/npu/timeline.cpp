// The emulated NPU's cores on a time line (timeline.h): ORK_EMU_TIMING, a PC kick's work,
// and each core's busy-until time around the shared simulation (driver/timing/core_sim.h).
#include "driver/emu/npu/timeline.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <limits>
#include <string>

#include "driver/common/env.h"

namespace ork::emu {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

}  // namespace

Result<bool> timed_from_env() { return env_choice("ORK_EMU_TIMING", "fast", "timed", false); }

const char* timing_name_from_env() {
  Result<bool> timed = timed_from_env();
  return !timed ? "invalid" : *timed ? "timed" : "fast";
}

void add_chain(timing::CoreWork& work, const ChainResult& chain) {
  if (chain.demands.size() < chain.tasks_done) {  // a stand-in: no demands, its own time
    work.given_ns = std::max(work.given_ns, 0.0) + chain.modelled_ns;
    return;
  }
  work.tasks.insert(work.tasks.end(), chain.demands.begin(), chain.demands.end());
}

NpuTimeline::Slot NpuTimeline::schedule(std::span<const timing::CoreWork> work, bool timed,
                                        Clock::time_point submitted) {
  const Clock::time_point now = submitted == Clock::time_point{} ? Clock::now() : submitted;
  std::vector<double> starts(work.size(), 0.0);
  if (timed) {
    for (size_t i = 0; i < work.size(); ++i) {
      const auto& busy = busy_until_[static_cast<size_t>(std::clamp(work[i].core, 0, kCores - 1))];
      if (busy > now) starts[i] = std::chrono::duration<double, std::nano>(busy - now).count();
    }
  }
  const auto ends = timing::simulate_cores(work, starts, p_);
  Slot slot;
  double first = kInf, last = 0;
  for (size_t i = 0; i < work.size(); ++i) {
    first = std::min(first, starts[i]);
    last = std::max(last, ends[i]);
  }
  slot.elapsed_ns = work.empty() ? 0 : last - first;
  slot.done = now;
  if (timed) {
    auto at = [&](double ns) { return now + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double, std::nano>(ns)); };
    for (size_t i = 0; i < work.size(); ++i)
      busy_until_[static_cast<size_t>(std::clamp(work[i].core, 0, kCores - 1))] = at(ends[i]);
    slot.done = at(last);
  }
  return slot;
}

}  // namespace ork::emu
