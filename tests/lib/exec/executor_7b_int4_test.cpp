// One layer of 7B's shapes at int4 through the executor (suite slow: the layer is 119 MB and
// its CPU reference about 20 s at load): at decode the board plan keeps 28 tasks a layer
// unfused, gate, up and down in the fewest-task layout (matmul::stack_in_fewest_tasks: down's
// 50176 stacked columns in 7 tasks on 3 cores, 3, 2 and 2), each group's tasks on the cores as
// the chooser placed them (lib/exec/board_plan.h), and every output of two tokens, on emu and
// emu-rocket, is the CPU reference's bit for bit with no int16 partial clamped. The run fuses
// (PlanOptions::fuse, the default) what the plan fuses at decode: q/k/v, a group of three
// K-slices, as one unstacked matmul in 3 tasks; gate/up stay apart (their fused plan is not
// the chooser's: 14 tasks either way, the unfused one faster), and so do o and down.
#include <gtest/gtest.h>

#include "tests/lib/exec/layer_plans.h"

namespace ork::exec {
namespace {

TEST(Executor7bInt4, TheFewestTaskLayerEqualsTheReference) {
  testing::Int4Layer layer;
  ASSERT_NO_FATAL_FAILURE(testing::run_int4_layer("7b", "layer_7b_int4.ork", 1, layer));  // widths 1344 .. 1408
  EXPECT_EQ(layer.plans.tasks, 28);
  EXPECT_EQ(layer.plans.fewest, 3);  // gate, up, down
  ASSERT_EQ(layer.runs.size(), 2u);
  for (const testing::Int4LayerRun& r : layer.runs) {
    EXPECT_EQ(r.stats.max_group, 3) << r.device;
    // Exactly the plan, every run (lib/exec/start_queue.h): per token one fused group job
    // (q/k/v) and three stacked matmuls (gate, up, down; the fused q/k/v and o unstacked).
    EXPECT_EQ(r.stats.fused_planned, 2) << r.device;
    EXPECT_EQ(r.stats.fused_groups, 2) << r.device;
    EXPECT_EQ(r.stats.fused_alone, 0) << r.device;
    EXPECT_EQ(r.stats.stacked_matmuls, 6) << r.device;
    EXPECT_EQ(r.saturated_cells, 0u) << r.device;
    EXPECT_TRUE(r.same) << r.device << ": " << r.same.error().message;
  }
}

}  // namespace
}  // namespace ork::exec
