// simulateOrder: Torq's timing table (docs/sched.md section 2), exact to the cycle.
#include <gtest/gtest.h>

#include "lib/sched/simulate.h"
#include "tests/lib/sched/example_streams.h"

namespace ork::sched {
namespace {

using test::example;

TEST(Simulate, SeedExampleOneInputOrderTakes410) {
  Stream s = example("example1.stream");
  Graph g = build_graph(s).value();
  std::vector<int> input{0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
  SimResult r = simulate_order(s, g, input, {}, {}, true);
  EXPECT_EQ(r.makespan, 410);
  // Torq's example timeline: t = 0 30 130 160 260 290 390 410, slice 1 idle the whole time.
  // A wait spans from the stream reaching it (after the start's 1 cycle) to the program end.
  const std::vector<std::pair<int64_t, int64_t>> spans = {{0, 30},    {30, 130},  {31, 130},  {130, 160}, {160, 260},
                                                          {161, 260}, {260, 290}, {290, 390}, {291, 390}, {390, 410}};
  ASSERT_EQ(r.timeline.size(), spans.size());
  for (size_t i = 0; i < spans.size(); ++i) {
    EXPECT_EQ(r.timeline[i].begin, spans[i].first) << i;
    EXPECT_EQ(r.timeline[i].end, spans[i].second) << i;
  }
  EXPECT_EQ(r.core_of[1], 0);
  EXPECT_EQ(r.core_of[4], 0);
  EXPECT_EQ(r.core_of[7], 0);
  EXPECT_EQ(r.peak_bytes, 4096 + 16384 + 4096);  // o1 lives until P3: o1 + w2 + o2, then o1 + w3 + o3
}

TEST(Simulate, SeedExampleOneNewOrderTakes250) {
  Stream s = example("example1.stream");
  Graph g = build_graph(s).value();
  // L1 start P1 L2 start P2 L3 wait P1 start P3 wait P2 wait P3 S3
  std::vector<int> order{0, 1, 3, 4, 6, 2, 7, 5, 8, 9};
  std::vector<int> cores(10, -1);
  cores[1] = 0;
  cores[4] = 1;
  cores[7] = 0;
  SimResult r = simulate_order(s, g, order, cores, {}, true);
  EXPECT_EQ(r.makespan, 250);
  EXPECT_EQ(r.timeline[4].end, 92);   // L3 ends at 92
  EXPECT_EQ(r.timeline[6].begin, 130);  // P3 starts when wait P1 returns
  EXPECT_EQ(r.timeline[9].begin, 230);  // S3 after wait P3
}

TEST(Simulate, StartWithNoFreeCoreBlocksUntilOneFrees) {
  Stream s = parse_stream(
      "memory 1K\ncores 2\n"
      "start P1 cycles=100\nstart P2 cycles=100\nstart P3 cycles=100\n"
      "wait P1\nwait P2\nwait P3\nbarrier B cycles=7\n").value();
  Graph g = build_graph(s).value();
  SimResult r = simulate_order(s, g, std::vector<int>{0, 1, 2, 3, 4, 5, 6}, {}, {}, true);
  EXPECT_EQ(r.core_of[0], 0);
  EXPECT_EQ(r.core_of[1], 1);
  EXPECT_EQ(r.core_of[2], 0);
  EXPECT_EQ(r.timeline[2].begin, 100);  // core 0 frees at 100
  EXPECT_EQ(r.makespan, 207);           // wait P3 at 200, then the barrier's 7 cycles
}

TEST(Simulate, SwapDmaRunsOnTheDmaEngineBeforeItsOp) {
  Stream s = parse_stream("memory 1K\nbuffer w 64\nload L writes=w cycles=10\nstart P reads=w cycles=5\nwait P\n").value();
  Graph g = build_graph(s).value();
  std::vector<SwapDma> swaps{{1, false, 0, 64, 4}};  // a reload of w before start P
  SimResult r = simulate_order(s, g, std::vector<int>{0, 1, 2}, {}, swaps, true);
  EXPECT_EQ(r.makespan, 10 + 4 + 5);
  ASSERT_EQ(r.timeline.size(), 4u);
  EXPECT_EQ(r.timeline[1].swap, 0);
  EXPECT_EQ(r.timeline[1].begin, 10);
  EXPECT_EQ(r.timeline[2].begin, 14);
}

TEST(Simulate, LiveBytesStepFunction) {
  Stream s = parse_stream(
      "memory 1K\nbuffer a 100\nbuffer b 200\n"
      "load L writes=a cycles=10\nstart P reads=a writes=b cycles=5\nwait P\n").value();
  Graph g = build_graph(s).value();
  SimResult r = simulate_order(s, g, std::vector<int>{0, 1, 2}, {}, {}, true);
  // a born at 0; b born at the start (t = 10); both die at the wait (t = 15).
  const std::vector<std::pair<int64_t, int64_t>> live = {{0, 100}, {10, 300}, {11, 300}, {15, 0}};
  ASSERT_EQ(r.live.size(), live.size());
  for (size_t i = 0; i < live.size(); ++i) {
    EXPECT_EQ(r.live[i].time, live[i].first);
    EXPECT_EQ(r.live[i].bytes, live[i].second);
  }
  EXPECT_EQ(r.peak_bytes, 300);
}

}  // namespace
}  // namespace ork::sched
