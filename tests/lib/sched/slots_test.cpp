// lib/sched/slots.cpp: a buffer takes a slot at birth (its load) and gives it back at the wait
// of the last program that reads it; a newborn takes the smallest free slot at least its
// size, else a new one; slots never split or merge, so they fragment.
#include <gtest/gtest.h>

#include <numeric>

#include "lib/sched/graph.h"
#include "lib/sched/parse.h"
#include "lib/sched/slots.h"

namespace ork::sched {
namespace {

std::vector<int> identity(const Stream& s) {
  std::vector<int> order(s.ops.size());
  std::iota(order.begin(), order.end(), 0);
  return order;
}

TEST(Slots, ReuseTheSmallestFreeSlotThatHoldsTheBuffer) {
  // a (64) and b (32) die; c (16) takes b's slot, the smaller that holds it; d (64) takes
  // a's; e (48) finds none free (c and d live) and makes a third slot.
  Stream s = parse_stream(
      "memory 1K\nbuffer a 64\nbuffer b 32\nbuffer c 16\nbuffer d 64\nbuffer e 48\n"
      "load La writes=a cycles=1\nload Lb writes=b cycles=1\nstart P reads=a,b cycles=1\nwait P\n"
      "load Lc writes=c cycles=1\nload Ld writes=d cycles=1\nload Le writes=e cycles=1\n"
      "start Q reads=c,d,e cycles=1\nwait Q\n").value();
  Graph g = build_graph(s).value();
  const SlotPlacement r = place_slots(g, identity(s));
  EXPECT_EQ(r.slot_of_buffer, (std::vector<int>{0, 1, 1, 0, 2}));
  EXPECT_EQ(r.slot_bytes, (std::vector<int64_t>{64, 32, 48}));
  EXPECT_EQ(r.total_bytes, 144);
}

TEST(Slots, ABufferReadByManyProgramsIsFreedAtTheLastWait) {
  // w is read by P and by Q: x, loaded after P's wait, cannot take w's slot; y, loaded
  // after Q's wait, can. xram buffers get no slot.
  Stream s = parse_stream(
      "memory 1K\nbuffer w 64\nbuffer x 64\nbuffer y 64\nbuffer o 8 xram\n"
      "load Lw writes=w cycles=1\nstart P reads=w writes=o cycles=1\nwait P\n"
      "load Lx writes=x cycles=1\nstart Q reads=w,x cycles=1\nwait Q\n"
      "load Ly writes=y cycles=1\nstart R reads=y cycles=1\nwait R\n").value();
  Graph g = build_graph(s).value();
  const SlotPlacement r = place_slots(g, identity(s));
  EXPECT_EQ(r.slot_of_buffer, (std::vector<int>{0, 1, 0, -1}));
  EXPECT_EQ(r.total_bytes, 128);
}

}  // namespace
}  // namespace ork::sched
