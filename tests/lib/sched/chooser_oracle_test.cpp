// Cross-cutting; exercises lib/sched/chooser.cpp and bounds.cpp against oracles, on generate.cpp's tiles.
// Oracles: Johnson's rule for independent load -> compute tiles on one core, and brute force
// over every order of streams of at most 8 ops.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "lib/sched/bounds.h"
#include "lib/sched/generate.h"
#include "lib/sched/chooser.h"
#include "tests/lib/sched/brute_force.h"

namespace ork::sched {
namespace {

using test::brute_force_makespan;
using test::johnson_makespan;

// In the stream model a load also blocks the stream, so the model is the flow shop plus
// constraints: Johnson's optimum is a lower bound of the model's true optimum.
TEST(Johnson, IsARelaxationOfTheStreamModel) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 150; ++trial) {
    std::vector<int64_t> a(3), b(3);
    for (int i = 0; i < 3; ++i) {
      a[i] = 1 + rng() % 60;
      b[i] = 2 + rng() % 60;
    }
    Stream s = make_tiles(a, b, 1, 1 << 20);
    Graph g = build_graph(s).value();
    const int64_t johnson = johnson_makespan(a, b);
    const int64_t best = brute_force_makespan(s, g);
    Schedule r = schedule(s, g, Options{}).value();
    EXPECT_LE(johnson, best) << trial;
    EXPECT_LE(best, r.makespan) << trial;
    EXPECT_LE(r.bounds.value, best) << trial;
    EXPECT_LE(r.makespan, r.makespan_input) << trial;
  }
}

// Compute-bound tiles given in Johnson order (a increasing, a_i <= b_i) with each next
// load shorter than the current program: loading only the next program's tile
// (urgent_starts 1, no prefetch) pipelines perfectly, and the list schedule meets
// Johnson's optimum a_1 + sum b exactly; for 3 tiles brute force agrees.
TEST(Johnson, ComputeBoundTilesInJohnsonOrderReachTheOptimum) {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 100; ++trial) {
    const int n = trial < 50 ? 3 : 12;
    std::vector<int64_t> a(n), b(n);
    for (int i = 0; i < n; ++i) a[i] = 1 + rng() % 40;
    std::sort(a.begin(), a.end());
    for (int i = 0; i < n; ++i) b[i] = std::max(a[i], (i + 1 < n ? a[i + 1] : 0) + 1) + rng() % 40;
    Stream s = make_tiles(a, b, 1, 1 << 20);
    Graph g = build_graph(s).value();
    Options o;
    o.urgent_starts = 1;
    o.prefetch_percent = 0;
    Schedule r = schedule(s, g, o).value();
    const int64_t johnson = johnson_makespan(a, b);
    EXPECT_EQ(r.makespan, johnson) << trial;
    if (n == 3) {
      EXPECT_EQ(brute_force_makespan(s, g), johnson) << trial;
    }
  }
}

// Brute force over every order of random streams of at most 8 ops, memory not binding:
// lower bound <= optimum <= schedule <= input order.
TEST(BruteForce, SmallStreamsSitBetweenBoundAndInput) {
  int streams = 0, optimal = 0;
  double worst = 1.0;
  for (uint64_t seed = 1; streams < 400; ++seed) {
    RandomParams p;
    p.programs = 1 + static_cast<int>(seed % 3);
    p.cores = 1 + static_cast<int>(seed % 2);
    p.memory_bytes = 64 << 20;
    Stream s = make_random_stream(seed, p);
    if (s.ops.size() > 8) continue;
    ++streams;
    Graph g = build_graph(s).value();
    const int64_t best = brute_force_makespan(s, g);
    for (Policy policy : {Policy::fifo, Policy::critical_path}) {
      Options o;
      o.policy = policy;
      Schedule r = schedule(s, g, o).value();
      ASSERT_LE(r.bounds.value, best) << "seed " << seed;
      ASSERT_LE(best, r.makespan) << "seed " << seed;
      ASSERT_LE(r.makespan, r.makespan_input) << "seed " << seed;
      if (policy == Policy::critical_path) {
        optimal += r.makespan == best;
        worst = std::max(worst, static_cast<double>(r.makespan) / static_cast<double>(best));
      }
    }
  }
  RecordProperty("optimal", optimal);
  std::printf("brute force: %d of %d streams scheduled optimally, worst ratio %.3f\n", optimal, streams, worst);
  EXPECT_EQ(streams, 400);
}

}  // namespace
}  // namespace ork::sched
