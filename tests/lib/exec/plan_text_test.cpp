// The plan in ork_sched's text format (lib/exec/plan_text.cpp): it parses back as the same
// stream with its ops in the plan's order, so that lib/sched prices it as its input order at
// exactly the plan's predicted time, with the same lower bound; a matmul name the format
// cannot carry is refused.
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "lib/exec/plan_text.h"
#include "lib/exec/synthetic.h"
#include "lib/sched/bounds.h"
#include "lib/sched/graph.h"
#include "lib/sched/parse.h"
#include "lib/sched/simulate.h"
#include "tests/lib/exec/exec_util.h"

namespace ork::exec {
namespace {

PackedModel tiny_model(const ModelDesc& d) {
  const std::string path = testing::scratch("plan_text.ork");
  EXPECT_TRUE(write_synthetic(path, d, 1));
  auto m = read_packed(path);
  EXPECT_TRUE(m) << m.error().message;
  return *m;
}

class PlanText : public ::testing::TestWithParam<Order> {};

TEST_P(PlanText, ParsesBackInThePlansOrderAtItsPredictedTime) {
  auto d = synthetic_desc("tiny", 4, matmul::DType::int8);
  ASSERT_TRUE(d);
  const PackedModel model = tiny_model(*d);
  PlanOptions o;
  o.budget_bytes = 96 << 10;
  o.tokens = 3;
  o.order = GetParam();
  auto plan = build_plan(model, o);
  ASSERT_TRUE(plan) << plan.error().message;
  auto text = format_plan(*plan, o, "m.ork");
  ASSERT_TRUE(text) << text.error().message;
  EXPECT_NE(text->find(fmt::format("# predicted_ns {} lower_bound_ns {} ", plan->predicted_ns, plan->lower_bound_ns)),
            std::string::npos);
  auto s = sched::parse_stream(*text);
  ASSERT_TRUE(s) << s.error().message;
  ASSERT_EQ(s->ops.size(), plan->order.size());
  EXPECT_EQ(s->memory_bytes, plan->stream.memory_bytes);
  for (size_t i = 0; i < s->ops.size(); ++i) {
    const sched::Op& want = plan->stream.ops[static_cast<size_t>(plan->order[i])];
    ASSERT_EQ(sched::op_label(s->ops[i]), sched::op_label(want)) << i;
    EXPECT_EQ(s->ops[i].cycles, want.kind == sched::OpKind::wait ? 0 : want.cycles) << i;
  }
  auto g = sched::build_graph(*s);
  ASSERT_TRUE(g) << g.error().message;
  std::vector<int> identity(s->ops.size());
  for (size_t i = 0; i < identity.size(); ++i) identity[i] = static_cast<int>(i);
  EXPECT_EQ(sched::simulate_order(*s, *g, identity).makespan, plan->predicted_ns);
  EXPECT_EQ(sched::lower_bound(*s, *g).value, plan->lower_bound_ns);
}

INSTANTIATE_TEST_SUITE_P(Orders, PlanText, ::testing::Values(Order::scheduled, Order::fifo, Order::sequential));

TEST(PlanText, AMatmulNameTheFormatCannotCarryIsRefused) {
  auto d = synthetic_desc("tiny", 1, matmul::DType::int8);
  ASSERT_TRUE(d);
  d->matmuls[6].name = "down proj";  // read by no other matmul, only by the layer's output
  d->output.back() = "down proj";
  const PackedModel model = tiny_model(*d);
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
