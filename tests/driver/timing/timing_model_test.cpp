// The timing model (driver/timing/timing_model.h): the model's structure checked with test
// parameters of round values (a wrong formula fails, whatever the fitted constants are), and
// the published sweep reproduced by the shipped constants. Cores sharing DRAM:
// core_sim_test.cpp; a task's demand read from its registers: tests/driver/emu/npu.
#include <gtest/gtest.h>

#include "driver/common/cbuf_limits.h"
#include "driver/timing/core_sim.h"
#include "driver/timing/timing_model.h"
#include "tests/driver/timing/timing_params.h"

namespace ork::timing::testing {
namespace {


constexpr double kNsPerUs = 1000;

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
// figures included, is tests/tools/mc_prof/model_fit_test.cpp).
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

}  // namespace
}  // namespace ork::timing::testing
