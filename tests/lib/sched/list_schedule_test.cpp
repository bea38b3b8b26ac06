// lib/sched/list_schedule.cpp: listSchedule's decisions beyond the worked examples
// (examples_test.cpp): rule 2's barrier check (docs/sched.md "Programs across a barrier"): a
// program whose wait comes after a barrier may take the last free core only once every
// program that ends before that barrier has started; and the core choice.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "lib/sched/list_schedule.h"
#include "lib/sched/parse.h"
#include "lib/sched/chooser.h"
#include "tests/lib/sched/example_streams.h"

namespace ork::sched {
namespace {

using test::labels;

// PA and PB run across barrier B; PC ends before B but its weights load first; LD and LE
// prefetch for PD after B. Taking both cores for PA and PB leaves PC no core until a wait after
// B, which needs PC: the fallback then loads wd and we and memory (64K, four 16K buffers) runs
// out: we and oc find no address (forced 2, so no cap places the order and pass 1 prices
// swaps). The input order places.
const char* kAcross =
    "memory 64K\ncores 2\n"
    "buffer wc 16K\nbuffer wd 16K\nbuffer we 16K\nbuffer oa 16K\nbuffer ob 16K\nbuffer oc 16K\n"
    "start PA writes=oa cycles=100\n"
    "start PB writes=ob cycles=100\n"
    "load LC writes=wc cycles=50\n"
    "start PC reads=wc writes=oc cycles=10\n"
    "wait PC\n"
    "load LD writes=wd cycles=10\n"
    "load LE writes=we cycles=10\n"
    "barrier B cycles=1\n"
    "wait PA\n"
    "wait PB\n"
    "start PD reads=wd,we cycles=10\n"
    "wait PD\n";

TEST(AcrossBarrier, LastCoreWaitsForTheProgramTheBarrierNeeds) {
  Stream s = parse_stream(kAcross).value();
  Graph g = build_graph(s).value();
  const Priority fifo = make_priority(s, g, Policy::fifo);
  ListParams params;
  params.cap_bytes = s.memory_bytes;
  std::vector<Decision> log;
  const ListResult r = list_schedule(s, g, fifo, params, &log);
  // PA takes core 0; PB would take the last core while PC is still to start, so LC goes,
  // then PC on core 1, its wait (wc and oc die), PB on the core PC freed, the prefetches.
  const std::vector<std::string> want{"start PA", "load LC", "start PC", "wait PC", "start PB", "load LD",
                                      "load LE", "barrier B", "wait PA", "start PD", "wait PD", "wait PB"};
  EXPECT_EQ(labels(s, r.order), want);
  EXPECT_EQ(r.forced, 0);
  ASSERT_EQ(log.size(), want.size());
  EXPECT_EQ(log[1].rule, Rule::dma);
  EXPECT_EQ(log[2].rule, Rule::start);
  EXPECT_EQ(log[4].rule, Rule::start);  // not a forced start onto a busy core
  EXPECT_EQ(r.core_of[0], 0);
  EXPECT_EQ(r.core_of[3], 1);
  EXPECT_EQ(r.core_of[1], 1);
  // PA [0, 100); LC [1, 51); PC [51, 61); PB [61, 161); LD, LE [62, 82); B to 83; PD on core
  // 0 [100, 110); wait PB at 161.
  EXPECT_EQ(r.makespan, 161);
  // The check is for memory, not time: the input order (PC blocks until PA frees core 0) takes
  // 141 cycles, and schedule() keeps it, as it keeps any faster input order.
  Schedule sched = schedule(s, g, Options{}).value();
  EXPECT_EQ(sched.pass, Pass::input);
  EXPECT_EQ(sched.makespan, 141);
}

TEST(CoreChoice, LeastLoadedSpreadsWorkFirstFreeFillsCoreZero) {
  // A chain through buffer b: each program waits for the one before, so every start sees
  // both cores free. First free always takes core 0; least loaded alternates. Same timing.
  Stream s = parse_stream(
      "memory 1K\ncores 2\nbuffer b 64\nstart P1 writes=b cycles=10\nwait P1\n"
      "start P2 reads=b writes=b cycles=10\nwait P2\nstart P3 reads=b writes=b cycles=10\nwait P3\n"
      "start P4 reads=b writes=b cycles=10\nwait P4\n").value();
  Graph g = build_graph(s).value();
  ListParams params;
  params.cap_bytes = s.memory_bytes;
  const Priority prio = make_priority(s, g, Policy::fifo);
  ListResult first = list_schedule(s, g, prio, params);
  params.core_choice = CoreChoice::least_loaded;
  ListResult spread = list_schedule(s, g, prio, params);
  EXPECT_EQ(first.core_of, (std::vector<int>{0, -1, 0, -1, 0, -1, 0, -1}));
  EXPECT_EQ(spread.core_of, (std::vector<int>{0, -1, 1, -1, 0, -1, 1, -1}));
  EXPECT_EQ(first.makespan, spread.makespan);
}

}  // namespace
}  // namespace ork::sched
