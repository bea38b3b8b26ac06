// The executor running a fused group (PlanOptions::fuse, lib/exec/fusion.h): the members'
// weights side by side in one slot, read there member by member, run as one matmul of K x
// their N summed, and C's columns routed back to each member; every output bit for bit the
// CPU reference of the whole chain, on emu and emu-rocket, int8 and fp16, decode and
// prefill, every tensor resident or streamed.
#include <gtest/gtest.h>

#include <map>

#include "lib/api/device.h"
#include "lib/exec/executor.h"
#include "lib/exec/fusion.h"
#include "lib/exec/synthetic.h"
#include "tests/lib/exec/cached_model.h"
#include "tests/lib/exec/exec_util.h"
#include "tests/lib/exec/layer_plans.h"

namespace ork::exec {
namespace {

struct FusedCase {
  matmul::DType dtype;
  int64_t m;
  bool streamed;
};

std::string fused_case_name(const ::testing::TestParamInfo<FusedCase>& i) {
  return std::string(dtype_key(i.param.dtype)) + "_m" + std::to_string(i.param.m) + (i.param.streamed ? "_streamed" : "");
}

// The small model (hidden 512, k/v 128, intermediate 1408, 2 layers) of one dtype packed at
// seed 11, and its CPU reference of 2 tokens per M, each made once per process: the runs and
// the reference only read the file, so every test of a dtype shares it and every run at one M
// the reference (writing the weights and unpacking them for each test's reference was about a
// third of the test's time under ASan).
using SmallModel = testing::CachedModel;

SmallModel* small_model(matmul::DType dtype) {
  static std::map<matmul::DType, SmallModel> made;
  SmallModel& s = made[dtype];
  if (s.path.empty()) {
    auto d = synthetic_desc("small", 2, dtype);
    const std::string path = testing::scratch(std::string("fused_") + dtype_key(dtype) + ".ork");
    const bool written = d && write_synthetic(path, *d, 11);
    EXPECT_TRUE(written) << path;
    if (!written || !s.load(path)) return nullptr;
  }
  return &s;
}

// Fused groups of a layer (their first members).
int fused_groups(const Fusion& f, size_t per_layer) {
  int n = 0;
  for (size_t t = 0; t < per_layer; ++t) n += f.fused(t) && f.offset[t] == 0 ? 1 : 0;
  return n;
}

// Every run's group jobs run fused within [lo, hi] and every output of the run is the CPU
// reference's, byte for byte (each test gives the range its plan allows).
void expect_fused_runs(const PackedModel& model, const std::vector<testing::DeviceRun>& runs, const ChainResult& want,
                       int64_t lo, int64_t hi) {
  EXPECT_FALSE(runs.empty());
  for (const testing::DeviceRun& r : runs) {
    EXPECT_GE(r.out.stats.fused_groups, lo) << r.device;
    EXPECT_LE(r.out.stats.fused_groups, hi) << r.device;
    const Status same = compare_chains(model, r.out.chain, want);
    EXPECT_TRUE(same) << r.device << ": " << same.error().message;
  }
}

class ExecutorFused : public ::testing::TestWithParam<FusedCase> {};

TEST_P(ExecutorFused, FusedGroupsEqualTheReference) {
  const FusedCase& c = GetParam();
  SmallModel* s = small_model(c.dtype);
  ASSERT_NE(s, nullptr);
  const PackedModel& model = s->model;
  const std::string& path = s->path;
  PlanOptions o;
  o.m = c.m;
  o.tokens = 2;
  o.fuse = true;
  // Streamed: under two layers' bytes nothing is pinned (pinned_tensors), every token reads
  // every tensor into slots that are reused.
  o.budget_bytes = c.streamed ? model.weight_bytes() * 3 / 4 : model.weight_bytes() * 2;
  auto plan = build_plan(model, o);
  ASSERT_TRUE(plan) << plan.error().message;
  const int groups = fused_groups(plan->fusion, model.desc.matmuls.size());
  ASSERT_GE(groups, 1);  // q/k/v at least: the case must fuse
  for (bool pin : plan->pinned) EXPECT_EQ(pin, !c.streamed);
  std::vector<testing::DeviceRun> runs;
  ASSERT_NO_FATAL_FAILURE(testing::plan_and_run_on_both(path, model, o, runs));
  const ChainResult* want = s->reference(c.m);
  ASSERT_NE(want, nullptr);
  // Each token's and layer's fused groups as one job, unless a start went alone (it then runs
  // the fused matmul blocking and keeps its columns).
  expect_fused_runs(model, runs, *want, 1, 2 * 2 * groups);
}

// fp16's prefill at 16 rows: on this model its plans there are those of 128 rows (both groups
// fused in 3 tasks, every matmul one M-tile on the K-reduction schedule), for an eighth of the
// emulated fp16 work, most of the test's time under ASan. int8's prefill keeps 128 rows, where
// q/k/v's fused plan takes 3 tasks (2 up to 64 rows).
INSTANTIATE_TEST_SUITE_P(Shapes, ExecutorFused,
                         ::testing::Values(FusedCase{matmul::DType::int8, 1, false}, FusedCase{matmul::DType::int8, 1, true},
                                           FusedCase{matmul::DType::int8, 128, false}, FusedCase{matmul::DType::int8, 128, true},
                                           FusedCase{matmul::DType::fp16, 1, false}, FusedCase{matmul::DType::fp16, 1, true},
                                           FusedCase{matmul::DType::fp16, 16, false}, FusedCase{matmul::DType::fp16, 16, true}),
                         fused_case_name);

// A fused member run alone: with one matmul in flight every call blocks, so each member of
// a fused group runs the group's fused matmul and keeps its columns; and on the cpu backend
// each member's weights are read from its place in the group's slot. Bit for bit both.
TEST(ExecutorFused, MembersAloneEqualTheReference) {
  SmallModel* s = small_model(matmul::DType::int8);
  ASSERT_NE(s, nullptr);
  const PackedModel& model = s->model;
  const std::string& path = s->path;
  PlanOptions o;
  o.tokens = 2;
  o.fuse = true;
  o.budget_bytes = model.weight_bytes() * 2;
  auto plan = build_plan(model, o);
  ASSERT_TRUE(plan) << plan.error().message;
  ASSERT_GE(fused_groups(plan->fusion, model.desc.matmuls.size()), 1);
  const ChainResult* want = s->reference(o.m);
  ASSERT_NE(want, nullptr);
  std::vector<testing::DeviceRun> runs;
  for (const char* device : {"emu", "cpu"}) {
    auto dev = api::open_device(device);
    ASSERT_TRUE(dev) << dev.error().message;
    RunOptions ro;
    ro.inflight = 1;
    auto run = run_plan(path, model, *plan, o, api::exec_device(**dev, 3), ro);
    ASSERT_TRUE(run) << device << ": " << run.error().message;
    runs.push_back({device, std::move(*run)});
  }
  expect_fused_runs(model, runs, *want, 0, 0);  // no group job: every member alone
}

// Fusion off (ork_run --no-fuse): no tensor shares a buffer, no group job runs fused, and
// every output is still bit for bit the reference; fusion is the default (PlanOptions{}).
TEST(ExecutorFused, OffFusesNothingAndEqualsTheReference) {
  SmallModel* s = small_model(matmul::DType::int8);
  ASSERT_NE(s, nullptr);
  const PackedModel& model = s->model;
  const std::string& path = s->path;
  auto f = find_fusion(model, 1, 3, 4096, false);
  ASSERT_TRUE(f);
  EXPECT_EQ(fused_groups(*f, f->first.size()), 0);
  PlanOptions o;
  EXPECT_TRUE(o.fuse);
  o.tokens = 2;
  o.fuse = false;
  o.budget_bytes = model.weight_bytes() * 2;
  auto plan = build_plan(model, o);
  ASSERT_TRUE(plan) << plan.error().message;
  EXPECT_EQ(fused_groups(plan->fusion, plan->fusion.first.size()), 0);
  std::vector<testing::DeviceRun> runs;
  ASSERT_NO_FATAL_FAILURE(testing::plan_and_run_on_both(path, model, o, runs));
  const ChainResult* want = s->reference(o.m);
  ASSERT_NE(want, nullptr);
  expect_fused_runs(model, runs, *want, 0, 0);
}

}  // namespace
}  // namespace ork::exec
