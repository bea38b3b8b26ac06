// Stacked int4 K-slices (lib/matmul/plan.h; docs/execution.md "Stacked K-slices") on the
// emulated NPU through both kernel interfaces: a plan whose tasks each take the rows and
// columns of several slices gives C bit-exact with the reference on every cell, with no int16
// partial clamped, at decode and a few rows, with and without a narrower last slice (480-wide
// slices), with weights of their own width (every slice full, K padded), and with tasks whose
// columns cross a slice's edge.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "driver/common/int4.h"
#include "driver/emu/kernel/fake_kernel.h"
#include "driver/kmd/kmd.h"
#include "lib/matmul/context.h"
#include "lib/matmul/int4_bound.h"
#include "lib/matmul/plan.h"
#include "lib/matmul/plan_stacked.h"
#include "lib/ref/oracle.h"
#include "tests/support/int4_values.h"

namespace {

using ork::matmul::DType;
using ork::matmul::Plan;

using ork::test::pack_int4_values;

std::vector<int8_t> values(size_t count, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> d(-8, 7);
  std::vector<int8_t> v(count);
  for (auto& x : v) x = static_cast<int8_t>(d(rng));
  return v;
}

struct StackedCase {
  int64_t m, k, n;
  int cores;
};

class Int4Stacked : public ::testing::TestWithParam<ork::driver::KmdKind> {
 protected:
  void SetUp() override {
    auto k = ork::driver::discover(fake_, GetParam());
    ASSERT_TRUE(k.ok()) << k.error().message;
    kmd_ = std::move(*k);
  }
  // Runs the stacked plan of `c` and the reference; returns the plan. `width` 0: 480-wide
  // slices, safe for any int4 weights; else the weights' own width (checked against their
  // bound first), every slice then full, K zero padded. `fewest`: the stacked plan's tasks
  // rebuilt in the fewest tasks (plan_stacked.h) before it runs.
  Plan check(const StackedCase& c, int64_t width = 0, bool fewest = false) {
    const auto a = values(static_cast<size_t>(c.m * c.k), 11), w = values(static_cast<size_t>(c.k * c.n), 12);
    const auto pa = pack_int4_values(a), pw = pack_int4_values(w);
    if (width != 0) {
      auto safe = ork::matmul::int4_safe_slice_k(pw, c.k, c.n);
      EXPECT_TRUE(safe.ok() && *safe >= width) << "K " << c.k;
    }
    auto plan = ork::matmul::make_plan({c.m, c.k, c.n},
                                       {.dtype = DType::int4, .cores = c.cores, .slice_k = width, .stack = true});
    EXPECT_TRUE(plan.ok()) << plan.error().message;
    EXPECT_TRUE(plan->stacked) << c.m << " x " << c.k << " x " << c.n;
    if (fewest) {
      EXPECT_TRUE(ork::matmul::stack_in_fewest_tasks(*plan, c.cores).ok()) << c.k << " x " << c.n;
    }
    std::vector<int32_t> want(static_cast<size_t>(c.m * c.n)), got(want.size(), 0x5a5a5a5a);
    EXPECT_TRUE(ork::ref::matmul_int8(a, w, want, {c.m, c.k, c.n}).ok());
    const uint64_t before = fake_.stats().int4_saturated_cells;
    auto s = run_plan_once_any(*kmd_, *plan, pa.data(), pw.data(), got.data());
    EXPECT_TRUE(s.ok()) << s.error().message;
    EXPECT_EQ(got, want) << c.m << " x " << c.k << " x " << c.n << " on " << c.cores << " cores";
    EXPECT_EQ(fake_.stats().int4_saturated_cells, before);
    return *plan;
  }
  ork::emu::FakeKernel fake_;
  std::unique_ptr<ork::driver::Kmd> kmd_;
};

// Three full slices of 480, no narrower one: one task on one core takes all of them.
TEST_P(Int4Stacked, FullSlicesInOneTaskAreExact) {
  const Plan p = check({1, 1440, 128, 1});
  EXPECT_EQ(p.slices, 3);
  EXPECT_EQ(p.tasks.size(), 1u);
  EXPECT_EQ(p.tasks[0].mc, 3);
  EXPECT_EQ(p.tasks[0].nt, 3 * 128);
}

// A narrower last slice (K = 1500: 480, 480, 480, 64 after padding to 1504) keeps tasks of its
// own; odd K puts rows of A on half bytes.
TEST_P(Int4Stacked, ANarrowerLastSliceIsExact) {
  const Plan p = check({3, 1500, 192, 3});
  EXPECT_EQ(p.slices, 4);
  bool narrow = false;
  for (const auto& t : p.tasks) narrow |= t.kt == 1504 - 3 * 480;
  EXPECT_TRUE(narrow);
  check({1, 1501, 64, 2});
}

// Weights of their own width (640 here, which these weights' bound allows): the slices are
// evened out and K zero padded, so every slice is full and all of them stack, none left on
// tasks of its own. K a multiple of the width (1920: 3 x 640), just past a slice's edge (1921,
// odd: 4 x 512 after padding from 1952), odd and evened without padding (1313: 3 x 448), and
// just past one width (641: 2 x 352).
TEST_P(Int4Stacked, WeightsOfTheirOwnWidthStackEverySlice) {
  struct Want {
    StackedCase c;
    int64_t slices, slice_k;
  };
  for (const Want& x : {Want{{1, 1920, 192, 3}, 3, 640}, Want{{2, 1921, 128, 2}, 4, 512},
                        Want{{3, 1313, 256, 3}, 3, 448}, Want{{4, 641, 64, 1}, 2, 352}}) {
    const Plan p = check(x.c, 640);
    EXPECT_EQ(p.slices, x.slices) << "K " << x.c.k;
    EXPECT_EQ(p.slice_k, x.slice_k) << "K " << x.c.k;
    EXPECT_EQ(p.kp, x.slices * x.slice_k) << "K " << x.c.k;
    for (const auto& t : p.tasks) {
      EXPECT_EQ(t.kt, p.slice_k) << "K " << x.c.k;
      EXPECT_EQ(t.mc % p.mp, 0) << "K " << x.c.k;
    }
    // One pass over all the slices' columns: as few tasks as 8192 columns a task allow,
    // per core of the split.
    EXPECT_LE(static_cast<int64_t>(p.tasks.size()),
              x.c.cores * ((x.slices * p.np + ork::matmul::kMaxColumnsPerTask - 1) / ork::matmul::kMaxColumnsPerTask))
        << "K " << x.c.k;
  }
}

// 3 x 3008 columns of C' on one core: two tasks (71 and 70 blocks of 64 columns), the edge
// between them inside slice 1, so each takes the rows of two slices.
TEST_P(Int4Stacked, TasksAcrossASliceEdgeAreExact) {
  const Plan p = check({2, 1440, 3008, 1});
  ASSERT_EQ(p.tasks.size(), 2u);
  for (const auto& t : p.tasks) {
    EXPECT_LE(t.nt, ork::matmul::kMaxColumnsPerTask);
    EXPECT_EQ(t.mc, 2 * p.mp);
  }
}

// The fewest-task layout (plan_stacked.h), as the board plan runs 7B's down and gate/up at
// decode: 5 slices of 640 x 7168 columns (35840) in 5 tasks on 3 cores (2, 2, 1) or on 2
// (3, 2), and 7 x 8192 (57344) in 7 on 3 (3, 2, 2), where make_plan's split takes 6, 6 and 9;
// tasks of unequal widths whose columns cross slices' edges.
TEST_P(Int4Stacked, FewestTasksLayoutIsExact) {
  for (const StackedCase& c :
       {StackedCase{2, 3200, 7168, 3}, StackedCase{3, 3200, 7168, 2}, StackedCase{1, 4480, 8192, 3}}) {
    const Plan p = check(c, 640, true);
    const int64_t cols = p.slices * p.np;
    EXPECT_EQ(static_cast<int64_t>(p.tasks.size()), (cols + ork::matmul::kMaxColumnsPerTask - 1) / ork::matmul::kMaxColumnsPerTask);
    auto split = ork::matmul::make_plan({c.m, c.k, c.n}, {.dtype = DType::int4, .cores = c.cores, .slice_k = 640, .stack = true});
    ASSERT_TRUE(split.ok());
    EXPECT_LT(p.tasks.size(), split->tasks.size()) << c.k << " x " << c.n;
  }
}

// The 7B FFN's down at decode, narrowed (K = 18944 in 480-wide slices: 39 full and one of
// 224): 40 slices' columns of 128 in a few tasks instead of one per slice and core.
TEST_P(Int4Stacked, ManySlicesAtDecodeAreExact) {
  const Plan p = check({1, 18944, 128, 3});
  auto plain = ork::matmul::make_plan({1, 18944, 128}, {.dtype = DType::int4, .cores = 3});
  ASSERT_TRUE(plain.ok());
  EXPECT_LT(p.tasks.size(), plain->tasks.size());
}

// Where a plan does not stack: another dtype is refused by name; one full slice, or rows of
// every full slice past the resident-row budget (R = 128 at 480), give the plain plan.
TEST(Int4StackedPlan, StacksOnlyWhatFits) {
  auto int8 = ork::matmul::make_plan({1, 8192, 64}, {.dtype = DType::int8, .stack = true});
  ASSERT_FALSE(int8.ok());
  EXPECT_NE(int8.error().message.find("only int4"), std::string::npos) << int8.error().message;
  for (auto [m, k] : {std::pair<int64_t, int64_t>{1, 700}, {43, 1440}, {128, 18944}}) {
    auto p = ork::matmul::make_plan({m, k, 64}, {.dtype = DType::int4, .stack = true});
    ASSERT_TRUE(p.ok()) << p.error().message;
    EXPECT_FALSE(p->stacked) << m << " x " << k;
  }
  auto fits = ork::matmul::make_plan({42, 1440, 64}, {.dtype = DType::int4, .stack = true});  // 3 x 42 <= 128
  ASSERT_TRUE(fits.ok());
  EXPECT_TRUE(fits->stacked);
}

INSTANTIATE_TEST_SUITE_P(BothInterfaces, Int4Stacked,
                         ::testing::Values(ork::driver::KmdKind::rknpu, ork::driver::KmdKind::rocket),
                         [](const auto& info) { return std::string(ork::driver::kmd_kind_name(info.param)); });

}  // namespace
