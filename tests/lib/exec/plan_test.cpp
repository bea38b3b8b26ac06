// The plan: the stream's order is valid, the slots fit the budget, a slot is reused only
// after the wait of its previous tensor's program, and a too-small budget is named.
#include <set>

#include <gtest/gtest.h>

#include "lib/exec/plan.h"
#include "lib/exec/synthetic.h"
#include "lib/sched/graph.h"
#include "tests/lib/exec/exec_util.h"

namespace ork::exec {
namespace {

PackedModel tiny_model(int layers) {
  auto d = synthetic_desc("tiny", layers, matmul::DType::int8);
  EXPECT_TRUE(d);
  const std::string path = testing::scratch("plan.ork");
  EXPECT_TRUE(write_synthetic(path, *d, 1));
  auto m = read_packed(path);
  EXPECT_TRUE(m);
  return *m;
}

struct Case {
  Order order;
  uint64_t budget;
  int64_t m;
};

class PlanOrders : public ::testing::TestWithParam<Case> {};

TEST_P(PlanOrders, ValidOrderSlotsUnderBudgetReuseAfterWait) {
  const PackedModel model = tiny_model(6);
  PlanOptions o;
  o.order = GetParam().order;
  o.budget_bytes = GetParam().budget;
  o.tokens = 3;
  o.m = GetParam().m;
  auto p = build_plan(model, o);
  ASSERT_TRUE(p) << p.error().message;
  auto g = sched::build_graph(p->stream);
  ASSERT_TRUE(g);
  EXPECT_TRUE(sched::order_respects_graph(*g, p->order));
  EXPECT_EQ(std::set<int>(p->order.begin(), p->order.end()).size(), p->stream.ops.size());
  EXPECT_LE(p->slot_total, o.budget_bytes);
  uint64_t sum = 0;
  for (auto b : p->slot_bytes) sum += b;
  EXPECT_EQ(sum, p->slot_total);
  // Walk the order: a load may only take a slot that no live tensor holds.
  std::vector<int> holder(p->slot_bytes.size(), -1);  // op index of the load in the slot
  for (int op : p->order) {
    const Step& s = p->op_steps[static_cast<size_t>(op)];
    if (s.kind == Step::load) {
      ASSERT_EQ(holder[static_cast<size_t>(s.slot)], -1) << "slot " << s.slot << " reused before its wait";
      holder[static_cast<size_t>(s.slot)] = op;
      EXPECT_GE(p->slot_bytes[static_cast<size_t>(s.slot)], model.tensor(s.layer, s.matmul).bytes);
    } else if (s.kind == Step::compute) {
      EXPECT_EQ(holder[static_cast<size_t>(s.slot)], op - 1) << "a program reads a slot its load does not hold";
    } else {
      holder[static_cast<size_t>(s.slot)] = -1;
    }
  }
  if (o.order == Order::sequential) {
    EXPECT_EQ(p->slot_bytes.size(), 2u);  // a 4 KiB and a 12 KiB slot
  }
  EXPECT_GE(p->predicted_ns, p->lower_bound_ns);
}

INSTANTIATE_TEST_SUITE_P(Budgets, PlanOrders,
                         ::testing::Values(Case{Order::scheduled, 56 << 10, 1}, Case{Order::scheduled, 96 << 10, 1},
                                           Case{Order::fifo, 56 << 10, 1}, Case{Order::fifo, 1 << 20, 64},
                                           Case{Order::sequential, 56 << 10, 1}, Case{Order::scheduled, 1 << 20, 128}));

TEST(Plan, ScheduledIsNeverSlowerThanSequentialInTheModel) {
  const PackedModel model = tiny_model(6);
  PlanOptions o;
  o.budget_bytes = 96 << 10;
  o.tokens = 2;
  o.order = Order::sequential;
  auto seq = build_plan(model, o);
  o.order = Order::scheduled;
  auto sch = build_plan(model, o);
  ASSERT_TRUE(seq && sch);
  EXPECT_LE(sch->predicted_ns, seq->predicted_ns);
}

TEST(Plan, BudgetSmallerThanTheLargestLayerIsNamed) {
  const PackedModel model = tiny_model(2);
  PlanOptions o;
  o.budget_bytes = 8192;
  auto p = build_plan(model, o);
  ASSERT_FALSE(p);
  EXPECT_NE(p.error().message.find("smaller than the largest layer"), std::string::npos) << p.error().message;
}

}  // namespace
}  // namespace ork::exec
