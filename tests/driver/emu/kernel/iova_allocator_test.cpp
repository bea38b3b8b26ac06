// The fake kernel's IOVA allocator (driver/emu/kernel/iova_allocator.cpp) on its own: first
// fit from the top (the vendor driver's order) or from the bottom (rocket's), reuse of a
// freed gap, the bounds of its window, and the accounting the fake kernel reports.
#include <gtest/gtest.h>

#include <cstdint>

#include "driver/emu/kernel/iova_allocator.h"

namespace ork::emu {
namespace {

constexpr uint64_t kPage = 4096;
constexpr uint64_t kLow = 16 * kPage, kHigh = 64 * kPage;  // a 48-page window

TEST(IovaAllocator, TopDownHandsOutFromTheTopOfTheWindow) {
  IovaAllocator a(kLow, kHigh, IovaAllocator::Direction::top_down);
  EXPECT_EQ(a.alloc(kPage), kHigh - kPage);
  EXPECT_EQ(a.alloc(2 * kPage), kHigh - 3 * kPage);
  EXPECT_EQ(a.ranges(), 2u);
  EXPECT_EQ(a.used_bytes(), 3 * kPage);
}

TEST(IovaAllocator, BottomUpHandsOutFromTheBottomOfTheWindow) {
  IovaAllocator a(kLow, kHigh, IovaAllocator::Direction::bottom_up);
  EXPECT_EQ(a.alloc(kPage), kLow);
  EXPECT_EQ(a.alloc(2 * kPage), kLow + kPage);
  EXPECT_EQ(a.used_bytes(), 3 * kPage);
}

TEST(IovaAllocator, AFreedGapIsReusedWhenItFits) {
  for (auto dir : {IovaAllocator::Direction::top_down, IovaAllocator::Direction::bottom_up}) {
    IovaAllocator a(kLow, kHigh, dir);
    const auto first = a.alloc(kPage), middle = a.alloc(2 * kPage), last = a.alloc(kPage);
    ASSERT_TRUE(first && middle && last);
    a.free(*middle);
    EXPECT_EQ(a.ranges(), 2u);
    EXPECT_EQ(a.alloc(2 * kPage), middle) << "the first fit is the freed gap";
    a.free(*middle);
    const auto bigger = a.alloc(3 * kPage);  // does not fit the gap: past the last range
    ASSERT_TRUE(bigger);
    EXPECT_NE(bigger, middle);
  }
}

TEST(IovaAllocator, RefusesWhatTheWindowCannotHold) {
  IovaAllocator a(kLow, kHigh, IovaAllocator::Direction::top_down);
  EXPECT_FALSE(a.alloc(0));
  EXPECT_FALSE(a.alloc(kHigh - kLow + kPage));
  EXPECT_EQ(a.alloc(kHigh - kLow), kLow);  // the whole window, exactly
  EXPECT_FALSE(a.alloc(kPage)) << "full";
  EXPECT_EQ(a.largest_gap(), 0u);
}

TEST(IovaAllocator, LargestGapIsTheBiggestAllocThatSucceeds) {
  IovaAllocator a(kLow, kHigh, IovaAllocator::Direction::bottom_up);
  EXPECT_EQ(a.window_bytes(), 48 * kPage);
  EXPECT_EQ(a.largest_gap(), 48 * kPage);
  const auto p0 = a.alloc(10 * kPage), p1 = a.alloc(20 * kPage), p2 = a.alloc(4 * kPage);
  ASSERT_TRUE(p0 && p1 && p2);
  EXPECT_EQ(a.largest_gap(), 14 * kPage);  // above p2
  a.free(*p1);
  EXPECT_EQ(a.largest_gap(), 20 * kPage);  // the freed middle
  EXPECT_FALSE(a.alloc(21 * kPage));
  EXPECT_EQ(a.alloc(20 * kPage), p1);
}

TEST(IovaAllocator, FreeingAnAddressNotHandedOutChangesNothing) {
  IovaAllocator a(kLow, kHigh, IovaAllocator::Direction::top_down);
  const auto p = a.alloc(kPage);
  ASSERT_TRUE(p);
  a.free(*p + kPage);
  a.free(kLow);
  EXPECT_EQ(a.ranges(), 1u);
  EXPECT_EQ(a.used_bytes(), kPage);
}

}  // namespace
}  // namespace ork::emu
