// Cross-cutting; exercises lib/sched/list_schedule.cpp and schedule.cpp (with simulate, graph, priority).
// The two worked examples of docs/sched.md section 4, step by step.
#include <gtest/gtest.h>

#include <algorithm>

#include "lib/sched/list_schedule.h"
#include "lib/sched/chooser.h"
#include "tests/lib/sched/example_streams.h"

namespace ork::sched {
namespace {

using test::example;
using test::labels;

TEST(SeedExample1, NewOrderMakespanAndCores) {
  Stream s = example("example1.stream");
  Schedule r = schedule(s, Options{}).value();
  EXPECT_EQ(r.makespan_input, 410);
  EXPECT_EQ(r.makespan, 250);
  EXPECT_EQ(labels(s, r.order),
            (std::vector<std::string>{"load L1", "start P1", "load L2", "start P2", "load L3", "wait P1",
                                      "start P3", "wait P2", "wait P3", "store S3"}));
  EXPECT_EQ(r.core_of[1], 0);  // P1
  EXPECT_EQ(r.core_of[4], 1);  // P2 on core 1, next to P1
  EXPECT_EQ(r.core_of[7], 0);  // P3
  EXPECT_EQ(r.pass, Pass::zero);
  EXPECT_EQ(r.cap_percent, 100);
  EXPECT_TRUE(r.swaps.empty());
}

TEST(SeedExample1, TheTenStepsOfTheSeedTable) {
  Stream s = example("example1.stream");
  Graph g = build_graph(s).value();
  std::vector<Decision> log;
  ListParams params;
  params.cap_bytes = s.memory_bytes;
  ListResult r = list_schedule(s, g, make_priority(s, g, Policy::fifo), params, &log);
  ASSERT_EQ(log.size(), 10u);
  const std::vector<Rule> rules = {Rule::dma,  Rule::start, Rule::dma,  Rule::start, Rule::dma,
                                   Rule::wait, Rule::start, Rule::wait, Rule::wait,  Rule::dma};
  const std::vector<int64_t> t_after = {30, 31, 61, 62, 92, 130, 131, 161, 230, 250};
  for (size_t i = 0; i < log.size(); ++i) {
    EXPECT_EQ(log[i].rule, rules[i]) << "step " << i + 1;
    EXPECT_EQ(log[i].t_after, t_after[i]) << "step " << i + 1;
  }
  EXPECT_EQ(r.makespan, 250);
}

// Example 2 runs with urgentStarts = 1 as in the worked example (cap 100K, prefetchCap 40K).
TEST(SeedExample2, L3HeldByPrefetchCapThenUrgentOnceP2Starts) {
  Stream s = example("example2.stream");
  Graph g = build_graph(s).value();
  std::vector<Decision> log;
  ListParams params;
  params.cap_bytes = s.memory_bytes;
  params.urgent_starts = 1;
  ListResult r = list_schedule(s, g, make_priority(s, g, Policy::fifo), params, &log);
  auto step_emitting = [&](const std::string& label) {
    return std::find_if(log.begin(), log.end(), [&](const Decision& d) { return op_label(s.ops[d.op]) == label; });
  };
  auto l2 = step_emitting("load L2");
  ASSERT_NE(l2, log.end());
  EXPECT_TRUE(l2->limits.urgent);  // P2 is the next program
  EXPECT_EQ(l2->limits.live, 30 << 10);
  EXPECT_EQ(l2->limits.bytes, 30 << 10);
  EXPECT_EQ(l2->limits.reserve, 0);
  EXPECT_EQ(l2->limits.limit, 100 << 10);  // 30 + 30 + 0 = 60K <= 100K: emit

  auto next = l2 + 1;  // P1 still runs: the DMA engine looks at L3 and holds it back
  ASSERT_FALSE(next->held.empty());
  const Held& l3 = next->held.front();
  EXPECT_EQ(op_label(s.ops[l3.op]), "load L3");
  EXPECT_FALSE(l3.urgent);
  EXPECT_STREQ(l3.reason, "prefetch cap");
  EXPECT_EQ(l3.live, 60 << 10);
  EXPECT_EQ(l3.bytes, 30 << 10);
  EXPECT_EQ(l3.reserve, 30 << 10);  // P2's output, born when P2 starts before P3
  EXPECT_EQ(l3.limit, 40 << 10);    // 60 + 30 + 30 = 120K > 40K: wait
  EXPECT_EQ(op_label(s.ops[next->op]), "wait P1");

  auto p2 = step_emitting("start P2");
  auto l3_emit = step_emitting("load L3");
  ASSERT_NE(l3_emit, log.end());
  EXPECT_EQ(l3_emit, p2 + 1);  // right after P2 starts, L3 is urgent and may fill cap
  EXPECT_TRUE(l3_emit->limits.urgent);
  EXPECT_EQ(l3_emit->limits.limit, 100 << 10);
  EXPECT_EQ(l3_emit->limits.live, 60 << 10);  // w2 and o2

  EXPECT_EQ(labels(s, r.order),
            (std::vector<std::string>{"load L1", "start P1", "load L2", "wait P1", "start P2", "load L3",
                                      "wait P2", "start P3", "store S2", "load L4", "wait P3", "start P4",
                                      "store S3", "load L5", "wait P4", "start P5", "store S4", "wait P5",
                                      "store S5"}));
  EXPECT_EQ(r.makespan, 550);  // input order: 730
  EXPECT_LE(r.peak_bytes, 90 << 10);
}

TEST(SeedExample2, UrgentStartsDecideHowFarAheadLoadsGo) {
  Stream s = example("example2.stream");
  s.memory_bytes = 200 << 10;  // room for every weight, so only the limits hold loads back
  Graph g = build_graph(s).value();
  ListParams params;
  params.cap_bytes = s.memory_bytes;
  params.urgent_starts = 5;  // every program is near: loads may fill cap (reserve included)
  ListResult all = list_schedule(s, g, make_priority(s, g, Policy::fifo), params);
  const std::vector<std::string> got = labels(s, all.order);
  EXPECT_EQ(std::vector<std::string>(got.begin() + 2, got.begin() + 6),
            (std::vector<std::string>{"load L2", "load L3", "load L4", "load L5"}));
  EXPECT_EQ(all.peak_bytes, 150 << 10);  // five weights while P1 runs
  params.urgent_starts = 1;  // prefetchCap = 80K: 60 + 30 + 30 = 120K holds L3 back
  ListResult near = list_schedule(s, g, make_priority(s, g, Policy::fifo), params);
  EXPECT_EQ(labels(s, near.order)[3], "wait P1");
  EXPECT_EQ(near.peak_bytes, 90 << 10);
}

}  // namespace
}  // namespace ork::sched
