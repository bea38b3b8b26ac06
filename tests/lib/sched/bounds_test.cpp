// Lower bounds: exact values on small streams.
#include <gtest/gtest.h>

#include "lib/sched/bounds.h"
#include "lib/sched/generate.h"
#include "lib/sched/chooser.h"
#include "tests/lib/sched/example_streams.h"

namespace ork::sched {
namespace {

// schedule() works the bound out on a second thread from 65,536 ops (chooser.cpp): the same
// bound as lower_bound's own, on a stream past that size and one under it.
TEST(Bounds, ScheduleReportsTheSameBoundOnItsSecondThread) {
  for (int programs : {2000, 20000}) {
    RandomParams p;
    p.programs = programs;
    p.memory_bytes = 1 << 20;
    p.max_buffer_percent = 4;
    p.max_outstanding = 2;
    const Stream s = make_random_stream(5, p);
    const Graph g = build_graph(s).value();
    const Schedule r = schedule(s, g, Options{}).value();
    const Bounds b = lower_bound(s, g);
    EXPECT_EQ(r.bounds.value, b.value) << s.ops.size();
    EXPECT_EQ(r.bounds.pipeline, b.pipeline);
    EXPECT_EQ(r.bounds.memory, b.memory);
    EXPECT_EQ(r.bounds.critical_path, b.critical_path);
    EXPECT_EQ(s.ops.size() >= 65536u, programs == 20000) << s.ops.size();  // one each side
  }
}

TEST(Bounds, SeedExampleOne) {
  Stream s = test::example("example1.stream");
  Bounds b = lower_bound(s, build_graph(s).value());
  EXPECT_EQ(b.critical_path, 30 + 100 + 100 + 20);  // L1 -> P1 -> P3 (reads o1) -> S3
  EXPECT_EQ(b.stream_load, 3 * 30 + 20 + 3);        // transfers + 1 per start
  EXPECT_EQ(b.core_load, 150);                      // 300 cycles on 2 cores
  EXPECT_EQ(b.memory, 0);
  EXPECT_EQ(b.value, 250);  // the schedule's 250 is optimal
}

TEST(Bounds, MemoryForcesSerialPrograms) {
  // Three programs each pinning 60K of 100K: no two can run together.
  Stream s = parse_stream(
      "memory 100K\ncores 2\nbuffer a 60K\nbuffer b 60K\nbuffer c 60K\n"
      "start P1 writes=a cycles=100\nwait P1\nstart P2 writes=b cycles=100\nwait P2\n"
      "start P3 writes=c cycles=100\nwait P3\n").value();
  Graph g = build_graph(s).value();
  Bounds b = lower_bound(s, g);
  EXPECT_EQ(b.memory, 300);
  EXPECT_EQ(b.core_load, 150);
  EXPECT_EQ(b.critical_path, 100);
  EXPECT_EQ(b.value, 300);
  Schedule r = schedule(s, g, Options{}).value();
  EXPECT_EQ(r.makespan, 300);  // nothing can overlap: the input order is optimal
}

TEST(Bounds, TwoStagePipeline) {
  // One core, loads of 10 feeding programs of 50: sum b + min a = 160 (the two-stage pipeline
  // bound, docs/sched.md).
  Stream s = make_tiles({10, 10, 10}, {50, 50, 50}, 1, 1 << 20);
  Bounds b = lower_bound(s, build_graph(s).value());
  EXPECT_EQ(b.pipeline, 160);
  EXPECT_EQ(b.stream_load, 33);
  EXPECT_EQ(b.value, 160);
}

TEST(Bounds, StreamBoundIsTheSumOfTransfers) {
  // Loads of 50 feeding programs of 10 on 2 cores: the stream carries 150 + 3 cycles; the
  // head-body-tail bound adds the 9 cycles the last program still runs after its start.
  Stream s = make_tiles({50, 50, 50}, {10, 10, 10}, 2, 1 << 20);
  Bounds b = lower_bound(s, build_graph(s).value());
  EXPECT_EQ(b.stream_load, 153);
  EXPECT_EQ(b.pipeline, 153 + 9);
  EXPECT_EQ(b.value, 162);  // and 162 is what L1 P1 L2 P2 L3 P3 takes
}

}  // namespace
}  // namespace ork::sched
