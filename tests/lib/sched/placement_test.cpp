// The pool run over an order: placement without swaps, and spill/reload with them.
#include <gtest/gtest.h>

#include "lib/sched/parse.h"
#include "lib/sched/placement.h"
#include "lib/sched/chooser.h"
#include "tests/lib/sched/example_streams.h"

namespace ork::sched {
namespace {

PoolConfig memory_of(const Stream& s) { return {s.memory_bytes, 8, 8192, 0}; }

std::vector<int> input_order(const Stream& s) {
  std::vector<int> order(s.ops.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
  return order;
}

using test::kReload;

TEST(Placement, PlacesWithRealOffsets) {
  Stream s = parse_stream("memory 64K\nbuffer small 100\nbuffer big 16K\n"
                          "load L1 writes=small cycles=1\nload L2 writes=big cycles=1\n").value();
  Graph g = build_graph(s).value();
  Placement p = place_order(s, g, input_order(s), memory_of(s), false, 1.0).value();
  EXPECT_TRUE(p.placed);
  EXPECT_EQ(p.offset[0], 0);              // small: bottom-up
  EXPECT_EQ(p.offset[1], 48 << 10);       // large: top-down
  EXPECT_EQ(p.peak_used_bytes, 16 << 10);  // small died after L1, its only user
}

TEST(Placement, DropsACleanBufferAndReloadsIt) {
  Stream s = parse_stream(kReload).value();
  Graph g = build_graph(s).value();
  EXPECT_FALSE(place_order(s, g, input_order(s), memory_of(s), false, 1.0)->placed);
  Placement p = place_order(s, g, input_order(s), memory_of(s), true, 12.8).value();
  EXPECT_FALSE(p.placed);
  ASSERT_EQ(p.swaps.size(), 1u);
  EXPECT_FALSE(p.swaps[0].spill);
  EXPECT_EQ(s.buffers[p.swaps[0].buffer].name, "b");
  EXPECT_EQ(p.swaps[0].position, 7);  // before start P3
  EXPECT_EQ(p.swaps[0].cycles, 10);   // 128 bytes at 12.8 bytes/cycle
  EXPECT_EQ(p.swap_bytes, 128);
  EXPECT_DOUBLE_EQ(load_bandwidth(s), 12.8);  // 384 bytes in 30 cycles
}

TEST(Placement, SpillsADirtyBufferFirst) {
  Stream s = parse_stream(
      "memory 256\nbuffer d 128\nbuffer a 128\nbuffer b 128\n"
      "start P0 writes=d cycles=5\nwait P0\n"        // d now holds a program's result
      "load La writes=a cycles=10\nload Lb writes=b cycles=10\n"
      "start P1 reads=a,b cycles=5\nwait P1\n"
      "start P2 reads=d cycles=5\nwait P2\n").value();
  Graph g = build_graph(s).value();
  Placement p = place_order(s, g, input_order(s), memory_of(s), true, 16.0).value();
  ASSERT_EQ(p.swaps.size(), 2u);
  EXPECT_TRUE(p.swaps[0].spill);
  EXPECT_EQ(p.swaps[0].position, 3);  // before Lb, which needs d's room
  EXPECT_FALSE(p.swaps[1].spill);
  EXPECT_EQ(p.swaps[1].position, 6);  // before start P2
  EXPECT_EQ(p.swaps[1].cycles, 8);
  // The stream pays for both: 5 + 10 + 8 (spill) + 10 + 5 + 8 (reload) + 5.
  SimResult r = simulate_order(s, g, input_order(s), {}, p.swaps);
  EXPECT_EQ(r.makespan, 51);
}

TEST(Placement, AnOpThatCannotFitIsAnError) {
  Stream s = parse_stream("memory 256\nbuffer a 128\nbuffer b 136\n"
                          "start P reads=a,b cycles=5\nwait P\n").value();
  Graph g = build_graph(s).value();
  Result<Placement> p = place_order(s, g, input_order(s), memory_of(s), true, 1.0);
  ASSERT_FALSE(p);
  EXPECT_EQ(p.error().code, -ENOMEM);
  EXPECT_NE(p.error().message.find("start P needs buffer b (136 bytes)"), std::string::npos) << p.error().message;
  Result<Schedule> r = schedule(s, Options{});
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("the input order cannot run"), std::string::npos);
}

}  // namespace
}  // namespace ork::sched
