// The timeline (driver/emu/npu/timeline.h): the cores' shared DRAM, a stand-in executor's
// time taken as given, fast and timed modes, and the environment that picks the mode.
#include <chrono>

#include "driver/emu/npu/timeline.h"
#include "driver/emu/npu/timing.h"
#include "tests/driver/emu/npu/npu_fixture.h"
#include "tests/driver/emu/npu/timing_params.h"

namespace ork::emu::testing {
namespace {

TaskDemand weights_only(double bytes) {
  TaskDemand d;
  d.weight_bytes = bytes;
  return d;
}

// Timeline tests use test_params(): 10 B/ns per core, 15 B/ns shared, 30 + 90 us fixed.
constexpr double kFixed = 30000 + 90000;

TEST(Timeline, OneCoreAloneIsSubmitPlusItsTasks) {
  const CoreWork w{0, {weights_only(1e6), weights_only(2e6)}};
  const auto ends = simulate_cores({&w, 1}, {}, test_params());
  EXPECT_NEAR(ends[0], 30000 + 2 * 90000 + 3e6 / 10, 1e-6);
}

TEST(Timeline, ThreeCoresShareTheDramLimit) {
  // 3 x 10 B/ns > 15: each core streams at 5.
  std::vector<CoreWork> w{{0, {weights_only(1e6)}}, {1, {weights_only(1e6)}}, {2, {weights_only(1e6)}}};
  for (double end : simulate_cores(w, {}, test_params())) EXPECT_NEAR(end, kFixed + 1e6 / 5.0, 1e-6);
  // Two cores: 2 x 10 > 15: 7.5 each.
  w.pop_back();
  for (double end : simulate_cores(w, {}, test_params())) EXPECT_NEAR(end, kFixed + 1e6 / 7.5, 1e-6);
  // The shipped constants: three cores cannot stream faster than the shared limit together.
  w.push_back({2, {weights_only(1e6)}});
  const double shared = std::min(kSharedDramBytesPerNs / 3, kCoreDmaBytesPerNs);
  for (double end : simulate_cores(w, {})) EXPECT_NEAR(end, kSubmitNs + kTaskNs + 1e6 / shared, 1e-6);
}

TEST(Timeline, AComputeBoundCoreLeavesBandwidthToTheOthers) {
  TaskDemand slow = weights_only(1e6);
  slow.macs = 5e5 * 1024;  // 500 us of MACs: the core needs only 1e6 B / 5e5 ns = 2 B/ns
  std::vector<CoreWork> w{{0, {slow}}, {1, {weights_only(1e6)}}, {2, {weights_only(1e6)}}};
  const auto ends = simulate_cores(w, {}, test_params());
  EXPECT_NEAR(ends[0], kFixed + 5e5, 1e-6);
  EXPECT_NEAR(ends[1], kFixed + 1e6 / 6.5, 1e-6);  // (15 - 2) / 2 each
  EXPECT_NEAR(ends[2], ends[1], 1e-9);
}

TEST(Timeline, MacsAfterTheWeightsLeaveDramToTheOthers) {
  // Core 0's 100 us of serial MACs come after its weights: core 1 streams alone meanwhile.
  TaskDemand a = weights_only(1e6);
  a.serial_macs = 1e5 * 1024 * 0.5;  // 100 us at half the peak rate
  std::vector<CoreWork> w{{0, {a}}, {1, {weights_only(2e6)}}};
  const auto ends = simulate_cores(w, {}, test_params());
  // Both stream at 7.5 until core 0's 1e6 B are done (133333 ns), then core 1 alone at 10.
  const double both = 1e6 / 7.5;
  EXPECT_NEAR(ends[0], kFixed + both + 1e5, 1e-6);
  EXPECT_NEAR(ends[1], kFixed + both + (2e6 - 1e6) / 10, 1e-6);
}

TEST(Timeline, ALateCoreSharesOnlyWhileBothStream) {
  // Core 1 starts when core 0 has streamed alone at 10 B/ns for 100 us; from then both get
  // 7.5 B/ns until core 0 finishes; then core 1 is alone again.
  const double lead = 100000;
  std::vector<CoreWork> w{{0, {weights_only(4e6)}}, {1, {weights_only(4e6)}}};
  const double starts[] = {0, lead};
  const auto ends = simulate_cores(w, starts, test_params());
  // Core 1 pays its fixed cost first (core 0 streams alone meanwhile), then both stream.
  const double both_from = lead + kFixed;
  const double left0 = 4e6 - 10.0 * lead;
  const double end0 = both_from + left0 / 7.5;
  const double left1 = 4e6 - 7.5 * (end0 - both_from);
  EXPECT_NEAR(ends[0], end0, 1e-6);
  EXPECT_NEAR(ends[1], end0 + left1 / 10.0, 1e-6);
}

TEST(Timeline, AStandInExecutorsTimeIsTakenAsGiven) {
  CoreWork w{1, {}};
  ChainResult r;
  r.tasks_done = 2;
  r.modelled_ns = 2000;  // no demands: a stand-in
  add_chain(w, r);
  EXPECT_EQ(w.given_ns, 2000.0);
  EXPECT_EQ(simulate_cores({&w, 1}, {})[0], 2000.0);
}

TEST(Timeline, FastModeEverySubmitStandsAlone) {
  NpuTimeline tl;
  const CoreWork w{0, {weights_only(1e6)}};
  const double alone = kSubmitNs + kTaskNs + 1e6 / kCoreDmaBytesPerNs;
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
  const CoreWork w{2, {weights_only(1e6)}};
  const double alone = kSubmitNs + kTaskNs + 1e6 / kCoreDmaBytesPerNs;
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
  const CoreWork other{0, {weights_only(1e6)}};
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
