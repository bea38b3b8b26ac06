// The timeline (driver/emu/npu/timeline.h): a stand-in executor's time taken as given, fast
// and timed modes, and the environment that picks the mode. The cores' shared DRAM itself:
// tests/driver/timing/core_sim_test.cpp.
#include <chrono>

#include "driver/emu/npu/timeline.h"
#include "driver/timing/timing_model.h"
#include "tests/driver/emu/npu/npu_fixture.h"

namespace ork::emu::testing {
namespace {

timing::TaskDemand weights_only(double bytes) {
  timing::TaskDemand d;
  d.weight_bytes = bytes;
  return d;
}

TEST(Timeline, AStandInExecutorsTimeIsTakenAsGiven) {
  timing::CoreWork w{1, {}};
  ChainResult r;
  r.tasks_done = 2;
  r.modelled_ns = 2000;  // no demands: a stand-in
  add_chain(w, r);
  EXPECT_EQ(w.given_ns, 2000.0);
  EXPECT_EQ(timing::simulate_cores({&w, 1}, {})[0], 2000.0);
}

TEST(Timeline, FastModeEverySubmitStandsAlone) {
  NpuTimeline tl;
  const timing::CoreWork w{0, {weights_only(1e6)}};
  const double alone = timing::kSubmitNs + timing::kTaskNs + 1e6 / timing::kCoreDmaBytesPerNs;
  EXPECT_NEAR(tl.schedule({&w, 1}, false).elapsed_ns, alone, 1e-6);
  EXPECT_NEAR(tl.schedule({&w, 1}, false).elapsed_ns, alone, 1e-6);
}

// The submit instants are given (schedule's `submitted`), not read from the host's clock: the
// modelled timeline is checked exactly, however slow the host (under qemu-user three calls
// can take longer than the modelled job, and a test on "now" would see an idle core).
TEST(Timeline, TimedModeQueuesOnABusyCore) {
  using Clock = NpuTimeline::Clock;
  const auto at = [](Clock::time_point t0, double ns) {
    return t0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double, std::nano>(ns));
  };
  const auto ns_between = [](Clock::time_point a, Clock::time_point b) {
    return std::chrono::duration<double, std::nano>(b - a).count();
  };
  NpuTimeline tl;
  const timing::CoreWork w{2, {weights_only(1e6)}};
  const double alone = timing::kSubmitNs + timing::kTaskNs + 1e6 / timing::kCoreDmaBytesPerNs;
  const Clock::time_point t0 = Clock::time_point{} + std::chrono::seconds(100);  // any fixed instant
  const auto first = tl.schedule({&w, 1}, true, t0);
  EXPECT_NEAR(first.elapsed_ns, alone, 1e-6);
  EXPECT_NEAR(ns_between(t0, first.done), alone, 2.0);  // ns rounding of the clock
  // Core 2 is still busy half-way through the first job: the second starts when it ends.
  const auto half = at(t0, alone / 2);
  const auto second = tl.schedule({&w, 1}, true, half);
  EXPECT_NEAR(second.elapsed_ns, alone, 1e-6);
  EXPECT_NEAR(ns_between(first.done, second.done), alone, 2.0);
  // Core 0 is idle at the same instant: no queueing.
  const timing::CoreWork other{0, {weights_only(1e6)}};
  const auto third = tl.schedule({&other, 1}, true, half);
  EXPECT_NEAR(ns_between(half, third.done), alone, 2.0);
  EXPECT_LT(third.done, second.done);
  // Core 2 again, submitted after both its jobs ended: idle, no queueing either.
  const auto later = at(t0, 5 * alone);
  const auto fourth = tl.schedule({&w, 1}, true, later);
  EXPECT_NEAR(ns_between(later, fourth.done), alone, 2.0);
  // Fast mode never queues and keeps nothing: done is the submit instant itself.
  const auto fast = tl.schedule({&w, 1}, false, later);
  EXPECT_EQ(fast.done, later);
  EXPECT_NEAR(fast.elapsed_ns, alone, 1e-6);
}

TEST(Timeline, EnvironmentPicksTheMode) {
  ::unsetenv("ORK_EMU_TIMING");
  EXPECT_FALSE(*timed_from_env());
  ::setenv("ORK_EMU_TIMING", "timed", 1);
  EXPECT_TRUE(*timed_from_env());
  ::setenv("ORK_EMU_TIMING", "fast", 1);
  EXPECT_FALSE(*timed_from_env());
  ::setenv("ORK_EMU_TIMING", "slow", 1);
  auto bad = timed_from_env();
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code, -EINVAL);
  EXPECT_EQ(bad.error().message, "ORK_EMU_TIMING='slow': expected 'fast' or 'timed'");
  ::unsetenv("ORK_EMU_TIMING");
}

}  // namespace
}  // namespace ork::emu::testing
