// The executor running fused groups of several K-slices (lib/exec/fusion.h fused_pieces):
// int4 models whose q/k/v and gate/up take K in two slices, each member's slices read to
// their places in the group's slot, run as one matmul of K x the members' N summed (stacked
// at M = 1, a C per slice at M = 128, in one row piece or in two); on emu and emu-rocket,
// every tensor resident or streamed, every output bit for bit the CPU reference's and the
// unfused run's.
// A member run alone (one matmul in flight; the cpu backend gathering its slices) too. And a
// member's slice read to another member's place makes the run differ from the reference.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <utility>

#include "lib/api/device.h"
#include "lib/exec/executor.h"
#include "lib/exec/fusion.h"
#include "lib/exec/synthetic.h"
#include "tests/lib/exec/cached_model.h"
#include "tests/lib/exec/exec_util.h"
#include "tests/lib/exec/layer_plans.h"
#include "tests/lib/exec/sliced_model.h"

namespace ork::exec {
namespace {

using testing::sliced_model;
using testing::sliced_options;
using SlicedModel = testing::SlicedModel;

// The plan's fused groups whose members are in several pieces (K-slices).
int sliced_groups(const Fusion& f) {
  int n = 0;
  for (size_t t = 0; t < f.first.size(); ++t) n += f.fused(t) && f.offset[t] == 0 && f.pieces[t].size() > 1 ? 1 : 0;
  return n;
}

struct SlicesCase {
  int64_t width;
  int layers;
  int64_t m;
  bool streamed;
};

class ExecutorFusedSlices : public ::testing::TestWithParam<SlicesCase> {};

TEST_P(ExecutorFusedSlices, EqualTheReferenceAndTheUnfusedRun) {
  const SlicesCase& c = GetParam();
  SlicedModel* s = sliced_model(c.width, c.layers);
  ASSERT_NE(s, nullptr);
  const PlanOptions o = sliced_options(s->model, c.m, c.streamed, true);
  auto plan = build_plan(s->model, o);
  ASSERT_TRUE(plan) << plan.error().message;
  ASSERT_GE(sliced_groups(plan->fusion), 1);  // the case must fuse a group of several slices
  for (bool pin : plan->pinned) EXPECT_EQ(pin, !c.streamed);
  std::vector<testing::DeviceRun> fused, unfused;
  ASSERT_NO_FATAL_FAILURE(testing::plan_and_run_on_both(s->path, s->model, o, fused));
  ASSERT_NO_FATAL_FAILURE(testing::plan_and_run_on_both(s->path, s->model, sliced_options(s->model, c.m, c.streamed, false), unfused));
  const ChainResult* want = s->reference(c.m);
  ASSERT_NE(want, nullptr);
  ASSERT_EQ(fused.size(), unfused.size());
  const int pieces = c.width == 832 && c.m == 128 ? 2 : 1;  // R(832) = 64 rows a tile
  for (size_t i = 0; i < fused.size(); ++i) {
    // Every fused group of the plan ran as its fused job, each token (RunStats::fused_planned).
    EXPECT_EQ(fused[i].out.stats.fused_groups, testing::planned_fused_jobs(*plan, o)) << fused[i].device;
    EXPECT_EQ(fused[i].out.stats.fused_planned, fused[i].out.stats.fused_groups) << fused[i].device;
    EXPECT_EQ(fused[i].out.stats.fused_alone, 0) << fused[i].device;
    EXPECT_EQ(fused[i].out.stats.max_pieces, pieces) << fused[i].device;
    EXPECT_EQ(unfused[i].out.stats.fused_groups, 0) << unfused[i].device;
    EXPECT_EQ(fused[i].saturated_cells, 0u) << fused[i].device;
    const Status same = compare_chains(s->model, fused[i].out.chain, *want);
    EXPECT_TRUE(same) << fused[i].device << ": " << same.error().message;
    const Status as_unfused = compare_chains(s->model, fused[i].out.chain, unfused[i].out.chain);
    EXPECT_TRUE(as_unfused) << fused[i].device << " against the unfused run: " << as_unfused.error().message;
  }
}

// Two layers at W = 512 (streamed needs room for two: nothing pinned under their bytes);
// W = 832 resident in one layer, its groups in two row pieces at M = 128.
INSTANTIATE_TEST_SUITE_P(Rows, ExecutorFusedSlices,
                         ::testing::Values(SlicesCase{512, 2, 1, false}, SlicesCase{512, 2, 1, true},
                                           SlicesCase{512, 2, 128, false}, SlicesCase{512, 2, 128, true},
                                           SlicesCase{832, 1, 128, false}),
                         [](const ::testing::TestParamInfo<SlicesCase>& i) {
                           return "w" + std::to_string(i.param.width) + "_m" + std::to_string(i.param.m) +
                                  (i.param.streamed ? "_streamed" : "");
                         });

// One matmul in flight: each member runs its group's fused matmul alone and keeps its columns
// (the C API's chooser stacks it at M = 1); the cpu backend gathers each member's slices
// from their places in the slot. Bit for bit both.
TEST(ExecutorFusedSlices, MembersAloneEqualTheReference) {
  SlicedModel* s = sliced_model(512, 2);
  ASSERT_NE(s, nullptr);
  const PlanOptions o = sliced_options(s->model, 1, false, true);
  auto plan = build_plan(s->model, o);
  ASSERT_TRUE(plan) << plan.error().message;
  ASSERT_GE(sliced_groups(plan->fusion), 1);
  const ChainResult* want = s->reference(1);
  ASSERT_NE(want, nullptr);
  for (const char* device : {"emu", "cpu"}) {
    auto dev = api::open_device(device);
    ASSERT_TRUE(dev) << dev.error().message;
    RunOptions ro;
    ro.inflight = 1;
    auto run = run_plan(s->path, s->model, *plan, o, api::exec_device(**dev, 3), ro);
    ASSERT_TRUE(run) << device << ": " << run.error().message;
    EXPECT_EQ(run->stats.fused_groups, 0) << device;  // no group job: every member alone
    EXPECT_EQ(run->stats.fused_alone, testing::planned_fused_jobs(*plan, o)) << device;
    EXPECT_EQ(run->stats.fused_alone_reason, std::string(device) == "cpu" ? "the cpu backend" : "one matmul in flight (inflight 1)");
    const Status same = compare_chains(s->model, run->chain, *want);
    EXPECT_TRUE(same) << device << ": " << same.error().message;
  }
}

// Two members of one fused group whose second slices are one size (k and v, or gate and
// up): their tensors in layer 0, or {-1, -1}.
std::pair<int, int> same_size_members(const Fusion& f, size_t per_layer) {
  for (size_t t = 0; t < per_layer; ++t)
    for (size_t u = t + 1; u < per_layer; ++u)
      if (f.fused(t) && f.fused(u) && f.first[t] == f.first[u] && f.pieces[t].size() == 2 && f.pieces[u].size() == 2 &&
          f.pieces[t][1].bytes == f.pieces[u][1].bytes)
        return {static_cast<int>(t), static_cast<int>(u)};
  return {-1, -1};
}

// One member's second slice read to the other's place and the other's to the first's: the
// fused matmul then multiplies each member's columns by the other's weights there, and the
// run must differ from the reference, so the tests above would catch a slice read to the
// wrong offset.
TEST(ExecutorFusedSlices, ASliceAtTheWrongOffsetDiffers) {
  SlicedModel* s = sliced_model(512, 2);
  ASSERT_NE(s, nullptr);
  const PlanOptions o = sliced_options(s->model, 1, false, true);
  auto plan = build_plan(s->model, o);
  ASSERT_TRUE(plan) << plan.error().message;
  Fusion& f = plan->fusion;
  const auto [t, u] = same_size_members(f, s->model.desc.matmuls.size());
  ASSERT_GE(t, 0);
  std::swap(f.pieces[static_cast<size_t>(t)][1].at, f.pieces[static_cast<size_t>(u)][1].at);
  const ChainResult* want = s->reference(1);
  ASSERT_NE(want, nullptr);
  auto dev = api::open_device("emu");
  ASSERT_TRUE(dev) << dev.error().message;
  auto run = run_plan(s->path, s->model, *plan, o, api::exec_device(**dev, 3), RunOptions{});
  ASSERT_TRUE(run) << run.error().message;
  EXPECT_GE(run->stats.fused_groups, 1);
  EXPECT_FALSE(compare_chains(s->model, run->chain, *want));
}

}  // namespace
}  // namespace ork::exec
