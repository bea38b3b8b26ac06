// The schedule of the host's work and the NPU's jobs (lib/exec/overlap.h): each figure worked
// out by hand from the executor's order, and the board projection adding only the exposed part.
#include <gtest/gtest.h>

#include "lib/exec/overlap.h"
#include "lib/exec/project.h"

namespace ork::exec {
namespace {

// One piece: nothing overlaps, the host's work is all exposed.
TEST(Overlap, OnePieceExposesEverything) {
  const GroupWork g{1, 100, {{10, 20}, {5, 7}}};
  const HostSchedule s = schedule_layer(std::span(&g, 1));
  EXPECT_DOUBLE_EQ(s.device_ns, 100);
  EXPECT_DOUBLE_EQ(s.host_ns, 42);
  EXPECT_DOUBLE_EQ(s.span_ns, 142);
  EXPECT_DOUBLE_EQ(s.exposed_ns, 42);
  EXPECT_DOUBLE_EQ(s.overlapped_ns, 0);
}

// Two pieces: piece 1 packed while piece 0 runs, piece 0 unpacked while piece 1 runs.
TEST(Overlap, TwoPiecesHideTheMiddle) {
  // before 15 and after 27 per piece (two members), 100 on the NPU per piece:
  // host 0-15 pack p0; NPU 15-115 p0; host 15-30 pack p1; NPU 115-215 p1;
  // host 115-142 unpack p0 (after p0 ended); host 215-242 unpack p1. Span 242.
  const GroupWork g{2, 100, {{10, 20}, {5, 7}}};
  const HostSchedule s = schedule_layer(std::span(&g, 1));
  EXPECT_DOUBLE_EQ(s.device_ns, 200);
  EXPECT_DOUBLE_EQ(s.host_ns, 84);
  EXPECT_DOUBLE_EQ(s.span_ns, 242);
  EXPECT_DOUBLE_EQ(s.exposed_ns, 42);  // the first pack and the last unpack
  EXPECT_DOUBLE_EQ(s.overlapped_ns, 42);
}

// A host slower than the NPU: the NPU waits for the packing, and the unpacking of piece 0
// delays nothing the NPU does but the step's end.
TEST(Overlap, ASlowHostIsExposedWhereTheNpuWaits) {
  // host 0-50 pack p0; NPU 50-60; host 50-100 pack p1; NPU 100-110; host 100-130 unpack p0;
  // host 130-160 unpack p1. Then a second group of one piece: host 160-165, NPU 165-175,
  // host 175-177. Span 177, NPU 30.
  const GroupWork gs[] = {{2, 10, {{50, 30}}}, {1, 10, {{5, 2}}}};
  const HostSchedule s = schedule_layer(gs);
  EXPECT_DOUBLE_EQ(s.device_ns, 30);
  EXPECT_DOUBLE_EQ(s.host_ns, 167);
  EXPECT_DOUBLE_EQ(s.span_ns, 177);
  EXPECT_DOUBLE_EQ(s.exposed_ns, 147);
  EXPECT_DOUBLE_EQ(s.overlapped_ns, 20);
}

// Two groups of two pieces: the second group's piece p is launched as soon as the first's
// piece p is unpacked, so the NPU never waits between them.
TEST(Overlap, GroupsInTwoPiecesPipeline) {
  // Group A: before 10, after 20 per piece, 100 on the NPU; group B: before 5, after 7, 50.
  // host 0-10 pack A0; NPU 10-110 A0; host 10-20 pack A1; NPU 110-210 A1;
  // host 110-130 unpack A0, 130-135 pack B0 (NPU: after A1, 210-260);
  // host 210-230 unpack A1, 230-235 pack B1 (NPU 260-310);
  // host 260-267 unpack B0; 310-317 unpack B1. Span 317, NPU 300.
  const GroupWork gs[] = {{2, 100, {{10, 20}}}, {2, 50, {{5, 7}}}};
  const HostSchedule s = schedule_layer(gs);
  EXPECT_DOUBLE_EQ(s.device_ns, 300);
  EXPECT_DOUBLE_EQ(s.host_ns, 84);
  EXPECT_DOUBLE_EQ(s.span_ns, 317);
  EXPECT_DOUBLE_EQ(s.exposed_ns, 17);  // A0's packing and B1's unpacking
  EXPECT_DOUBLE_EQ(s.overlapped_ns, 67);
  // Two layers of the same: layer 2's group A pipelines after layer 1's group B the same way.
  // ... B1 on the NPU 260-310; host 260-267 unpack B0, 267-277 pack A0' (NPU 310-410);
  // host 310-317 unpack B1, 317-327 pack A1' (NPU 410-510); host 410-430 unpack A0',
  // 430-435 pack B0' (NPU 510-560); 510-530 unpack A1', 530-535 pack B1' (NPU 560-610);
  // host 560-567, 610-617. Span 617, NPU 600.
  const HostSchedule two = schedule_layer(gs, 2);
  EXPECT_DOUBLE_EQ(two.device_ns, 600);
  EXPECT_DOUBLE_EQ(two.span_ns, 617);
  EXPECT_DOUBLE_EQ(two.exposed_ns, 17);
  EXPECT_DOUBLE_EQ(two.host_ns, 168);
}

// The projection adds the exposed part only: with the host's parts given, a step of a model
// whose groups run in two pieces is shorter than device + host, by the schedule's overlap.
TEST(Overlap, TheProjectionAddsOnlyTheExposedHost) {
  auto d = synthetic_desc("small", 3, matmul::DType::int4);
  ASSERT_TRUE(d);
  ProjectOptions o;
  o.m = 256;  // two tiles of 128 rows at int4's 480-wide slices: every group in two pieces
  o.budget_bytes = uint64_t{1} << 40;
  o.window_bytes = uint64_t{1} << 32;
  for (size_t j = 0; j < d->matmuls.size(); ++j) {
    o.host_parts.push_back({2000.0 * static_cast<double>(j + 1), 3000});
    o.half_host_parts.push_back({1000.0 * static_cast<double>(j + 1), 1500});
    o.host_ns.push_back(o.host_parts.back().total_ns());
  }
  auto p = project(*d, o);
  ASSERT_TRUE(p) << p.error().message;
  std::vector<GroupWork> work;
  double device = 0;
  for (const BatchGroup& g : p->groups) {
    ASSERT_EQ(g.pieces, 2);
    GroupWork w{2, static_cast<double>(g.device_ns) / 2, {}};
    for (int j : g.matmuls) w.host.push_back(o.half_host_parts[static_cast<size_t>(j)]);
    work.push_back(w);
    device += static_cast<double>(g.device_ns);
  }
  const HostSchedule s = schedule_layer(work, 3);  // the step: three layers, pipelined into each other
  EXPECT_NEAR(p->device_ns, device * 3, 12);  // a group's device_ns is rounded down to whole ns
  EXPECT_NEAR(p->host_ns, s.host_ns, 1e-6);
  EXPECT_NEAR(p->host_exposed_ns, s.exposed_ns, 12);
  // Pipelined across groups and layers, only the step's first packing and last unpacking
  // stay exposed when each piece's host work fits under the NPU's.
  EXPECT_LT(p->host_exposed_ns, schedule_layer(work, 1).exposed_ns * 3);
  EXPECT_GT(p->host_overlapped_ns, 0);
  EXPECT_NEAR(p->host_exposed_ns + p->host_overlapped_ns, p->host_ns, 1e-6);
  EXPECT_DOUBLE_EQ(p->compute_ns, p->device_ns + p->host_exposed_ns);
  EXPECT_LT(p->step_ns, p->device_ns + p->host_ns);
  // Bad parts are named.
  o.half_host_parts.pop_back();
  auto bad = project(*d, o);
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("host parts: 6 given for 7"), std::string::npos) << bad.error().message;
}

}  // namespace
}  // namespace ork::exec
