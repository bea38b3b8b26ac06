// sparse_check's cell sampler, locator, generator and host reference, against plans from
// the real planner (lib/matmul/plan.h).
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <vector>

#include <fmt/format.h>

#include "tools/sparse_check/cells.h"
#include "tools/sparse_check/host_ref.h"
#include "tools/sparse_check/verify.h"

namespace ork::tools {
namespace {

matmul::Plan plan_of(int64_t m, int64_t k, int64_t n, int cores, int64_t mc_cap = 0) {
  matmul::PlanOptions o;
  o.cores = cores;
  o.mc_cap = mc_cap;
  Result<matmul::Plan> p = matmul::make_plan({m, k, n}, o);
  EXPECT_TRUE(p.ok()) << (p.ok() ? "" : p.error().message);
  return p.ok() ? *p : matmul::Plan{};
}

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
  // K = 6144 > 4096: K-slices of 2048 with 32-row tiles (the resident-row budget).
  const matmul::Plan plan = plan_of(40, 6144, 64, 1);
  ASSERT_EQ(plan.slices, 3);
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

TEST(HostRef, DotAndRowAgreeExactly) {
  const int64_t m = 3, k = 5, n = 4;
  const std::vector<int8_t> a = {1, -2, 3, -4, 5, 127, -128, 0, 1, 2, -1, -1, -1, -1, -1};
  std::vector<int8_t> w(k * n);
  for (int64_t i = 0; i < k * n; ++i) w[i] = static_cast<int8_t>(i * 13 - 100);
  // Row 0, column 0 by hand: w[x][0] = -100, -48, 4, 56, 108.
  EXPECT_EQ(host_dot(a, w, k, n, 0, 0), 1 * -100 + -2 * -48 + 3 * 4 + -4 * 56 + 5 * 108);
  std::vector<int64_t> row(n);
  for (int64_t r = 0; r < m; ++r) {
    host_row(a, w, k, n, r, row);
    for (int64_t c = 0; c < n; ++c) EXPECT_EQ(row[c], host_dot(a, w, k, n, r, c));
  }
}

TEST(HostRef, GatheredColumnsGiveTheSameDots) {
  const int64_t m = 4, k = 200, n = 70;
  std::vector<int8_t> a(m * k), w(k * n);
  SplitMix64 rng(3);
  fill_random_int8(a, rng);
  fill_random_int8(w, rng);
  const WColumns cols(w, k, n, {0, 5, 31, 32, 69});
  for (int64_t r = 0; r < m; ++r)
    for (int64_t c : {0, 5, 31, 32, 69}) EXPECT_EQ(cols.dot(a, r, c), host_dot(a, w, k, n, r, c));
  const std::vector<int8_t> big_a(140000, -128), big_w(140000 * 2, -128);
  EXPECT_EQ(WColumns(big_w, 140000, 2, {1}).dot(big_a, 0, 1), int64_t{140000} * 16384);
}

TEST(HostRef, SumsPastTheInt32RangeStayExact) {
  const int64_t k = 140000, n = 2;  // 140000 * 16384 > 2^31: the int32 chunks must flush
  const std::vector<int8_t> a(k, -128);
  const std::vector<int8_t> w(k * n, -128);
  std::vector<int64_t> row(n);
  host_row(a, w, k, n, 0, row);
  EXPECT_EQ(row[0], int64_t{140000} * 16384);
  EXPECT_EQ(row[1], int64_t{140000} * 16384);
  EXPECT_EQ(host_dot(a, w, k, n, 0, 1), int64_t{140000} * 16384);
}

// A correct C from the host reference, for the verify tests to corrupt.
struct Fixture {
  int64_t m, k, n;
  std::vector<int8_t> a, w;
  std::vector<int32_t> c;
  Fixture(int64_t m_, int64_t k_, int64_t n_) : m(m_), k(k_), n(n_), a(m * k), w(k * n), c(m * n) {
    SplitMix64 rng(77);
    fill_random_int8(a, rng);
    fill_random_int8(w, rng);
    std::vector<int64_t> row(n);
    for (int64_t i = 0; i < m; ++i) {
      host_row(a, w, k, n, i, row);
      for (int64_t j = 0; j < n; ++j) c[i * n + j] = static_cast<int32_t>(row[j]);
    }
  }
  Problem problem() const { return {a, w, m, k, n}; }
};

TEST(Verify, CorrectOutputPasses) {
  Fixture f(130, 2048, 96);
  Outcome full, sampled;
  verify_full(f.problem(), f.c, false, full);
  EXPECT_EQ(full.checked, 130 * 96);
  EXPECT_EQ(full.mismatches, 0);
  const matmul::Plan plan = plan_of(130, 2048, 96, 3);
  const auto cells = sample_cells(plan, 100, 4, 1);
  verify_cells(f.problem(), cells, f.c, false, sampled);
  EXPECT_EQ(sampled.checked, static_cast<int64_t>(cells.size()));
  EXPECT_EQ(sampled.mismatches, 0);
}

TEST(Verify, AWrongRowAtATileEdgeIsCaughtAndLocated) {
  // Row 128 is the first row of the second M-tile at K = 2048 (mc = 128): the M-tile experiment's
  // failure mode (mc + 1 rows miscompute). Corrupt the whole row, as a bad tile would.
  Fixture f(130, 2048, 96);
  for (int64_t j = 0; j < f.n; ++j) f.c[128 * f.n + j] += 1;
  const matmul::Plan plan = plan_of(130, 2048, 96, 3);
  Outcome out;
  verify_cells(f.problem(), sample_cells(plan, 0, 0, 1), f.c, false, out);
  EXPECT_EQ(out.mismatches, 12);  // 3 tasks x 4 edge columns on row 128
  ASSERT_EQ(out.first.size(), 12u);
  const Mismatch& first = out.first[0];
  EXPECT_EQ(first.cell, (Cell{128, 0}));
  EXPECT_EQ(first.got, first.expected + 1);
  EXPECT_EQ(format_mismatch(first, CellLocator(plan)),
            fmt::format("mismatch C[128][0]: M-tile 1 (rows 128..129), N-task 0 (cols 0..31), "
                        "core 0: expected {}, got {}", first.expected, first.expected + 1));
}

TEST(Verify, FullCheckCountsEveryMismatchButKeepsTwenty) {
  Fixture f(40, 64, 64);
  for (int64_t i = 0; i < 25; ++i) f.c[i * f.n + 63] = INT32_MIN;
  Outcome out;
  verify_full(f.problem(), f.c, false, out);
  EXPECT_EQ(out.checked, 40 * 64);
  EXPECT_EQ(out.mismatches, 25);
  ASSERT_EQ(out.first.size(), kMaxReportedMismatches);
  EXPECT_EQ(out.first[19].cell, (Cell{19, 63}));
  EXPECT_EQ(out.first[19].got, INT32_MIN);
}

}  // namespace
}  // namespace ork::tools
