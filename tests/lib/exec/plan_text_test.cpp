// The plan in ork_sched's text format (lib/exec/plan_text.cpp): it parses back as the same
// stream, and lib/sched's chooser run on it as ork_sched runs it (the file's policy) makes
// exactly the order the executor runs, at exactly the plan's predicted time, with the same
// lower bound; a sequential plan runs the file's input order; a matmul name the format
// cannot carry is refused.
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "lib/exec/plan_text.h"
#include "lib/exec/synthetic.h"
#include "lib/sched/bounds.h"
#include "lib/sched/chooser.h"
#include "lib/sched/graph.h"
#include "lib/sched/parse.h"
#include "lib/sched/simulate.h"
#include "tests/lib/exec/exec_util.h"

namespace ork::exec {
namespace {

PackedModel text_tiny_model(const ModelDesc& d) {
  const std::string path = testing::scratch("plan_text.ork");
  EXPECT_TRUE(write_synthetic(path, d, 1));
  auto m = read_packed(path);
  EXPECT_TRUE(m) << m.error().message;
  return *m;
}

// Budgets from roomy to the largest layer's few: the list's cap steps down at the tight ones.
class PlanText : public ::testing::TestWithParam<std::tuple<Order, int>> {};

TEST_P(PlanText, OrkSchedMakesTheOrderTheExecutorRunsAtItsPredictedTime) {
  auto d = synthetic_desc("tiny", 4, matmul::DType::int8);
  ASSERT_TRUE(d);
  const PackedModel model = text_tiny_model(*d);
  PlanOptions o;
  o.budget_bytes = static_cast<uint64_t>(std::get<1>(GetParam())) << 10;
  o.tokens = 3;
  o.order = std::get<0>(GetParam());
  auto plan = build_plan(model, o);
  ASSERT_TRUE(plan) << plan.error().message;
  auto text = format_plan(*plan, o, "m.ork");
  ASSERT_TRUE(text) << text.error().message;
  EXPECT_NE(text->find(fmt::format("# predicted_ns {} lower_bound_ns {} ", plan->predicted_ns, plan->lower_bound_ns)),
            std::string::npos);
  auto s = sched::parse_stream(*text);
  ASSERT_TRUE(s) << s.error().message;
  ASSERT_EQ(s->ops.size(), plan->stream.ops.size());
  EXPECT_EQ(s->memory_bytes, plan->stream.memory_bytes);
  for (size_t i = 0; i < s->ops.size(); ++i) {
    const sched::Op& want = plan->stream.ops[i];
    ASSERT_EQ(sched::op_label(s->ops[i]), sched::op_label(want)) << i;
    EXPECT_EQ(s->ops[i].cycles, want.kind == sched::OpKind::wait ? 0 : want.cycles) << i;
  }
  auto g = sched::build_graph(*s);
  ASSERT_TRUE(g) << g.error().message;
  EXPECT_EQ(sched::lower_bound(*s, *g).value, plan->lower_bound_ns);
  if (o.order == Order::sequential) {  // no choice: the file's input order is the order run
    std::vector<int> identity(s->ops.size());
    for (size_t i = 0; i < identity.size(); ++i) identity[i] = static_cast<int>(i);
    EXPECT_EQ(plan->order, identity);
    EXPECT_EQ(sched::simulate_order(*s, *g, identity).makespan, plan->predicted_ns);
    return;
  }
  // What ork_sched does with the file: its policy line, its slots line, default options.
  sched::Options so;
  so.policy = sched::stream_policy(*s, sched::Policy::fifo);
  auto chosen = sched::schedule(*s, *g, so);
  ASSERT_TRUE(chosen) << chosen.error().message;
  EXPECT_EQ(chosen->order, plan->order);
  EXPECT_EQ(chosen->makespan, plan->predicted_ns);
  EXPECT_EQ(chosen->pass == sched::Pass::input ? std::string("input") : sched::policy_name(chosen->policy),
            plan->policy);
  EXPECT_LE(plan->slot_total, plan->stream.memory_bytes);
}

INSTANTIATE_TEST_SUITE_P(Orders, PlanText,
                         ::testing::Combine(::testing::Values(Order::scheduled, Order::fifo, Order::sequential),
                                            ::testing::Values(56, 64, 80, 96, 1024)));

TEST(PlanText, AMatmulNameTheFormatCannotCarryIsRefused) {
  auto d = synthetic_desc("tiny", 1, matmul::DType::int8);
  ASSERT_TRUE(d);
  d->matmuls[6].name = "down proj";  // read by no other matmul, only by the layer's output
  d->output.back() = "down proj";
  const PackedModel model = text_tiny_model(*d);
  PlanOptions o;
  o.budget_bytes = 96 << 10;
  auto plan = build_plan(model, o);
  ASSERT_TRUE(plan) << plan.error().message;
  auto text = format_plan(*plan, o, "m.ork");
  ASSERT_FALSE(text);
  EXPECT_EQ(text.error().message, "the plan cannot be written in ork_sched's text format: buffer \"w0.0.down proj\" "
                                  "(a matmul name) holds a blank or one of # , [ ] : =");
}

}  // namespace
}  // namespace ork::exec
