// lib/sched/chooser.cpp: the one choice of a schedule (chooser.h): its options checked, the
// swaps of pass 1 committed and priced, pass 1 when every order swaps, FIFO kept when the
// critical-path candidate is slower, and under slots (the executor's memory) the cap stepped
// down until the slots fit, with no pass 1.
#include <gtest/gtest.h>

#include <thread>
#include <utility>
#include <vector>

#include "lib/sched/generate.h"
#include "lib/sched/parse.h"
#include "lib/sched/chooser.h"
#include "lib/sched/simulate.h"
#include "lib/sched/slots.h"
#include "tests/lib/sched/example_streams.h"

namespace ork::sched {
namespace {

using test::kReload;

// Past 65,536 ops schedule() works beside itself on second threads (beside.h). Three callers
// at once on one shared stream and graph (fifo, critical path, and the slots' model) each get
// exactly the schedule a lone call gives: order, cores, makespan, attempts and bounds.
TEST(Chooser, CallersOnThreadsGetTheLoneCallsSchedules) {
  RandomParams p;
  p.programs = 20000;
  p.memory_bytes = 1 << 20;
  p.max_buffer_percent = 4;
  p.max_outstanding = 2;
  const Stream pool_stream = make_random_stream(9, p);
  ASSERT_GE(pool_stream.ops.size(), 65536u);
  Stream slot_stream = pool_stream;
  slot_stream.slot_align_bytes = 4096;
  const Graph g = build_graph(pool_stream).value();
  Options fifo, cp;
  cp.policy = Policy::critical_path;
  const std::vector<std::pair<const Stream*, Options>> calls = {
      {&pool_stream, fifo}, {&pool_stream, cp}, {&slot_stream, fifo}};
  std::vector<Schedule> alone;
  for (const auto& [s, o] : calls) alone.push_back(schedule(*s, g, o).value());
  std::vector<Result<Schedule>> together(calls.size(), make_error(-EINVAL, "not run"));
  std::vector<std::thread> threads;
  for (size_t i = 0; i < calls.size(); ++i)
    threads.emplace_back([&, i] { together[i] = schedule(*calls[i].first, g, calls[i].second); });
  for (std::thread& t : threads) t.join();
  for (size_t i = 0; i < calls.size(); ++i) {
    ASSERT_TRUE(together[i]) << i << ": " << together[i].error().message;
    const Schedule& a = alone[i];
    const Schedule& b = *together[i];
    EXPECT_EQ(a.order, b.order) << i;
    EXPECT_EQ(a.core_of, b.core_of) << i;
    EXPECT_EQ(a.makespan, b.makespan) << i;
    EXPECT_EQ(a.pass, b.pass) << i;
    EXPECT_EQ(a.attempts.size(), b.attempts.size()) << i;
    EXPECT_EQ(a.bounds.value, b.bounds.value) << i;
    EXPECT_EQ(a.bounds.pipeline, b.bounds.pipeline) << i;
  }
}

TEST(Placement, ScheduleIncludesTheSwapsItCommits) {
  Stream s = parse_stream(kReload).value();
  Graph g = build_graph(s).value();
  Schedule r = schedule(s, g, Options{}).value();
  EXPECT_EQ(r.makespan_input_priced, r.makespan_input + 10);  // the input order pays one reload
  EXPECT_LE(r.makespan, r.makespan_input_priced);
  EXPECT_LT(r.makespan, r.makespan_input_priced);  // P3 moves up, before c needs b's room
  const SimResult again = simulate_order(s, g, r.order, r.core_of, r.swaps);
  EXPECT_EQ(again.makespan, r.makespan);
}

// b lives from P1 to P3, and P2 (after P1, before P3) needs more than what b leaves: every
// order swaps, so pass 0 places nothing. Pass 1 prices the candidates with their swaps and
// keeps one that still wins, because the independent Q now overlaps.
TEST(Placement, PassOneWhenEveryOrderSwaps) {
  Stream s = parse_stream(
      "memory 256\ncores 2\nbuffer b 128\nbuffer e 8\nbuffer w 192\nbuffer d 8\nbuffer q 8\n"
      "load Lb writes=b cycles=10\nstart P1 reads=b writes=e cycles=40\nwait P1\n"
      "load Lw writes=w cycles=15\nstart P2 reads=e,w writes=d cycles=40\nwait P2\n"
      "start P3 reads=b,d cycles=40\nwait P3\n"
      "load Lq writes=q cycles=30\nstart Q reads=q cycles=100\nwait Q\n").value();
  Graph g = build_graph(s).value();
  Schedule r = schedule(s, g, Options{}).value();
  for (const Attempt& a : r.attempts) {
    EXPECT_TRUE(a.pass != Pass::zero || !a.placed);
  }
  EXPECT_EQ(r.pass, Pass::one);
  EXPECT_FALSE(r.swaps.empty());
  EXPECT_GT(r.makespan_input_priced, r.makespan_input);
  EXPECT_LT(r.makespan, r.makespan_input_priced);
  EXPECT_EQ(simulate_order(s, g, r.order, r.core_of, r.swaps).makespan, r.makespan);
}

TEST(Placement, OptionsAreChecked) {
  Stream s = parse_stream(kReload).value();
  Options o;
  o.cap_percent = 0;
  EXPECT_EQ(schedule(s, o).error().message, "cap percent must be 1..100");
  o = Options{};
  o.window = 0;
  EXPECT_EQ(schedule(s, o).error().message, "window must be >= 1");
  o = Options{};
  o.pool.alignment_bytes = 3;
  EXPECT_EQ(schedule(s, o).error().message, "pool alignment 3 is not a power of two");
}

TEST(CriticalPath, KeepsFifoWhenFifoIsFaster) {
  // On this decode stream FIFO's candidate is faster; the final step keeps it.
  DecodeParams p;
  p.layers = 2;
  p.tiles = 2;
  p.tile_bytes = 128 << 10;
  Stream s = make_transformer_decode(p);
  Graph g = build_graph(s).value();
  Options o;
  o.policy = Policy::critical_path;
  Schedule cp = schedule(s, g, o).value();
  Schedule fifo = schedule(s, g, Options{}).value();
  EXPECT_EQ(cp.makespan, fifo.makespan);
  EXPECT_EQ(cp.policy, Policy::fifo);
  bool tried = false;
  for (const Attempt& a : cp.attempts)
    if (a.policy == Policy::critical_path) tried = tried || a.predicted > fifo.makespan;
  EXPECT_TRUE(tried);
}

// Under slots every committed order's slots fit memory, the caps tried step down by 10 % of
// memory, nothing is priced with swaps, and on tight decode streams a cap below 100 % is
// what fits (slots fragment where the list's pool does not).
TEST(Slots, TheCapStepsDownUntilTheSlotsFit) {
  int lowered = 0;
  for (int64_t memory_k : {160, 192, 224, 256, 320, 384, 512}) {
    DecodeParams p;
    p.layers = 3;
    p.memory_bytes = memory_k << 10;
    Stream s = make_transformer_decode(p);
    s.slot_align_bytes = 4096;
    Graph g = build_graph(s).value();
    Options o;
    o.policy = Policy::critical_path;
    Schedule r = schedule(s, g, o).value();
    int expected_cap = 100;
    for (const Attempt& a : r.attempts) {
      EXPECT_EQ(a.pass, Pass::zero) << memory_k;
      if (a.policy != Policy::fifo) continue;
      EXPECT_EQ(a.cap_percent, expected_cap) << memory_k;
      expected_cap = a.placed ? 100 : expected_cap - 10;
    }
    if (r.pass == Pass::input) continue;
    EXPECT_LE(place_slots(g, r.order).total_bytes, s.memory_bytes) << memory_k;
    EXPECT_EQ(simulate_order(s, g, r.order).makespan, r.makespan) << memory_k;
    EXPECT_TRUE(r.swaps.empty());
    lowered += r.cap_percent < 100;
  }
  EXPECT_GT(lowered, 0);
}

}  // namespace
}  // namespace ork::sched
