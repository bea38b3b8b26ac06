// The board plan of a group (lib/exec/board_plan.h): every task of every matmul placed once,
// on at most `cores` cores, each core one chained submit; the group's time is the timing
// model's for exactly those chains; the plan is never slower than splitting every matmul over
// every core; the decode plan of Qwen2.5-1.5B keeps all three cores streaming in fewer tasks;
// and the fused plans of the groups that read one A (only when asked: `fuse`) are one plan of
// K x the members' N summed, 12 tasks a layer at Qwen2.5-1.5B's decode against 16.
#include <gtest/gtest.h>

#include <set>
#include <tuple>
#include <vector>

#include "driver/timing/core_sim.h"
#include "lib/exec/board_plan.h"
#include "lib/exec/exec_plan.h"

namespace ork::exec {
namespace {

using Shapes = std::vector<std::pair<int64_t, int64_t>>;

// The chains of `g` priced again from its plans: what the group's device time must be.
double reprice(const GroupPlan& g, const timing::TimingParams& params = {}) {
  std::vector<timing::CoreWork> work;
  for (size_t c = 0; c < g.cores.size(); ++c) {
    if (g.cores[c].empty()) continue;
    timing::CoreWork w;
    w.core = static_cast<int>(c);
    for (const PlacedTask& t : g.cores[c]) {
      const matmul::Plan& plan = g.plans[static_cast<size_t>(t.matmul)];
      const matmul::Task& task = plan.tasks[static_cast<size_t>(t.task)];
      EXPECT_EQ(task.core, static_cast<int>(c));
      w.tasks.push_back(plan_task_demand(plan, task));
    }
    work.push_back(w);
  }
  double end = 0;
  for (double e : timing::simulate_cores(work, std::vector<double>(work.size(), 0.0), params)) end = std::max(end, e);
  return end;
}

void expect_every_task_once(const GroupPlan& g, int cores) {
  ASSERT_LE(g.cores.size(), static_cast<size_t>(cores));
  std::set<std::pair<int, int>> seen;
  int64_t placed = 0, submits = 0;
  for (const auto& chain : g.cores) {
    submits += chain.empty() ? 0 : 1;
    for (const PlacedTask& t : chain) {
      EXPECT_TRUE(seen.insert({t.matmul, t.task}).second) << "task placed twice";
      ++placed;
    }
  }
  int64_t planned = 0;
  for (const matmul::Plan& p : g.plans) planned += static_cast<int64_t>(p.tasks.size());
  EXPECT_EQ(placed, planned);
  EXPECT_EQ(g.tasks, planned);
  EXPECT_EQ(g.submits, submits);
}

TEST(BoardPlan, EveryTaskPlacedOnceAndPricedAsPlaced) {
  const Shapes groups[] = {{{1536, 1536}, {1536, 256}, {1536, 256}}, {{1536, 8960}, {1536, 8960}}, {{8960, 1536}},
                           {{64, 32}}};
  for (matmul::DType dt : {matmul::DType::int8, matmul::DType::int4, matmul::DType::fp16})
    for (int64_t m : {int64_t{1}, int64_t{128}})
      for (int cores : {1, 3})
        for (const Shapes& s : groups) {
          auto g = plan_group(dt, m, s, cores);
          ASSERT_TRUE(g) << g.error().message;
          expect_every_task_once(*g, cores);
          EXPECT_DOUBLE_EQ(g->device_ns, reprice(*g));
          EXPECT_EQ(g->parts.size(), s.size());
          // Never slower than today's plan: every matmul split over every core, one submit each.
          int64_t split_each = 0;
          for (const auto& [k, n] : s) split_each += modelled_matmul_ns(dt, m, k, n, cores);
          EXPECT_LE(g->device_ns, static_cast<double>(split_each) + 1);
        }
}

TEST(BoardPlan, QwenDecodeKeepsTheCoresStreamingInFewerTasks) {
  // Qwen2.5-1.5B's layer at M = 1, int8: q/k/v, o, gate/up, down.
  const Shapes groups[] = {{{1536, 1536}, {1536, 256}, {1536, 256}}, {{1536, 1536}}, {{1536, 8960}, {1536, 8960}},
                           {{8960, 1536}}};
  int64_t tasks = 0, split_tasks = 0;
  double device = 0, split_device = 0;
  for (const Shapes& s : groups) {
    auto g = plan_group(matmul::DType::int8, 1, s, 3);
    ASSERT_TRUE(g);
    EXPECT_EQ(g->submits, 3);  // every core has work in every group
    tasks += g->tasks;
    device += g->device_ns;
    // No plan of the group beats one submit, one task's fixed cost and its weights once
    // through shared DRAM: the model's bound.
    EXPECT_GE(g->device_ns, timing::kSubmitNs + timing::kTaskNs + g->weight_bytes / timing::kSharedDramBytesPerNs);
    for (const auto& [k, n] : s) {
      split_device += static_cast<double>(modelled_matmul_ns(matmul::DType::int8, 1, k, n, 3));
      split_tasks += static_cast<int64_t>(matmul::make_plan({1, k, n}, {.cores = 3})->tasks.size());
    }
  }
  // The fewest tasks the layer can have: down's three K-slices of at most 3072
  // (docs/hardware.md section 9: 3008 + 3008 + 2944), gate and up two column chunks each (at
  // most 8192 columns a task), one each for q, k, v, o. Every matmul on every core: 27.
  EXPECT_GE(tasks, 11);
  EXPECT_EQ(split_tasks, 27);
  EXPECT_LT(tasks, split_tasks);
  EXPECT_LT(device, 0.9 * split_device);  // 86.0 -> 74.4 ms at 28 layers
}

TEST(BoardPlan, ThePlanFollowsTheFixedCostSplit) {
  timing::TimingParams per_submit;
  per_submit.submit_ns = timing::kSubmitNs + timing::kTaskNs;
  per_submit.task_ns = 0;
  const Shapes down = {{8960, 1536}};
  auto g = plan_group(matmul::DType::int8, 1, down, 3, per_submit);
  ASSERT_TRUE(g);
  EXPECT_DOUBLE_EQ(g->device_ns, reprice(*g, per_submit));
}

TEST(BoardPlan, BadGroupsAreNamed) {
  EXPECT_FALSE(plan_group(matmul::DType::int8, 1, Shapes{}, 3));
  auto cores = plan_group(matmul::DType::int8, 1, Shapes{{64, 64}}, 4);
  ASSERT_FALSE(cores);
  EXPECT_NE(cores.error().message.find("cores = 4"), std::string::npos);
  auto shape = plan_group(matmul::DType::int8, 1, Shapes{{0, 64}}, 3);
  ASSERT_FALSE(shape);
  EXPECT_NE(shape.error().message.find("K = 0"), std::string::npos) << shape.error().message;
}

// 7B's down at int4 decode at a width of 1376 (14 slices of 1376, K padded to 19264): the board plan
// stacks its slices (docs/execution.md "Stacked K-slices": the fastest of every plan on the
// timing model), in fewer tasks than any plan of one task per slice and core; at M = 128 the rows of
// every slice do not fit one task's resident rows, so nothing stacks.
TEST(BoardPlan, Int4DecodeStacksTheKSlices) {
  const std::pair<int64_t, int64_t> down[] = {{18944, 3584}};
  const int64_t width[] = {1376};
  auto g = plan_group(matmul::DType::int4, 1, down, 3, {}, width);
  ASSERT_TRUE(g) << g.error().message;
  ASSERT_TRUE(g->plans[0].stacked);
  expect_every_task_once(*g, 3);
  EXPECT_DOUBLE_EQ(g->device_ns, reprice(*g));
  for (int parts = 1; parts <= 3; ++parts) {  // every plain plan of one task per slice and core
    auto plain = matmul::make_plan({1, 18944, 3584}, {.dtype = matmul::DType::int4, .cores = parts, .slice_k = 1376});
    ASSERT_TRUE(plain);
    ASSERT_FALSE(plain->stacked);
    EXPECT_LT(g->tasks, static_cast<int64_t>(plain->tasks.size())) << parts;
  }
  for (const matmul::Task& t : g->plans[0].tasks) {
    EXPECT_LE(t.nt, matmul::kMaxColumnsPerTask);
    EXPECT_LE(t.mc, matmul::resident_rows(t.kt));
  }
  auto prefill = plan_group(matmul::DType::int4, 128, down, 3, {}, width);
  ASSERT_TRUE(prefill);
  EXPECT_FALSE(prefill->plans[0].stacked);
}

// 7B's layer groups at decode, int4 at the synthetic weights' widths (1344 .. 1408; down 1376).
using WidthGroups = std::vector<std::pair<std::vector<std::pair<int64_t, int64_t>>, std::vector<int64_t>>>;
const WidthGroups& int4_7b_groups() {
  static const WidthGroups groups = {{{{3584, 3584}, {3584, 512}, {3584, 512}}, {1376, 1408, 1408}},
                                     {{{3584, 3584}}, {1376}},
                                     {{{3584, 18944}, {3584, 18944}}, {1376, 1344}},
                                     {{{18944, 3584}}, {1376}}};
  return groups;
}

// A 7B layer at int4 decode: every slice is full (K = 3584 in three of 1216, down in 14 of
// 1376, K padded), every stacked task a whole slice deep, and the layer within one task of the
// floor the hardware facts leave (docs/hardware.md section 9: a task takes at most 8192
// columns and one slice's width of K, so a matmul of S slices needs ceil(S x N / 8192) tasks:
// 27 here). 28 (o keeps one task per core: its two stacked tasks leave a core idle): 31 before
// the fewest-task layout and the chooser's tolerance, 38 while the last slice was narrower.
// int8's plan of the same layer takes 27 (17 at its floor: down in 7 K-slices of at most 3072,
// planned in two column parts, 14 tasks, as 7 leave a core with three slices and two with
// two; 23 with 2048-wide slices): int4 stays above it at these widths.
TEST(BoardPlan, Int4DecodeLayerWithinATaskOfTheFloor) {
  int64_t tasks = 0, stacked = 0, floor = 0, int8_tasks = 0;
  for (const auto& [shapes, widths] : int4_7b_groups()) {
    auto g = plan_group(matmul::DType::int4, 1, shapes, 3, {}, widths);
    ASSERT_TRUE(g) << g.error().message;
    expect_every_task_once(*g, 3);
    EXPECT_DOUBLE_EQ(g->device_ns, reprice(*g));
    tasks += g->tasks;
    for (const matmul::Plan& p : g->plans) {
      EXPECT_EQ(p.kp, p.slices * p.slice_k);
      floor += (p.slices * p.np + matmul::kMaxColumnsPerTask - 1) / matmul::kMaxColumnsPerTask;
      if (!p.stacked) continue;
      ++stacked;
      for (const matmul::Task& t : p.tasks) EXPECT_EQ(t.kt, p.slice_k);
    }
    auto i8 = plan_group(matmul::DType::int8, 1, shapes, 3);
    ASSERT_TRUE(i8);
    int8_tasks += i8->tasks;
  }
  EXPECT_EQ(floor, 27);
  EXPECT_LE(tasks, floor + 1);
  EXPECT_GE(stacked, 6);
  EXPECT_EQ(int8_tasks, 27);
}

// The chooser (choose_group_plan): of the plans within kFewerTasksTolerance of the fastest,
// the fewest tasks; so the plan kept is never more than the tolerance slower than the fastest,
// no plan that near has fewer tasks, and at 7B's int4 gate/up it keeps 14 tasks (each matmul
// in the fewest-task layout) where the fastest plan, 1.1 % faster, takes 15.
TEST(BoardPlan, TheFewestTasksNearTheFastestAreKept) {
  WidthGroups groups = int4_7b_groups();
  groups.push_back({{{1536, 1536}, {1536, 256}, {1536, 256}}, {}});
  groups.push_back({{{8960, 1536}}, {}});
  for (const auto& [shapes, widths] : groups) {
    const matmul::DType dt = widths.empty() ? matmul::DType::int8 : matmul::DType::int4;
    for (int64_t m : {int64_t{1}, int64_t{128}}) {
      auto all = group_candidates(dt, m, shapes, 3, {}, widths);
      ASSERT_TRUE(all) << all.error().message;
      auto kept = plan_group(dt, m, shapes, 3, {}, widths);
      ASSERT_TRUE(kept);
      double fastest = (*all)[0].device_ns;
      int64_t fastest_tasks = (*all)[0].tasks;
      for (const GroupPlan& c : *all)
        if (c.device_ns < fastest || (c.device_ns == fastest && c.tasks < fastest_tasks)) {
          fastest = c.device_ns;
          fastest_tasks = c.tasks;
        }
      EXPECT_LE(kept->device_ns, fastest * (1 + kFewerTasksTolerance));
      EXPECT_LE(kept->tasks, fastest_tasks);
      for (const GroupPlan& c : *all) {
        if (c.device_ns <= fastest * (1 + kFewerTasksTolerance)) {
          EXPECT_GE(c.tasks, kept->tasks);
        }
      }
      const GroupPlan& chosen = (*all)[choose_group_plan(*all)];
      EXPECT_EQ(chosen.tasks, kept->tasks);
      EXPECT_DOUBLE_EQ(chosen.device_ns, kept->device_ns);
      if (dt == matmul::DType::int4 && m == 1 && shapes.size() == 2) {  // gate/up
        EXPECT_EQ(kept->tasks, 14);
        EXPECT_EQ(fastest_tasks, 15);
        EXPECT_GT(kept->device_ns, fastest);
      }
    }
  }
}

// A group runs in two row pieces exactly when every member's M-tiles split evenly between
// the halves (row_pieces): never at decode or an odd M, never when one M-tile holds all the
// rows (halving would stream every weight twice), always on a whole number of tiles.
TEST(BoardPlan, RowPiecesSplitOnlyOnWholeMTiles) {
  const std::pair<int64_t, int64_t> small[] = {{512, 512}, {512, 128}};
  for (matmul::DType dt : {matmul::DType::int8, matmul::DType::int4, matmul::DType::fp16}) {
    EXPECT_EQ(row_pieces(dt, 1, small), 1);
    EXPECT_EQ(row_pieces(dt, 255, small), 1);
    for (int64_t m : {2, 8, 64, 128, 256, 512, 1024}) {
      int want = 2;
      for (const auto& [k, n] : small) {
        auto plan = matmul::make_plan({m, k, n}, {.dtype = dt});
        ASSERT_TRUE(plan);
        if ((m / 2) % plan->mc != 0) want = 1;
      }
      EXPECT_EQ(row_pieces(dt, m, small), want) << dtype_key(dt) << " m " << m;
    }
  }
  // int4 at 480-wide slices holds 128 rows a tile (docs/execution.md "int4"): 256 rows split, 128 do not.
  const std::pair<int64_t, int64_t> down[] = {{1408, 512}};
  EXPECT_EQ(row_pieces(matmul::DType::int4, 256, down), 2);
  EXPECT_EQ(row_pieces(matmul::DType::int4, 128, down), 1);
  // 992-wide slices (7B's synthetic int4 weights) hold 64: 128 rows split.
  const std::pair<int64_t, int64_t> gate[] = {{3584, 18944}};
  const int64_t w992[] = {992};
  EXPECT_EQ(row_pieces(matmul::DType::int4, 128, gate, w992), 2);
}

// Which groups fuse (fusable): two or more matmuls of one K, each N a whole number of the
// dtype's weight atoms (32 int8, 16 fp16, 64 int4), K sliced alike (int4 widths may differ
// where their slices do not); one K-slice or several (the fused weights then slice by slice:
// fusion.h fused_pieces).
TEST(BoardPlan, FusableOnlyWhereTheWeightsConcatenateSliceBySlice) {
  using D = matmul::DType;
  const Shapes qkv = {{1536, 1536}, {1536, 256}, {1536, 256}};
  EXPECT_TRUE(fusable(D::int8, 1, qkv));
  EXPECT_TRUE(fusable(D::fp16, 128, qkv));
  EXPECT_TRUE(fusable(D::int8, 512, Shapes{{1536, 8960}, {1536, 8960}}));
  EXPECT_FALSE(fusable(D::int8, 1, Shapes{{1536, 1536}}));                   // one member
  EXPECT_FALSE(fusable(D::int8, 1, Shapes{{1536, 256}, {1024, 256}}));       // two Ks: two As
  EXPECT_FALSE(fusable(D::int8, 1, Shapes{{1536, 48}, {1536, 256}}));        // 48 columns: a padded N-block
  EXPECT_TRUE(fusable(D::fp16, 1, Shapes{{1536, 48}, {1536, 256}}));         // fp16's blocks are 16 wide
  EXPECT_TRUE(fusable(D::int8, 1, Shapes{{8960, 1536}, {8960, 1536}}));      // five K-slices of 2048
  EXPECT_TRUE(fusable(D::int4, 1, Shapes{{3584, 3584}, {3584, 512}}, std::vector<int64_t>{1216, 1216}));   // 3 slices
  EXPECT_FALSE(fusable(D::int4, 1, Shapes{{3584, 3584}, {3584, 96}}, std::vector<int64_t>{1216, 1216}));   // 96 % 64
  EXPECT_FALSE(fusable(D::int4, 1, Shapes{{1024, 512}, {1024, 512}}, std::vector<int64_t>{512, 1024}));   // 2 slices, 1
  EXPECT_TRUE(fusable(D::int4, 1, Shapes{{1024, 512}, {1024, 512}}, std::vector<int64_t>{1024, 1056}));   // one slice each
  EXPECT_TRUE(fusable(D::int4, 1, Shapes{{3584, 3584}, {3584, 512}}, std::vector<int64_t>{1344, 1408}));  // 3 of 1216 each
  EXPECT_FALSE(fusable(D::int4, 1, Shapes{{3584, 3584}, {3584, 512}}, std::vector<int64_t>{1184, 1408}));  // 4 of 896, 3
  EXPECT_TRUE(fusable(D::int4, 1, Shapes{{1024, 512}, {1024, 512}}, std::vector<int64_t>{1024, 1024}));   // one slice
  EXPECT_FALSE(fusable(D::int4, 1, Shapes{{1024, 512}, {1024, 96}}, std::vector<int64_t>{1024, 1024}));   // 96 % 64
}

// Fused candidates come only with `fuse`, and each is one ordinary plan of K x the members' N
// summed, the members' columns side by side, every task placed once and priced as placed.
TEST(BoardPlan, FusedCandidatesAreOnePlanOfTheSummedColumns) {
  const Shapes qkv = {{1536, 1536}, {1536, 256}, {1536, 256}};
  for (int64_t m : {int64_t{1}, int64_t{128}}) {
    auto plain = group_candidates(matmul::DType::int8, m, qkv, 3);
    ASSERT_TRUE(plain);
    for (const GroupPlan& c : *plain) {
      EXPECT_FALSE(c.fused);
      EXPECT_TRUE(c.columns.empty());
    }
    auto all = group_candidates(matmul::DType::int8, m, qkv, 3, {}, {}, true);
    ASSERT_TRUE(all);
    size_t fused = 0;
    for (const GroupPlan& c : *all) {
      if (!c.fused) continue;
      ++fused;
      ASSERT_EQ(c.plans.size(), 1u);
      EXPECT_EQ(c.plans[0].shape.m, m);
      EXPECT_EQ(c.plans[0].shape.k, 1536);
      EXPECT_EQ(c.plans[0].shape.n, 2048);
      EXPECT_EQ(c.columns, (std::vector<int64_t>{0, 1536, 1792, 2048}));
      EXPECT_EQ(c.parts.size(), 1u);
      expect_every_task_once(c, 3);
      EXPECT_DOUBLE_EQ(c.device_ns, reprice(c));
    }
    EXPECT_EQ(fused, 6u);  // 1..3 column parts, each placed both ways
    EXPECT_EQ(all->size(), plain->size() + fused);
  }
}

// A fused candidate is the ordinary plan of the summed shape (no second matmul path): the
// fused candidates are, one for one, the candidates of the group of one K x (N1 + N2 + ...)
// matmul, the plans GroupJobs builds for such a one-member group (fused_group_test.cpp).
TEST(BoardPlan, FusedPlansAreTheSummedShapesPlans) {
  const Shapes groups[] = {{{1536, 1536}, {1536, 256}, {1536, 256}}, {{1536, 8960}, {1536, 8960}}};
  for (matmul::DType dt : {matmul::DType::int8, matmul::DType::fp16})
    for (int64_t m : {int64_t{1}, int64_t{128}})
      for (const Shapes& s : groups) {
        int64_t n = 0;
        for (const auto& [k, cols] : s) n += cols;
        auto all = group_candidates(dt, m, s, 3, {}, {}, true);
        auto one = group_candidates(dt, m, Shapes{{s[0].first, n}}, 3);
        ASSERT_TRUE(all && one);
        std::vector<const GroupPlan*> fused;
        for (const GroupPlan& c : *all)
          if (c.fused) fused.push_back(&c);
        ASSERT_EQ(fused.size(), one->size());
        for (size_t i = 0; i < fused.size(); ++i) {
          EXPECT_EQ(fused[i]->tasks, (*one)[i].tasks);
          EXPECT_DOUBLE_EQ(fused[i]->device_ns, (*one)[i].device_ns);
          ASSERT_EQ(fused[i]->plans[0].tasks.size(), (*one)[i].plans[0].tasks.size());
          for (size_t t = 0; t < fused[i]->plans[0].tasks.size(); ++t) {
            const matmul::Task &x = fused[i]->plans[0].tasks[t], &y = (*one)[i].plans[0].tasks[t];
            EXPECT_EQ(std::tie(x.core, x.m0, x.mc, x.n0, x.nt, x.k0, x.kt), std::tie(y.core, y.m0, y.mc, y.n0, y.nt, y.k0, y.kt));
          }
        }
      }
}

// Qwen2.5-1.5B's decode layer at int8 with fused plans allowed: q/k/v (2048 columns) and
// gate/up (17920) each run fused in three tasks, one a core, and down (K = 8960: three
// K-slices of 3008, 3008 and 2944) in three, one slice a core, so the layer takes 12 tasks
// (3 + 3 + 3 + 3) instead of 16, and less modelled time (docs/execution.md "Board projection").
TEST(BoardPlan, QwenDecodeFusedTakesTwelveTasks) {
  const Shapes groups[] = {{{1536, 1536}, {1536, 256}, {1536, 256}}, {{1536, 1536}}, {{1536, 8960}, {1536, 8960}},
                           {{8960, 1536}}};
  int64_t tasks = 0, plain_tasks = 0;
  double device = 0, plain_device = 0;
  for (const Shapes& s : groups) {
    auto g = plan_group(matmul::DType::int8, 1, s, 3, {}, {}, true);
    auto plain = plan_group(matmul::DType::int8, 1, s, 3);
    ASSERT_TRUE(g && plain);
    EXPECT_EQ(g->fused, s.size() > 1);
    if (g->fused || s[0].first == 8960) {
      EXPECT_EQ(g->tasks, 3);
    }
    if (s[0].first == 8960) {  // down: one whole K-slice a core, every column
      for (const auto& chain : g->cores) {
        ASSERT_EQ(chain.size(), 1u);
        const matmul::Task& t = g->plans[0].tasks[static_cast<size_t>(chain[0].task)];
        EXPECT_EQ(t.nt, 1536);
        EXPECT_EQ(t.kt, t.slice == 2 ? 2944 : 3008);
      }
    }
    EXPECT_EQ(g->submits, 3);
    expect_every_task_once(*g, 3);
    tasks += g->tasks;
    plain_tasks += plain->tasks;
    device += g->device_ns;
    plain_device += plain->device_ns;
  }
  EXPECT_EQ(tasks, 12);
  EXPECT_EQ(plain_tasks, 16);
  EXPECT_LT(device, plain_device);
}

}  // namespace
}  // namespace ork::exec
