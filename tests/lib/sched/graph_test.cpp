// StreamGraph: exact edge sets for the program, barrier and byte-range memory rules.
#include <gtest/gtest.h>

#include <utility>
#include <vector>

#include "lib/sched/graph.h"
#include "lib/sched/parse.h"

namespace ork::sched {
namespace {

std::vector<std::pair<int, int>> edges_of(const Graph& g) {
  std::vector<std::pair<int, int>> out;
  for (int i = 0; i < g.op_count; ++i)
    for (int s : g.successors(i)) out.emplace_back(i, s);
  return out;
}

const char* kStream =
    "memory 1M\nbuffer a 1K\nbuffer b 1K\n"
    "load L1 writes=a[0:512] cycles=1\n"     // 0
    "load L2 writes=a[512:512] cycles=1\n"   // 1 disjoint bytes: no edge to L1
    "start P1 reads=a writes=b cycles=5\n"   // 2 read-after-write of both halves
    "wait P1\n"                               // 3
    "load L3 writes=a[0:256] cycles=1\n"     // 4 write-after-read (from P1's wait), after L1's write
    "store S1 reads=b cycles=1\n"            // 5 read-after-write of P1's output, from its wait
    "barrier B\n"                            // 6 after everything before it
    "load L4 writes=b cycles=1\n";           // 7 after B; write-after-read of S1, after P1's write

TEST(Graph, EdgesFollowProgramBarrierAndByteRangeRules) {
  Stream s = parse_stream(kStream).value();
  Graph g = build_graph(s).value();
  const std::vector<std::pair<int, int>> expected = {
      {0, 2}, {0, 4}, {0, 6}, {1, 2}, {1, 6}, {2, 3}, {2, 6}, {3, 4},
      {3, 5}, {3, 6}, {3, 7}, {4, 6}, {5, 6}, {5, 7}, {6, 7}};
  EXPECT_EQ(edges_of(g), expected);
  EXPECT_EQ(g.pred_counts[6], 6);
}

std::vector<int> list(std::span<const int> items) { return {items.begin(), items.end()}; }

TEST(Graph, MemoryModelOfBirthAndDeath) {
  Stream s = parse_stream(kStream).value();
  Graph g = build_graph(s).value();
  EXPECT_EQ(list(g.born_by[2]), (std::vector<int>{0, 1}));  // a program's buffers are born at its start
  EXPECT_TRUE(g.released_by[2].empty());
  EXPECT_EQ(list(g.released_by[3]), (std::vector<int>{0, 1}));  // ... and released at its wait
  EXPECT_EQ(g.release_count[0], 4);  // L1, L2, P1, L3
  EXPECT_EQ(g.release_count[1], 3);  // P1, S1, L4
  EXPECT_EQ(list(g.program_users[0]), (std::vector<int>{2}));
  EXPECT_EQ(g.first_consumer[0], 2);
  EXPECT_EQ(g.first_consumer[4], -1);  // nobody reads L3's bytes later
  EXPECT_EQ(g.working_set[2], 2048);
  EXPECT_EQ(g.starts, (std::vector<int>{2}));
}

TEST(Graph, ReadReadAndXramBuffersFollowTheSameRules) {
  Stream s = parse_stream(
      "memory 1M\nbuffer w 64\nbuffer x 64 xram\n"
      "load L writes=w reads=x cycles=1\n"
      "start P1 reads=w cycles=1\nwait P1\n"
      "start P2 reads=w cycles=1\nwait P2\n"   // read after read: no edge to P1
      "store S reads=w writes=x cycles=1\n")   // writes x after L read it: write-after-read
      .value();
  Graph g = build_graph(s).value();
  const std::vector<std::pair<int, int>> expected = {{0, 1}, {0, 3}, {0, 5}, {1, 2}, {3, 4}};
  EXPECT_EQ(edges_of(g), expected);
}

TEST(Graph, AnInputOrderThatRacesIsAnError) {
  Stream s = parse_stream(
      "memory 1M\nbuffer b 64\n"
      "start P1 writes=b cycles=5\n"
      "load L writes=b cycles=1\n"  // overwrites b while P1 (waited later) may still write it
      "wait P1\n").value();
  Result<Graph> g = build_graph(s);
  ASSERT_FALSE(g);
  EXPECT_EQ(g.error().message,
            "line 4: load L touches buffer b while program P1 (line 3) still holds it (its wait comes later)");
}

// The memory edges are built one buffer at a time; the race reported is still the first in
// input order (here in b, although a has the lower id and races too, later), and within one
// op a read is checked before a write.
TEST(Graph, TheRaceReportedIsTheFirstInInputOrder) {
  Stream s = parse_stream(
      "memory 100K\nbuffer a 1K\nbuffer b 1K\nbuffer c 1K\n"
      "start P1 reads=a writes=c cycles=10\n"
      "start P2 reads=b cycles=10\n"
      "load L1 writes=b cycles=5\n"   // line 7: races with P2
      "load L2 writes=a cycles=5\n"   // line 8: races with P1
      "wait P1\nwait P2\n").value();
  Result<Graph> g = build_graph(s);
  ASSERT_FALSE(g);
  EXPECT_EQ(g.error().message,
            "line 7: load L1 touches buffer b while program P2 (line 6) still holds it (its wait comes later)");
  Stream t = parse_stream(
      "memory 100K\nbuffer a 1K\nbuffer b 1K\nbuffer c 1K\n"
      "start P1 writes=a cycles=10\n"
      "start P2 writes=b cycles=10\n"
      "store S writes=a reads=b cycles=5\n"  // both race; the read of b is checked first
      "wait P1\nwait P2\n").value();
  g = build_graph(t);
  ASSERT_FALSE(g);
  EXPECT_EQ(g.error().message,
            "line 7: store S touches buffer b while program P2 (line 6) still holds it (its wait comes later)");
}

TEST(Graph, OrderCheck) {
  Stream s = parse_stream(kStream).value();
  Graph g = build_graph(s).value();
  EXPECT_TRUE(order_respects_graph(g, std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_TRUE(order_respects_graph(g, std::vector<int>{1, 0, 2, 3, 5, 4, 6, 7}));
  EXPECT_FALSE(order_respects_graph(g, std::vector<int>{2, 0, 1, 3, 4, 5, 6, 7}));  // P1 before its loads
  EXPECT_FALSE(order_respects_graph(g, std::vector<int>{0, 0, 2, 3, 4, 5, 6, 7}));  // not a permutation
  EXPECT_FALSE(order_respects_graph(g, std::vector<int>{0, 1, 2}));
}

}  // namespace
}  // namespace ork::sched
