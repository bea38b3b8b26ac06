// The executor running each group of a layer's matmuls as its board plan (RunOptions::groups,
// lib/exec/group_job.h): one chained job per group, its tasks on the cores the list scheduler
// chose, bit for bit against the CPU reference of the whole chain, on emu and emu-rocket, on
// 1 and 3 cores, int8 and int4 (K-slices), decode and prefill (int4 prefill in two row
// pieces: row_pieces, board_plan.h, pipelined from group to group), every tensor resident or
// streamed.
#include <algorithm>

#include <gtest/gtest.h>

#include "lib/api/device.h"
#include "lib/exec/board_plan.h"
#include "lib/exec/executor.h"
#include "lib/exec/project.h"
#include "lib/exec/synthetic.h"
#include "tests/lib/exec/cached_model.h"
#include "tests/lib/exec/exec_util.h"
#include "tests/lib/exec/layer_plans.h"
#include "tests/support/device_names.h"

namespace ork::exec {
namespace {

struct GroupsCase {
  const char* device;
  int cores;
  matmul::DType dtype;
  int64_t m;
  uint64_t budget;  // 0: the whole model resident
  int pieces = 1;   // the most row pieces a group runs in (row_pieces, board_plan.h)
  bool fuse = true;  // PlanOptions::fuse (its default); false: every group unfused
};

std::string groups_case_name(const ::testing::TestParamInfo<GroupsCase>& i) {
  return ork::testing::device_test_name(i.param.device) + "_c" + std::to_string(i.param.cores) + "_" +
         dtype_key(i.param.dtype) + "_m" + std::to_string(i.param.m) + (i.param.budget ? "_streamed" : "") +
         (i.param.fuse ? "" : "_unfused");
}

class ExecutorGroups : public ::testing::TestWithParam<GroupsCase> {};

// "small" (hidden 512, intermediate 1408, k/v 128): at int4 every K is past 480, so every
// matmul has K-slices, and at int8 the groups' plans keep some matmuls whole on one core.
TEST_P(ExecutorGroups, EveryGroupAsOneChainedJobEqualsTheReference) {
  const GroupsCase& c = GetParam();
  auto d = synthetic_desc("small", 2, c.dtype);
  ASSERT_TRUE(d);
  const std::string path = testing::scratch(std::string("groups_") + dtype_key(c.dtype) + ".ork");
  testing::CachedModel cached;
  ASSERT_TRUE(cached.write_and_load(path, *d, 11));
  const PackedModel& model = cached.model;
  auto dev = api::open_device(c.device);
  ASSERT_TRUE(dev) << dev.error().message;
  PlanOptions o;
  o.m = c.m;
  o.tokens = 2;
  o.cores = c.cores;
  o.fuse = c.fuse;
  o.budget_bytes = c.budget != 0 ? c.budget : model.weight_bytes() * 2;
  auto plan = build_plan(model, o);
  ASSERT_TRUE(plan) << plan.error().message;
  RunOptions ro;
  ro.inflight = 2;
  auto out = run_plan(path, model, *plan, o, api::exec_device(**dev, c.cores), ro);
  ASSERT_TRUE(out) << out.error().message;
  EXPECT_EQ(out->stats.max_group, 3);  // q, k and v in one job
  if (!c.fuse) {
    EXPECT_EQ(out->stats.fused_groups, 0);
  }
  // Prefill whose M-tiles split evenly runs each group in two row pieces, one job each: the
  // second half packed while the NPU runs the first, the first unpacked while it runs the
  // second; every byte still the reference's.
  EXPECT_EQ(out->stats.max_pieces, c.pieces);
  // Groups in two pieces are pipelined: each group's piece p launched as soon as the previous
  // group's piece p was unpacked, into the next layer too (a token's 2 layers of 4 groups: 7
  // such hand-overs a token, when the walk had queued the next group's starts in time, which
  // with every tensor resident it does within microseconds); never across tokens.
  if (c.pieces == 2) {
    EXPECT_GE(out->stats.pipelined, 1);
    EXPECT_LE(out->stats.pipelined, 14);
  } else {
    EXPECT_EQ(out->stats.pipelined, 0);
  }
  auto want = reference_chain(path, model, c.m, 2);
  ASSERT_TRUE(want) << want.error().message;
  const Status same = compare_chains(model, out->chain, *want);
  EXPECT_TRUE(same) << same.error().message;
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, ExecutorGroups,
    ::testing::Values(GroupsCase{"emu", 3, matmul::DType::int8, 1, 0}, GroupsCase{"emu", 1, matmul::DType::int8, 1, 0},
                      GroupsCase{"emu-rocket", 3, matmul::DType::int8, 1, 0}, GroupsCase{"emu-rocket", 1, matmul::DType::int8, 1, 0},
                      GroupsCase{"emu", 3, matmul::DType::int4, 1, 0}, GroupsCase{"emu-rocket", 3, matmul::DType::int4, 1, 0},
                      GroupsCase{"emu-rocket", 1, matmul::DType::int4, 1, 0}, GroupsCase{"emu", 3, matmul::DType::int8, 64, 0},
                      GroupsCase{"emu-rocket", 3, matmul::DType::fp16, 1, 0},
                      GroupsCase{"emu", 3, matmul::DType::int8, 1, 6u << 20},
                      // fusion off: the groups' own members' plans, chained
                      GroupsCase{"emu", 3, matmul::DType::int8, 1, 0, 1, false},
                      GroupsCase{"emu-rocket", 1, matmul::DType::int8, 1, 0, 1, false},
                      GroupsCase{"emu", 3, matmul::DType::int8, 1, 6u << 20, 1, false},
                      // int4 at the weights' own widths (512, 1408 for down): all 256 rows in
                      // one M-tile, so one piece (halves would stream the weights twice)
                      GroupsCase{"emu", 3, matmul::DType::int4, 256, 0, 1}, GroupsCase{"emu-rocket", 1, matmul::DType::int4, 256, 0, 1}),
    groups_case_name);

// The small int4 model packed at 480-wide K-slices (PackWriter's explicit width): 128 rows
// a tile, so at M = 256 every group runs in two row pieces, and each group's piece p is
// launched as soon as the previous group's piece p is unpacked, within a layer and into the
// next (7 hand-overs a token of 2 layers; none across tokens), every output still the
// reference's bytes.
TEST(ExecutorGroups, GroupsInTwoPiecesArePipelinedBitExact) {
  auto d = synthetic_desc("small", 2, matmul::DType::int4);
  ASSERT_TRUE(d);
  const std::string path = testing::scratch("groups_pipelined.ork");
  {
    auto w = PackWriter::create(path, *d);
    ASSERT_TRUE(w) << w.error().message;
    for (int l = 0; l < d->layers; ++l)
      for (int j = 0; j < static_cast<int>(d->matmuls.size()); ++j)
        ASSERT_TRUE(w->add(l, j, synthetic_weights(*d, l, j, 5).data(), {}, matmul::kInt4SliceK));
    ASSERT_TRUE(w->finish());
  }
  auto model = read_packed(path);
  ASSERT_TRUE(model) << model.error().message;
  PlanOptions o;
  o.m = 256;
  o.tokens = 2;
  o.budget_bytes = model->weight_bytes() * 2;
  std::vector<testing::DeviceRun> runs;
  ASSERT_NO_FATAL_FAILURE(testing::plan_and_run_on_both(path, *model, o, runs));
  ASSERT_EQ(runs.size(), 2u);
  auto want = reference_chain(path, *model, o.m, 2);  // one reference for both devices' runs
  ASSERT_TRUE(want) << want.error().message;
  for (const testing::DeviceRun& r : runs) {
    EXPECT_EQ(r.out.stats.max_pieces, 2) << r.device;
    // Every tensor resident: the walk queues each group's starts long before the device
    // thread reaches them, so every hand-over of a token is pipelined.
    EXPECT_EQ(r.out.stats.pipelined, 14) << r.device;
    const Status same = compare_chains(*model, r.out.chain, *want);
    EXPECT_TRUE(same) << r.device << ": " << same.error().message;
  }
}

// Qwen2.5-1.5B's shapes at int4 (one layer; the Q4_0-shaped weights' own widths, every slice
// full): at decode the board plan stacks the K-slices (matmul::Plan::stacked), gate and up in
// the fewest-task layout (matmul::stack_in_fewest_tasks: 17920 columns in 3 tasks on 2 cores
// where make_plan's split takes 4), and every output of the run, on emu and emu-rocket, is
// still the reference's bit for bit.
TEST(ExecutorGroups, StackedInt4SlicesEqualTheReference) {
  testing::Int4Layer layer;
  ASSERT_NO_FATAL_FAILURE(testing::run_int4_layer("qwen2.5-1.5b", "groups_stacked_int4.ork", 11, layer));
  EXPECT_GE(layer.plans.fewest, 2);  // the plans this run chains
  ASSERT_EQ(layer.runs.size(), 2u);
  for (const testing::Int4LayerRun& r : layer.runs) {
    EXPECT_GT(r.stats.stacked_matmuls, 0) << r.device;
    EXPECT_TRUE(r.same) << r.device << ": " << r.same.error().message;
  }
}

// The plans those runs chain really spread the matmuls over the cores: in the small model's
// q/k/v and gate/up groups at M = 1 on 3 cores, tasks on at least two cores, and at least
// one matmul kept whole (one column part) instead of split over every core.
TEST(ExecutorGroups, ThePlansSpreadTheMatmulsOverTheCores) {
  const std::pair<int64_t, int64_t> qkv[] = {{512, 512}, {512, 128}, {512, 128}};
  const std::pair<int64_t, int64_t> gate_up[] = {{512, 1408}, {512, 1408}};
  for (matmul::DType dt : {matmul::DType::int8, matmul::DType::int4}) {
    for (auto shapes : {std::span<const std::pair<int64_t, int64_t>>(qkv), std::span<const std::pair<int64_t, int64_t>>(gate_up)}) {
      auto g = plan_group(dt, 1, shapes, 3);
      ASSERT_TRUE(g);
      EXPECT_GE(g->submits, 2);
      EXPECT_NE(std::find(g->parts.begin(), g->parts.end(), 1), g->parts.end());
    }
  }
}

}  // namespace
}  // namespace ork::exec
