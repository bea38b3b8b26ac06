// group_plan: every group a K-slice of the group width, tasks per core in slice order, a
// shorter tail slice, and the weights' layout independent of M and cores.
#include <gtest/gtest.h>

#include "lib/quant/group_plan.h"

namespace ork::quant {
namespace {

TEST(GroupPlan, SlicesAreGroups) {
  for (int cores = 1; cores <= 3; ++cores) {
    auto p = group_plan(17, 200, 70, 64, cores);  // groups [0,64) [64,128) [128,192) [192,200)
    ASSERT_TRUE(p.ok()) << p.error().message;
    auto base = matmul::make_plan(matmul::Shape{17, 64, 70}, matmul::PlanOptions{.cores = cores});
    ASSERT_TRUE(base.ok());
    EXPECT_EQ(p->slices, 4);
    EXPECT_EQ(p->slice_k, 64);
    EXPECT_EQ(p->kp, 224);  // 3 x 64 + the tail of 8 padded to 32
    EXPECT_EQ(p->shape.k, 200);
    ASSERT_EQ(p->tasks.size(), base->tasks.size() * 4);
    int last_core = 0;
    int64_t last_slice = -1;
    for (const matmul::Task& t : p->tasks) {
      ASSERT_GE(t.core, last_core);  // grouped by core
      if (t.core != last_core) last_slice = -1;
      ASSERT_GE(t.slice, last_slice);  // slices in order within a core
      last_core = t.core;
      last_slice = t.slice;
      EXPECT_EQ(t.k0, t.slice * 64);
      EXPECT_EQ(t.kt, t.slice == 3 ? 32 : 64);
    }
    // Weight layout: K, N and the width only (the upload uses M = 1, one core).
    auto layout = group_plan(1, 200, 70, 64, 1);
    EXPECT_EQ(layout->b_bytes(), p->b_bytes());
    EXPECT_EQ(p->b_bytes(), 224 * 96);  // np = 70 padded to 96
  }
}

TEST(GroupPlan, RefusesWidthsTheNpuCannotSlice) {
  EXPECT_FALSE(group_plan(1, 100, 8, 16, 1).ok());
  EXPECT_FALSE(group_plan(1, 100, 8, 48 + 1, 1).ok());
  EXPECT_TRUE(group_plan(1, 100, 8, 32, 1).ok());
}

}  // namespace
}  // namespace ork::quant
