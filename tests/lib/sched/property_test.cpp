// Cross-cutting; exercises lib/sched/chooser.cpp, list_schedule.cpp, priority.cpp, placement.cpp, bounds.cpp.
// Properties over thousands of random streams (ORK_SCHED_PROPERTY_STREAMS, default 2000):
// the schedule is a permutation that keeps every edge, re-simulating it gives the reported
// makespan, it is never above the input order, pass 0 stays within memory, it never
// deadlocks, the critical-path policy never loses to FIFO, the best-of-rules policy never
// loses to critical path, and the bound holds. listSchedule itself, with and without DMA
// lookahead: its order keeps every edge, its prediction is what simulateOrder gives, and an
// order it placed at cap = memory with no forced buffer is one the pool places (schedule()
// relies on that instead of walking the pool again).
#include <gtest/gtest.h>

#include <cstdlib>

#include "lib/sched/generate.h"
#include "lib/sched/placement.h"
#include "lib/sched/chooser.h"

namespace ork::sched {
namespace {

int stream_count() {
  const char* env = std::getenv("ORK_SCHED_PROPERTY_STREAMS");
  return env ? std::atoi(env) : 2000;
}

RandomParams params_for(uint64_t seed) {
  RandomParams p;
  p.programs = 2 + static_cast<int>(seed % 23);
  p.cores = 1 + static_cast<int>(seed % 3);
  // From roomy to tight: tight memory makes the caps, the reserve and pass 1 work.
  p.memory_bytes = int64_t{16 + 48 * static_cast<int>(seed % 6)} << 10;
  p.max_outstanding = 1 + static_cast<int>(seed % 3);
  p.barrier_percent = seed % 5 == 0 ? 10 : 2;
  p.max_buffer_percent = seed % 4 == 3 ? 30 : 10;  // every fourth stream is tight: swaps
  return p;
}

void check(const Stream& s, const Graph& g, const Schedule& r, uint64_t seed) {
  SCOPED_TRACE("seed " + std::to_string(seed));
  ASSERT_EQ(r.order.size(), s.ops.size());  // complete: no deadlock
  ASSERT_TRUE(order_respects_graph(g, r.order));
  for (size_t op = 0; op < s.ops.size(); ++op)
    ASSERT_EQ(r.core_of[op] >= 0, s.ops[op].kind == OpKind::start);
  const SimResult again = simulate_order(s, g, r.order, r.core_of, r.swaps);
  ASSERT_EQ(again.makespan, r.makespan);
  ASSERT_LE(r.makespan, r.makespan_input_priced);
  ASSERT_LE(r.bounds.value, r.makespan);
  ASSERT_EQ(again.peak_bytes, r.peak_bytes);
  if (r.pass == Pass::zero) {
    ASSERT_LE(r.peak_bytes, s.memory_bytes);
    ASSERT_TRUE(r.swaps.empty());
    ASSERT_TRUE(place_order(s, g, r.order, {s.memory_bytes, 8, 8192, 0}, false, 1.0)->placed);
  }
}

TEST(Properties, RandomStreams) {
  const int count = stream_count();
  int passes[3] = {0, 0, 0}, cp_wins = 0, best_wins = 0, cannot_run = 0;
  for (uint64_t seed = 1; seed <= static_cast<uint64_t>(count); ++seed) {
    const Stream s = make_random_stream(seed, params_for(seed));
    Result<Graph> g = build_graph(s);
    ASSERT_TRUE(g) << g.error().message;
    Result<Schedule> fifo = schedule(s, *g, Options{});
    if (!fifo) {  // the generator may make a stream whose own input order cannot run
      ASSERT_NE(fifo.error().message.find("the input order cannot run"), std::string::npos);
      ++cannot_run;
      continue;
    }
    check(s, *g, *fifo, seed);
    Options o;
    o.policy = Policy::critical_path;
    Schedule cp = schedule(s, *g, o).value();
    check(s, *g, cp, seed);
    ASSERT_LE(cp.makespan, fifo->makespan) << "seed " << seed;
    cp_wins += cp.makespan < fifo->makespan;
    o.policy = Policy::best;
    Schedule best = schedule(s, *g, o).value();
    check(s, *g, best, seed);
    ASSERT_LE(best.makespan, cp.makespan) << "seed " << seed;
    best_wins += best.makespan < cp.makespan;
    ++passes[static_cast<int>(fifo->pass)];
    if (HasFatalFailure()) return;
  }
  std::printf("%d streams: pass 0 %d, pass 1 %d, input %d, input order cannot run %d; critical path "
              "faster on %d, best of rules faster than it on %d\n", count, passes[0], passes[1], passes[2], cannot_run,
              cp_wins, best_wins);
  EXPECT_GT(passes[0], 0);
  EXPECT_GT(passes[1], 0);  // the tight memories do reach pass 1
}

TEST(Properties, ListScheduleWithAndWithoutLookahead) {
  int placed_by_list = 0;
  for (uint64_t seed = 1; seed <= 600; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    const Stream s = make_random_stream(seed, params_for(seed));
    Graph g = build_graph(s).value();
    for (Policy policy : {Policy::fifo, Policy::critical_path}) {
      const Priority prio = make_priority(s, g, policy);
      for (bool lookahead : {false, true}) {
        ListParams lp;
        lp.cap_bytes = s.memory_bytes;
        lp.prefetch_percent = static_cast<int>(seed * 13 % 101);
        lp.dma_lookahead = lookahead;
        const ListResult l = list_schedule(s, g, prio, lp);
        ASSERT_EQ(l.order.size(), s.ops.size());
        ASSERT_TRUE(order_respects_graph(g, l.order));
        const SimResult sim = simulate_order(s, g, l.order, l.core_of);
        ASSERT_EQ(sim.makespan, l.makespan);
        ASSERT_EQ(sim.peak_bytes, l.peak_bytes);
        if (l.forced == 0) {
          ASSERT_LE(l.peak_bytes, s.memory_bytes);
          Result<Placement> p = place_order(s, g, l.order, {s.memory_bytes, 8, 8192, 0}, false, 1.0);
          ASSERT_TRUE(p && p->placed);
          ++placed_by_list;
        }
      }
    }
    if (HasFatalFailure()) return;
  }
  EXPECT_GT(placed_by_list, 1000);  // most of the 2,400 runs place: the check is exercised
}

TEST(Properties, KnobsKeepTheGuarantees) {
  for (uint64_t seed = 1; seed <= 300; ++seed) {
    const Stream s = make_random_stream(seed, params_for(seed));
    Graph g = build_graph(s).value();
    Options o;
    o.cap_percent = 50 + static_cast<int>(seed % 51);
    o.prefetch_percent = static_cast<int>(seed * 7 % 101);
    o.urgent_starts = static_cast<int>(seed % 6);
    o.window = 1 + static_cast<int>(seed % 40);
    o.core_choice = seed % 2 ? CoreChoice::least_loaded : CoreChoice::first_free;
    Result<Schedule> r = schedule(s, g, o);
    if (!r) continue;
    check(s, g, *r, seed);
    if (HasFatalFailure()) return;
  }
}

}  // namespace
}  // namespace ork::sched
