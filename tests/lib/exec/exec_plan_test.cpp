// The plan: the stream's order is valid, the slots fit the budget, a slot is reused only
// after the wait of its previous tensor's program, and a too-small budget is named.
#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include <gtest/gtest.h>

#include "lib/exec/exec_plan.h"
#include "lib/exec/synthetic.h"
#include "lib/sched/graph.h"
#include "tests/lib/exec/exec_util.h"

namespace ork::exec {
namespace {

PackedModel plan_tiny_model(int layers) {
  auto d = synthetic_desc("tiny", layers, matmul::DType::int8);
  EXPECT_TRUE(d);
  const std::string path = testing::scratch("plan.ork");
  EXPECT_TRUE(write_synthetic(path, *d, 1));
  auto m = read_packed(path);
  EXPECT_TRUE(m);
  return *m;
}

struct PlanCase {
  Order order;
  uint64_t budget;
  int64_t m;
};

class PlanOrders : public ::testing::TestWithParam<PlanCase> {};

TEST_P(PlanOrders, ValidOrderSlotsUnderBudgetReuseAfterWait) {
  const PackedModel model = plan_tiny_model(6);
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
  // Walk the order: a load may only take a slot that no live tensor holds; a tensor lives
  // until the wait of the last program that reads it (a pinned one: every token's).
  std::vector<int> holder(p->slot_bytes.size(), -1);  // op index of the load in the slot
  std::map<int, int> readers;                         // load op -> programs not yet waited
  for (size_t i = 0; i < p->op_steps.size(); ++i)
    if (p->op_steps[i].kind == Step::compute) ++readers[p->load_of[i]];
  for (int op : p->order) {
    const Step& s = p->op_steps[static_cast<size_t>(op)];
    const int load = p->load_of[static_cast<size_t>(op)];
    if (s.kind == Step::load) {
      ASSERT_EQ(load, op);
      ASSERT_EQ(holder[static_cast<size_t>(s.slot)], -1) << "slot " << s.slot << " reused before its wait";
      holder[static_cast<size_t>(s.slot)] = op;
      EXPECT_GE(p->slot_bytes[static_cast<size_t>(s.slot)], model.tensor(s.layer, s.matmul).bytes);
    } else if (s.kind == Step::compute) {
      EXPECT_EQ(holder[static_cast<size_t>(s.slot)], load) << "a program reads a slot its load does not hold";
      const Step& l = p->op_steps[static_cast<size_t>(load)];
      EXPECT_EQ(std::make_pair(l.layer, l.matmul), std::make_pair(s.layer, s.matmul)) << "another tensor's load";
    } else if (--readers[load] == 0) {
      holder[static_cast<size_t>(s.slot)] = -1;
    }
  }
  if (o.order == Order::sequential) {
    EXPECT_EQ(p->slot_bytes.size(), 2u);  // a 4 KiB and a 12 KiB slot
  }
  EXPECT_GE(p->predicted_ns, p->lower_bound_ns);
}

INSTANTIATE_TEST_SUITE_P(Budgets, PlanOrders,
                         ::testing::Values(PlanCase{Order::scheduled, 56 << 10, 1}, PlanCase{Order::scheduled, 96 << 10, 1},
                                           PlanCase{Order::fifo, 56 << 10, 1}, PlanCase{Order::fifo, 1 << 20, 64},
                                           PlanCase{Order::sequential, 56 << 10, 1}, PlanCase{Order::scheduled, 1 << 20, 128}));

// The residency rule: with room for the whole model every tensor is read once, by token 0;
// with room for two layers and a half, the first layer and a half stay; with less, or one
// token, or pin = false, nothing does.
TEST(Plan, TensorsThatFitArePinnedAcrossTokens) {
  const PackedModel model = plan_tiny_model(6);
  uint64_t layer = 0;
  for (size_t j = 0; j < model.desc.matmuls.size(); ++j) layer += align_up(model.tensor(0, static_cast<int>(j)).bytes, 4096);
  auto loads = [](const ExecPlan& p) {
    return std::count_if(p.op_steps.begin(), p.op_steps.end(), [](const Step& s) { return s.kind == Step::load; });
  };
  PlanOptions o;
  o.tokens = 3;
  o.budget_bytes = 6 * layer;
  auto all = build_plan(model, o);
  ASSERT_TRUE(all) << all.error().message;
  EXPECT_EQ(all->pinned_bytes, 6 * layer);
  EXPECT_EQ(loads(*all), 6 * 7);
  EXPECT_EQ(all->computes, 3 * 6 * 7);
  EXPECT_LE(all->slot_total, o.budget_bytes);
  o.budget_bytes = 3 * layer + layer / 2;
  auto part = build_plan(model, o);
  ASSERT_TRUE(part) << part.error().message;
  const auto pinned = std::count(part->pinned.begin(), part->pinned.end(), true);
  EXPECT_GE(pinned, 7);  // layer 0 at least
  EXPECT_LT(pinned, 6 * 7);
  for (size_t i = 0; i < part->pinned.size(); ++i) EXPECT_EQ(part->pinned[i], static_cast<long>(i) < pinned) << i;
  EXPECT_EQ(loads(*part), pinned + 3 * (6 * 7 - pinned));
  EXPECT_LE(part->slot_total, o.budget_bytes);
  for (auto [tokens, budget, pin] : {std::tuple{3, 2 * layer, true}, std::tuple{1, 6 * layer, true},
                                     std::tuple{3, 6 * layer, false}}) {
    o.tokens = tokens;
    o.budget_bytes = budget;
    o.pin = pin;
    auto none = build_plan(model, o);
    ASSERT_TRUE(none) << none.error().message;
    EXPECT_EQ(none->pinned_bytes, 0u);
    EXPECT_EQ(loads(*none), tokens * 6 * 7);
  }
}

TEST(Plan, ScheduledIsNeverSlowerThanSequentialInTheModel) {
  const PackedModel model = plan_tiny_model(6);
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

// The stream's tables are reserved from the op count the plan computes before building: it
// must be the stream's (a start and a wait per matmul and token, a load per token, or one for
// a pinned tensor), and a plan past lib/sched's bound is refused before it is built, naming
// its tokens and op count.
TEST(Plan, OpCountIsKnownBeforeBuildingAndBoundedByTheScheduler) {
  const PackedModel model = plan_tiny_model(3);
  const auto tensors = static_cast<int64_t>(3 * model.desc.matmuls.size());
  PlanOptions o;
  o.budget_bytes = 1 << 30;  // every tensor pinned across tokens
  o.tokens = 4;
  auto pinned = build_plan(model, o);
  ASSERT_TRUE(pinned) << pinned.error().message;
  EXPECT_EQ(static_cast<int64_t>(pinned->stream.ops.size()), tensors + 2 * 4 * tensors);
  EXPECT_EQ(pinned->stream.ops.capacity(), pinned->stream.ops.size());
  o.tokens = 1;  // one token pins nothing: a load per tensor
  auto once = build_plan(model, o);
  ASSERT_TRUE(once) << once.error().message;
  EXPECT_EQ(static_cast<int64_t>(once->stream.ops.size()), 3 * tensors);
  o.tokens = 100000;
  auto huge = build_plan(model, o);
  ASSERT_FALSE(huge);
  const int64_t ops = tensors + 2 * 100000 * tensors;
  EXPECT_NE(huge.error().message.find("100000 tokens"), std::string::npos) << huge.error().message;
  EXPECT_NE(huge.error().message.find("has " + std::to_string(ops) + " ops"), std::string::npos) << huge.error().message;
}

TEST(Plan, BudgetSmallerThanTheLargestLayerIsNamed) {
  const PackedModel model = plan_tiny_model(2);
  PlanOptions o;
  o.budget_bytes = 8192;
  auto p = build_plan(model, o);
  ASSERT_FALSE(p);
  EXPECT_NE(p.error().message.find("smaller than the largest layer"), std::string::npos) << p.error().message;
}

// The NPU window holds the slots as the budget does: one smaller than the largest layer is
// refused naming the layer (the same layer and bytes as the budget's message), and one
// between the largest layer and the budget bounds the slots instead of the budget.
TEST(Plan, WindowSmallerThanTheLargestLayerIsNamedAndBoundsTheSlots) {
  const PackedModel model = plan_tiny_model(3);
  PlanOptions o;
  o.budget_bytes = 8192;
  auto by_budget = build_plan(model, o);
  ASSERT_FALSE(by_budget);
  const std::string& b = by_budget.error().message;
  const std::string layer = b.substr(b.find(" (layer "));  // " (layer L, N bytes)"
  o.budget_bytes = 1 << 20;
  o.window_bytes = 8192;
  auto by_window = build_plan(model, o);
  ASSERT_FALSE(by_window);
  EXPECT_EQ(by_window.error().message, "NPU window 8192 bytes is smaller than the largest layer" + layer);
  const uint64_t largest = std::stoull(layer.substr(layer.find(", ") + 2));
  o.window_bytes = largest + 4096;
  o.tokens = 2;
  auto p = build_plan(model, o);
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_EQ(p->stream.memory_bytes, static_cast<int64_t>(largest + 4096));
  EXPECT_LE(p->slot_total, largest + 4096);
  EXPECT_EQ(slot_limit(o), largest + 4096);
}

}  // namespace
}  // namespace ork::exec
