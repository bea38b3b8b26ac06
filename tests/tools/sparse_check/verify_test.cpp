// sparse_check's verifier (tools/sparse_check/verify.h): a correct C passes, a wrong row at
// a tile edge is caught and located by M-tile, N-task and core, and a full check counts
// every mismatch but keeps twenty.
#include <gtest/gtest.h>

#include <vector>

#include <fmt/format.h>

#include "tools/sparse_check/cells.h"
#include "tests/tools/sparse_check/plan_of.h"
#include "tools/sparse_check/host_ref.h"
#include "tools/sparse_check/verify.h"

namespace ork::tools {
namespace {

using testing::plan_of;

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
