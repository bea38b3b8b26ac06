// One layer of 7B's shapes at int4 through the executor (suite slow: the layer is 119 MB and
// its CPU reference about 20 s at load): at decode the board plan keeps 28 tasks a layer,
// gate, up and down in the fewest-task layout (matmul::stack_in_fewest_tasks: down's 50176
// stacked columns in 7 tasks on 3 cores, 3, 2 and 2), each group's tasks on the cores as
// the chooser placed them (lib/exec/board_plan.h), and every output of two tokens, on emu and
// emu-rocket, is the CPU reference's bit for bit with no int16 partial clamped.
#include <gtest/gtest.h>

#include "driver/emu/kernel/fake_kernel.h"
#include "lib/api/device.h"
#include "lib/exec/executor.h"
#include "lib/exec/synthetic.h"
#include "tests/lib/exec/exec_util.h"
#include "tests/lib/exec/layer_plans.h"

namespace ork::exec {
namespace {

TEST(Executor7bInt4, TheFewestTaskLayerEqualsTheReference) {
  auto d = synthetic_desc("7b", 1, matmul::DType::int4);
  ASSERT_TRUE(d);
  const std::string path = testing::scratch("layer_7b_int4.ork");
  ASSERT_TRUE(write_synthetic(path, *d, 1));  // ork_pack's seed: widths 1344 .. 1408
  auto model = read_packed(path);
  ASSERT_TRUE(model) << model.error().message;
  const testing::LayerPlans plans = testing::layer_plans(*model, 1, 3);
  EXPECT_EQ(plans.tasks, 28);
  EXPECT_EQ(plans.fewest, 3);  // gate, up, down
  auto want = reference_chain(path, *model, 1, 2);
  ASSERT_TRUE(want) << want.error().message;
  for (const char* device : {"emu", "emu-rocket"}) {
    auto dev = api::open_device(device);
    ASSERT_TRUE(dev) << dev.error().message;
    PlanOptions o;
    o.m = 1;
    o.tokens = 2;
    o.cores = 3;
    o.budget_bytes = model->weight_bytes() * 2;
    auto plan = build_plan(*model, o);
    ASSERT_TRUE(plan) << plan.error().message;
    RunOptions ro;
    ro.inflight = 2;
    const uint64_t clamped = (*dev)->fake->stats().int4_saturated_cells;
    auto out = run_plan(path, *model, *plan, o, api::exec_device(**dev, 3), ro);
    ASSERT_TRUE(out) << out.error().message;
    EXPECT_EQ(out->stats.max_group, 3) << device;
    EXPECT_EQ(out->stats.stacked_matmuls, 12) << device;  // all but o, both tokens
    EXPECT_EQ((*dev)->fake->stats().int4_saturated_cells, clamped) << device;
    const Status same = compare_chains(*model, out->chain, *want);
    EXPECT_TRUE(same) << device << ": " << same.error().message;
  }
}

}  // namespace
}  // namespace ork::exec
