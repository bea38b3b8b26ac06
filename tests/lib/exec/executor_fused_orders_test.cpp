// The executor runs exactly the plan's fused groups, whatever the order (lib/exec/start_queue.h):
// on an int4 model whose q/k/v and gate/up take K in two slices, in the scheduled, fifo and
// sequential orders, resident and streamed, at M = 1 and 128 (one row piece) and at M = 128 in
// two row pieces, every fused group of the plan runs as one fused group job each token on emu
// and emu-rocket, none of its members alone, three runs each, and every output is the CPU
// reference's bit for bit with no int16 partial clamped. The sequential order waits for each
// start's program before the next start comes: there a fused group's members went alone
// (each running the whole fused matmul, no fused job) while their starts were queued one by one.
#include <gtest/gtest.h>

#include <string>

#include "lib/exec/executor.h"
#include "tests/lib/exec/layer_plans.h"
#include "tests/lib/exec/sliced_model.h"

namespace ork::exec {
namespace {

struct OrdersCase {
  Order order;
  int64_t width, m;
  int layers;
  bool streamed;
};

class ExecutorFusedOrders : public ::testing::TestWithParam<OrdersCase> {};

TEST_P(ExecutorFusedOrders, EveryPlannedFusedGroupRunsFused) {
  const OrdersCase& c = GetParam();
  testing::SlicedModel* s = testing::sliced_model(c.width, c.layers);
  ASSERT_NE(s, nullptr);
  PlanOptions o = testing::sliced_options(s->model, c.m, c.streamed, true);
  o.order = c.order;
  auto plan = build_plan(s->model, o);
  ASSERT_TRUE(plan) << plan.error().message;
  const int64_t planned = testing::planned_fused_jobs(*plan, o);
  ASSERT_GE(planned, o.tokens * c.layers);  // at least one fused group a layer
  const ChainResult* want = s->reference(c.m);
  ASSERT_NE(want, nullptr);
  for (int round = 0; round < 3; ++round) {  // the same counts every run
    std::vector<testing::DeviceRun> runs;
    ASSERT_NO_FATAL_FAILURE(testing::plan_and_run_on_both(s->path, s->model, o, runs));
    for (const testing::DeviceRun& r : runs) {
      EXPECT_EQ(r.out.stats.fused_planned, planned) << r.device << " round " << round;
      EXPECT_EQ(r.out.stats.fused_groups, planned) << r.device << " round " << round;
      EXPECT_EQ(r.out.stats.fused_alone, 0) << r.device << " round " << round << ": " << r.out.stats.fused_alone_reason;
      EXPECT_EQ(r.saturated_cells, 0u) << r.device;
      const Status same = compare_chains(s->model, r.out.chain, *want);
      EXPECT_TRUE(same) << r.device << " round " << round << ": " << same.error().message;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Orders, ExecutorFusedOrders,
    ::testing::Values(OrdersCase{Order::sequential, 512, 1, 2, false}, OrdersCase{Order::sequential, 512, 1, 2, true},
                      OrdersCase{Order::sequential, 512, 128, 2, true}, OrdersCase{Order::sequential, 832, 128, 1, false},
                      OrdersCase{Order::fifo, 512, 1, 2, true}, OrdersCase{Order::scheduled, 512, 128, 2, true},
                      OrdersCase{Order::scheduled, 832, 128, 1, false}),
    [](const ::testing::TestParamInfo<OrdersCase>& i) {
      return std::string(order_name(i.param.order)) + "_w" + std::to_string(i.param.width) + "_m" +
             std::to_string(i.param.m) + (i.param.streamed ? "_streamed" : "");
    });

}  // namespace
}  // namespace ork::exec
