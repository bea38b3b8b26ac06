// The timing model (driver/emu/npu/timing.h, timeline.h): the model's structure checked with
// test parameters of round values (a wrong formula fails, whatever the fitted constants are),
// the published sweep reproduced by the shipped constants, the register-to-demand mapping of
// a real task, and the cores' shared DRAM.
#include <chrono>

#include "driver/common/cbuf_limits.h"
#include "driver/emu/npu/task_config.h"
#include "driver/emu/npu/timeline.h"
#include "driver/emu/npu/timing.h"
#include "tests/emu/npu_fixture.h"

namespace ork::emu::testing {
namespace {

constexpr double kNsPerUs = 1000;

// Round parameters, so every expected time below is arithmetic on the model's definition.
TimingParams test_params() {
  TimingParams p;
  p.core_dma_bytes_per_ns = 10;
  p.shared_dram_bytes_per_ns = 15;
  p.submit_ns = 30000;
  p.task_ns = 90000;
  p.serial_mac_efficiency = 0.5;
  return p;
}

TEST(TimingModel, AWeightBoundTileIsFixedPlusWeightsPlusRowBytes) {
  // mc = 4 <= R: 4*2048*2048/1024 = 16384 ns of MACs hide under 4194304 / 10 ns of weights.
  const TaskDemand d = int8_tile_demand(4, 2048, 2048);
  EXPECT_EQ(d.serial_macs, 0.0);
  EXPECT_DOUBLE_EQ(task_alone_ns(d, test_params()), 90000 + 4194304 / 10.0 + (4 * 2048 + 4 * 2048 * 4) / 10.0);
}

TEST(TimingModel, RowsUpToTheResidentBudgetHideTheirMacs) {
  // At 1000 B/ns the weights take 4194.3 ns: 32 rows (R at K = 2048) of MACs, 65536 ns, set the time.
  TimingParams p = test_params();
  p.core_dma_bytes_per_ns = 1000;
  ASSERT_EQ(hw::resident_rows(2048), 32);
  const TaskDemand d = int8_tile_demand(32, 2048, 2048);
  EXPECT_DOUBLE_EQ(compute_ns(d, p), 32.0 * 2048 * 2048 / 1024);
  EXPECT_DOUBLE_EQ(task_alone_ns(d, p), 90000 + 32.0 * 2048 * 2048 / 1024 + (32 * 2048 + 32 * 2048 * 4) / 1000.0);
}

TEST(TimingModel, RowsPastTheResidentBudgetAddTheirMacsAfterTheWeights) {
  // mc = 128 at K = 2048: 32 rows under the weight stream, 96 after it at half the peak rate.
  const TaskDemand d = int8_tile_demand(128, 2048, 2048);
  EXPECT_DOUBLE_EQ(d.macs, 32.0 * 2048 * 2048);
  EXPECT_DOUBLE_EQ(d.serial_macs, 96.0 * 2048 * 2048);
  const double serial = 96.0 * 2048 * 2048 / (1024 * 0.5);
  EXPECT_DOUBLE_EQ(serial_ns(d, test_params()), serial);
  EXPECT_DOUBLE_EQ(task_alone_ns(d, test_params()), 90000 + 4194304 / 10.0 + 128.0 * (2048 + 8192) / 10.0 + serial);
  // The budget follows K: 16 rows at K = 3584 (driver/common/cbuf_limits.h).
  EXPECT_DOUBLE_EQ(int8_tile_demand(64, 3584, 2048).serial_macs, 48.0 * 3584 * 2048);
}

TEST(TimingModel, ASubmitPerTaskPaysTheSubmitEveryTime) {
  const TaskDemand d = int8_tile_demand(4, 2048, 512);
  CoreWork chained{0, {d, d, d}};
  CoreWork per_task = chained;
  per_task.submit_per_task = true;
  const TimingParams p = test_params();
  EXPECT_DOUBLE_EQ(simulate_cores({&chained, 1}, {}, p)[0], p.submit_ns + 3 * task_alone_ns(d, p));
  EXPECT_DOUBLE_EQ(simulate_cores({&per_task, 1}, {}, p)[0], 3 * (p.submit_ns + task_alone_ns(d, p)));
}

// The published M-tile experiment's single-core sweep (oRKLLM/ork-driver:AGENTS.md
// "Weight-DMA amortization", commit 6775334: us per submit of one M-tile, K = 2048): the
// shipped constants reproduce it within 5 % (docs/timing-model.md; the whole fit, held-out
// figures included, is tests/tools/test_mc_prof_fit.cpp).
TEST(TimingModel, ShippedConstantsReproduceThePublishedSweep) {
  struct Point {
    int64_t mc, n;
    double us;
  };
  for (const Point& pt : {Point{4, 2048, 493}, Point{8, 2048, 494}, Point{16, 2048, 501}, Point{31, 2048, 516},
                          Point{31, 512, 228}, Point{31, 2048, 510}, Point{31, 4096, 914}}) {
    const double us = (kSubmitNs + task_alone_ns(int8_tile_demand(pt.mc, 2048, pt.n))) / kNsPerUs;
    EXPECT_LT(std::abs(us - pt.us) / pt.us, 0.05) << "mc=" << pt.mc << " N=" << pt.n << ": model " << us;
  }
}

TEST(TimingModel, DemandComesFromTheRegisters) {
  TaskConfig cfg;
  cfg.type = NpuType::fp16;
  cfg.elem_bits = 16;
  cfg.mc = 8, cfg.kt = 1024, cfg.cols = 48, cfg.b_bytes = 48 * 1024 * 2;
  cfg.fp16_out = true;
  const TaskDemand d = task_demand(cfg);
  EXPECT_EQ(d.weight_bytes, 98304.0);
  EXPECT_EQ(d.feature_bytes, 8.0 * 1024 * 2);
  EXPECT_EQ(d.output_bytes, 8.0 * 48 * 2);  // fp16 output
  EXPECT_EQ(d.macs, 8.0 * 1024 * 48);
  EXPECT_EQ(d.serial_macs, 0.0);  // 8 rows <= R(1024) = 64
  EXPECT_EQ(d.macs_per_cycle, 512.0);
  EXPECT_DOUBLE_EQ(compute_ns(d), 8.0 * 1024 * 48 / 512);
}

// A real task through the emulated PC: the demand is read from the registers it ran with.
TEST(TimingModel, ChainReportsEachTasksDemand) {
  Device dev;
  Bo& A = dev.alloc(64 * 256);
  Bo& B = dev.alloc(256 * 96);
  Bo& C = dev.alloc(64 * 96 * 4);
  TaskSpec t;
  t.mc = 64, t.kt = 256, t.nt = 96;
  t.a = A.iova, t.b = B.iova, t.c = C.iova;
  t.a_surf = t.c_surf = 64;
  k_reduction_banks(t);
  const ChainResult r = run_one(dev, one_task(t));
  ASSERT_EQ(r.status, CoreStatus::ok) << r.message;
  ASSERT_EQ(r.demands.size(), 1u);
  const TaskDemand& d = r.demands[0];
  EXPECT_EQ(d.weight_bytes, 256.0 * 96);
  EXPECT_EQ(d.feature_bytes, 64.0 * 256);
  EXPECT_EQ(d.output_bytes, 64.0 * 96 * 4);
  EXPECT_EQ(d.macs, 64.0 * 256 * 96);
  // Weight-bound (24576 B of weights take longer than 64*256*96 / 1024 = 1536 ns of MACs).
  ASSERT_GT(24576 / kCoreDmaBytesPerNs, 1536.0);
  EXPECT_NEAR(r.modelled_ns, kTaskNs + 24576 / kCoreDmaBytesPerNs + (16384 + 24576) / kCoreDmaBytesPerNs, 1e-6);
}

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
