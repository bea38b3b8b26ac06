// sparse_check's cell sampler, locator and generator (tools/sparse_check/cells.h), against
// plans from the real planner (lib/matmul/plan.h). The host reference: host_ref_test.cpp;
// the verifier: verify_test.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <vector>

#include <fmt/format.h>

#include "tools/sparse_check/cells.h"
#include "tests/tools/sparse_check/plan_of.h"

namespace ork::tools {
namespace {

using testing::plan_of;

std::set<Cell> as_set(const std::vector<Cell>& v) { return {v.begin(), v.end()}; }

TEST(SparseCells, EveryTileEdgeMeetsEveryTaskEdge) {
  // K = 2048: mc = 128 (docs/hardware.md 10.2); N = 96 on 3 cores: columns 0..31 / 32..63 / 64..95.
  const matmul::Plan plan = plan_of(200, 2048, 96, 3);
  ASSERT_EQ(plan.mc, 128);
  const auto cells = as_set(sample_cells(plan, 0, 0, 1));
  const std::vector<int64_t> rows_a = {0, 1, 126, 127}, rows_b = {128, 129, 198, 199};
  for (int core = 0; core < 3; ++core) {
    const std::vector<int64_t> cols = {32 * core, 32 * core + 1, 32 * core + 30, 32 * core + 31};
    for (const auto* rows : {&rows_a, &rows_b})
      for (int64_t r : *rows)
        for (int64_t c : cols) EXPECT_TRUE(cells.count({r, c})) << r << "," << c;
  }
  // Only task corners with no random part: exactly 2 tiles x 3 tasks x 16 cells.
  EXPECT_EQ(cells.size(), 2u * 3u * 16u);
}

TEST(SparseCells, PaddedColumnsAreClippedToTheRealEdge) {
  const matmul::Plan plan = plan_of(5, 64, 40, 1);  // N = 40 runs as 64 padded columns
  const auto cells = sample_cells(plan, 50, 4, 9);
  const auto set = as_set(cells);
  for (const Cell& c : cells) {
    EXPECT_GE(c.m, 0);
    EXPECT_LT(c.m, 5);
    EXPECT_GE(c.n, 0);
    EXPECT_LT(c.n, 40);
  }
  EXPECT_TRUE(set.count({4, 39}));
  EXPECT_TRUE(set.count({0, 38}));
  EXPECT_TRUE(std::is_sorted(cells.begin(), cells.end()));
  EXPECT_EQ(set.size(), cells.size()) << "no duplicates";
}

TEST(SparseCells, KSliceTilesAreCovered) {
  // K = 6144 > 4096: two K-slices of 3072 with 32-row tiles (the resident-row budget).
  const matmul::Plan plan = plan_of(40, 6144, 64, 1);
  ASSERT_EQ(plan.slices, 2);
  ASSERT_EQ(plan.mc, 32);
  const auto set = as_set(sample_cells(plan, 0, 0, 1));
  for (int64_t r : {0, 1, 30, 31, 32, 33, 38, 39})
    for (int64_t c : {0, 1, 62, 63}) EXPECT_TRUE(set.count({r, c})) << r << "," << c;
}

TEST(SparseCells, SampleIsSeededAndAddsRandomCells) {
  const matmul::Plan plan = plan_of(1000, 512, 512, 3);
  const auto a = sample_cells(plan, 500, 4, 42), b = sample_cells(plan, 500, 4, 42);
  const auto c = sample_cells(plan, 500, 4, 43), edges_only = sample_cells(plan, 0, 0, 42);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  EXPECT_GT(a.size(), edges_only.size() + 400);
}

TEST(SparseCells, LocatorNamesTileTaskAndCore) {
  const matmul::Plan plan = plan_of(200, 2048, 96, 3);
  CellLocator where(plan);
  const CellHome h = where.locate({128, 64});
  EXPECT_EQ(h.m_tile, 1);
  EXPECT_EQ(h.n_task, 2);
  EXPECT_EQ(h.core, 2);
  EXPECT_EQ(CellLocator::describe(h), "M-tile 1 (rows 128..199), N-task 2 (cols 64..95), core 2");
  EXPECT_EQ(where.locate({127, 31}).core, 0);
  EXPECT_EQ(CellLocator::describe(where.locate({500, 0})), "no task of the plan covers it");
}

TEST(SparseCells, SplitMixMatchesTheReferenceSequence) {
  SplitMix64 rng(0);  // splitmix64.c (Vigna): first outputs for seed 0
  EXPECT_EQ(rng.next(), 0xE220A8397B1DCDAFull);
  EXPECT_EQ(rng.next(), 0x6E789E6AA1B965F4ull);
  std::vector<int8_t> v(13);
  SplitMix64 fill_rng(5);
  fill_random_int8(v, fill_rng);
  SplitMix64 check(5);
  const uint64_t w0 = check.next(), w1 = check.next();
  for (int i = 0; i < 8; ++i) EXPECT_EQ(v[i], static_cast<int8_t>(w0 >> (8 * i)));
  for (int i = 8; i < 13; ++i) EXPECT_EQ(v[i], static_cast<int8_t>(w1 >> (8 * (i - 8))));
}

}  // namespace
}  // namespace ork::tools
