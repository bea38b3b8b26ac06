// The timing model (driver/emu/npu/timing.h, timeline.h): model outputs at docs/hardware.md 10.1,
// checked as numbers (they are arithmetic, not wall-clock timings), the register-to-demand
// mapping of a real task, and the cores' shared DRAM.
#include <chrono>

#include "driver/emu/npu/task_config.h"
#include "driver/emu/npu/timeline.h"
#include "driver/emu/npu/timing.h"
#include "tests/emu/npu_fixture.h"

namespace ork::emu::testing {
namespace {

constexpr double kNsPerUs = 1000;

struct SeedPoint {
  uint32_t mc, n;
  double seed_us;   // the experiment, single core, K = 2048, one task per submit
  double model_ns;  // what the model gives (timing.h; docs/timing-model.md table)
};

// The model's figures, written out: 118.1 us + max(K*N / 11.32, mc*K*N / 1024) +
// (mc*K + 4*mc*N) / 11.32 ns.
constexpr SeedPoint kSeedSweep[] = {
    {4, 2048, 493, 492239.929}, {8, 2048, 494, 495858.304}, {16, 2048, 501, 503095.053},
    {31, 2048, 516, 516663.958}, {31, 512, 228, 221947.350}, {31, 2048, 510, 516663.958},
    {31, 4096, 914, 909619.435},
};

TEST(TimingModel, ReproducesThePublishedSweepWithinTenPercent) {
  for (const SeedPoint& p : kSeedSweep) {
    const double ns = seed_submit_ns(p.mc, 2048, p.n);
    EXPECT_NEAR(ns, p.model_ns, 0.001) << "mc=" << p.mc << " N=" << p.n;
    EXPECT_LT(std::abs(ns / kNsPerUs - p.seed_us) / p.seed_us, 0.10)
        << "mc=" << p.mc << " N=" << p.n << ": model " << ns / kNsPerUs << " us, seed " << p.seed_us;
  }
}

TEST(TimingModel, ConstantsAddUp) {
  EXPECT_DOUBLE_EQ(kSubmitNs + kTaskNs, kSeedSubmitFixedNs);
  EXPECT_DOUBLE_EQ(kInt8MacsPerCycle, 2 * kFp16MacsPerCycle);
}

TEST(TimingModel, BankLimitTileIsComputeBound) {
  // mc = 128 (mg_max*64 at K = 2048): 128*2048*2048/1024 = 524288 ns of MACs exceed the
  // 370521 ns weight stream, so the MACs set the time: 118100 + 524288 + 1310720/11.32 (feature 262144 B + output 1048576 B).
  EXPECT_NEAR(seed_submit_ns(128, 2048, 2048), 118100 + 524288 + 1310720 / 11.32, 0.001);
  EXPECT_NEAR(seed_submit_ns(128, 2048, 2048), 758175.986, 0.001);
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
  // Weight-bound: 24576 B / 11.32 = 2171 ns of weights > 64*256*96 / 1024 = 1536 ns of MACs.
  EXPECT_NEAR(r.modelled_ns, kTaskNs + 24576 / 11.32 + (16384 + 24576) / 11.32, 1e-6);
}

TaskDemand weights_only(double bytes) {
  TaskDemand d;
  d.weight_bytes = bytes;
  return d;
}

TEST(Timeline, OneCoreAloneIsSubmitPlusItsTasks) {
  const CoreWork w{0, {weights_only(1e6), weights_only(2e6)}};
  const auto ends = simulate_cores({&w, 1}, {});
  EXPECT_NEAR(ends[0], kSubmitNs + 2 * kTaskNs + 3e6 / kCoreDmaBytesPerNs, 1e-6);
}

TEST(Timeline, ThreeCoresShareTheDramLimit) {
  // 3 x 11.32 GB/s > 20 GB/s: each core streams at 20/3 GB/s.
  std::vector<CoreWork> w{{0, {weights_only(1e6)}}, {1, {weights_only(1e6)}}, {2, {weights_only(1e6)}}};
  for (double end : simulate_cores(w, {})) EXPECT_NEAR(end, kSubmitNs + kTaskNs + 1e6 / (20.0 / 3), 1e-6);
  // Two cores: 2 x 11.32 > 20: 10 GB/s each.
  w.pop_back();
  for (double end : simulate_cores(w, {})) EXPECT_NEAR(end, kSubmitNs + kTaskNs + 1e6 / 10.0, 1e-6);
}

TEST(Timeline, AComputeBoundCoreLeavesBandwidthToTheOthers) {
  TaskDemand slow = weights_only(1e6);
  slow.macs = 5e5 * 1024;  // 500 us of MACs: the core needs only 1e6 B / 5e5 ns = 2 B/ns
  std::vector<CoreWork> w{{0, {slow}}, {1, {weights_only(1e6)}}, {2, {weights_only(1e6)}}};
  const auto ends = simulate_cores(w, {});
  EXPECT_NEAR(ends[0], kSubmitNs + kTaskNs + 5e5, 1e-6);
  EXPECT_NEAR(ends[1], kSubmitNs + kTaskNs + 1e6 / 9.0, 1e-6);  // (20 - 2) / 2 each
  EXPECT_NEAR(ends[2], ends[1], 1e-9);
}

TEST(Timeline, ALateCoreSharesOnlyWhileBothStream) {
  // Core 1 starts when core 0 has streamed alone at 11.32 B/ns for 100 us; from then both get
  // 10 B/ns until core 0 finishes; then core 1 is alone again.
  const double lead = 100000;
  std::vector<CoreWork> w{{0, {weights_only(4e6)}}, {1, {weights_only(4e6)}}};
  const double starts[] = {0, lead};
  const auto ends = simulate_cores(w, starts);
  const double fixed = kSubmitNs + kTaskNs;
  // Core 1 pays its fixed cost first (core 0 streams alone meanwhile), then both stream.
  const double both_from = lead + fixed;
  const double left0 = 4e6 - kCoreDmaBytesPerNs * lead;
  const double end0 = both_from + left0 / 10.0;
  const double left1 = 4e6 - 10.0 * (end0 - both_from);
  EXPECT_NEAR(ends[0], end0, 1e-6);
  EXPECT_NEAR(ends[1], end0 + left1 / kCoreDmaBytesPerNs, 1e-6);
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
