// Cores sharing the DRAM limit (driver/timing/core_sim.h), with test parameters of round
// values: one core alone, three sharing, a compute-bound core leaving bandwidth to the
// others, the MACs past the resident rows off DRAM, a late core. The emulator's timelines
// around it (fast and timed modes, a stand-in's time): tests/driver/emu/npu/timeline_test.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "driver/timing/core_sim.h"
#include "tests/driver/timing/timing_params.h"

namespace ork::timing::testing {
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

}  // namespace
}  // namespace ork::timing::testing
