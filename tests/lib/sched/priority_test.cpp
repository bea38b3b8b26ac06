// lib/sched/priority.cpp: the critical-path policy (HEFT's upward rank, priority.h) against
// FIFO: a long chain started first, and loads and stores ranked with their programs.
#include <gtest/gtest.h>

#include "lib/sched/generate.h"
#include "lib/sched/list_schedule.h"
#include "lib/sched/parse.h"
#include "lib/sched/chooser.h"

namespace ork::sched {
namespace {

// Short independent programs come first in the input, a long chain last. FIFO starts the
// short ones first and runs the chain alone at the end; the upward rank starts the chain
// at once and fits the short programs next to it.
const char* kLateChain =
    "memory 1M\ncores 2\nbuffer c1 1K\nbuffer c2 1K\n"
    "start A1 cycles=60\nwait A1\nstart A2 cycles=60\nwait A2\n"
    "start A3 cycles=60\nwait A3\nstart A4 cycles=60\nwait A4\n"
    "start C1 writes=c1 cycles=100\nwait C1\n"
    "start C2 reads=c1 writes=c2 cycles=100\nwait C2\n"
    "start C3 reads=c2 cycles=100\nwait C3\n";

TEST(CriticalPath, StartsTheLongChainFirst) {
  Stream s = parse_stream(kLateChain).value();
  Graph g = build_graph(s).value();
  Schedule fifo = schedule(s, g, Options{}).value();
  Options o;
  o.policy = Policy::critical_path;
  Schedule cp = schedule(s, g, o).value();
  EXPECT_EQ(fifo.makespan, 420);  // A1|A2, A3|A4, then C1, C2, C3 in a row: 120 + 300
  EXPECT_EQ(cp.makespan, 300);    // C1 C2 C3 back to back on one core, the As beside: optimal
  EXPECT_EQ(cp.policy, Policy::critical_path);
  EXPECT_EQ(cp.bounds.value, 300);
}

// Loads take their consumer's place and stores their producer's: on a long memory-bound
// decode stream the critical-path list schedule never has to force a buffer past cap.
TEST(CriticalPath, LongDecodeNeedsNoForcedPlacement) {
  DecodeParams p;
  p.layers = 200;
  Stream s = make_transformer_decode(p);
  Graph g = build_graph(s).value();
  ListParams params;
  params.cap_bytes = s.memory_bytes;
  ListResult r = list_schedule(s, g, make_priority(s, g, Policy::critical_path), params);
  EXPECT_EQ(r.forced, 0);
  EXPECT_LE(r.peak_bytes, s.memory_bytes);
}

}  // namespace
}  // namespace ork::sched
