// The buffer pool: exact offsets of the two-ended first fit, alignment, merging, errors.
#include <gtest/gtest.h>

#include "lib/sched/pool.h"

namespace ork::sched {
namespace {

Pool make(int64_t capacity, int64_t reserve = 0) {
  return Pool::create({capacity, 8, 8192, reserve}).value();
}

TEST(Pool, SmallBuffersGoBottomUpLargeOnesTopDown) {
  Pool pool = make(64 << 10);
  EXPECT_EQ(*pool.allocate(100), 0);          // small: rounded to 104 bytes
  EXPECT_EQ(*pool.allocate(10000), 55536);    // large: 65536 - 10000
  EXPECT_EQ(*pool.allocate(8191), 104);       // small, rounded to 8192
  EXPECT_EQ(*pool.allocate(8192), 47344);     // 8 KiB is already "large"
  EXPECT_EQ(pool.used_bytes(), 104 + 10000 + 8192 + 8192);
  EXPECT_EQ(pool.block_bytes(104), 8192);
  EXPECT_EQ(pool.largest_hole(), 47344 - 8296);
}

TEST(Pool, ReleaseMergesNeighbouringHoles) {
  Pool pool = make(64 << 10);
  const int64_t a = *pool.allocate(100);
  const int64_t b = *pool.allocate(200);
  const int64_t c = *pool.allocate(300);
  ASSERT_EQ(b, 104);
  ASSERT_TRUE(pool.release(b));
  EXPECT_EQ(pool.largest_hole(), 65536 - 104 - 200 - 304);  // b's hole is separate
  ASSERT_TRUE(pool.release(a));
  EXPECT_EQ(*pool.allocate(304), 0);  // a and b merged into one 304-byte hole at 0
  ASSERT_TRUE(pool.release(0));
  ASSERT_TRUE(pool.release(c));
  EXPECT_EQ(pool.largest_hole(), 65536);  // all merged back into the whole space
  EXPECT_EQ(pool.used_bytes(), 0);
}

TEST(Pool, FirstFitTakesTheLowestHoleThatHolds) {
  Pool pool = make(4096);
  std::vector<int64_t> at;
  for (int i = 0; i < 8; ++i) at.push_back(*pool.allocate(512));
  EXPECT_EQ(at[7], 7 * 512);
  ASSERT_TRUE(pool.release(at[1]));  // hole of 512 at 512
  ASSERT_TRUE(pool.release(at[5]));  // hole of 512 at 2560
  EXPECT_EQ(*pool.allocate(500), 512);   // 504 bytes: leaves an 8-byte hole at 1016
  EXPECT_EQ(*pool.allocate(8), 1016);    // the lowest hole that holds 8 bytes
  EXPECT_EQ(*pool.allocate(16), 2560);
}

TEST(Pool, FullPoolRefusesAndNamesTheLargestHole) {
  Pool pool = make(64);
  for (int i = 0; i < 8; ++i) ASSERT_EQ(*pool.allocate(8), 8 * i);
  Result<int64_t> none = pool.allocate(1);
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().code, -ENOMEM);
  EXPECT_NE(none.error().message.find("largest hole 0"), std::string::npos) << none.error().message;
}

TEST(Pool, FragmentationIsSeenNotJustTheByteTotal) {
  Pool pool = make(3 * 8192);
  const int64_t low = *pool.allocate(8192);   // top-down: 16384
  const int64_t mid = *pool.allocate(8192);   // 8192
  ASSERT_EQ(low, 16384);
  ASSERT_EQ(mid, 8192);
  ASSERT_TRUE(pool.release(low));  // free: [0, 8192) and [16384, 24576), 16 KiB in total
  EXPECT_EQ(pool.free_bytes(), 16384);
  EXPECT_FALSE(pool.allocate(16384));  // but no contiguous 16 KiB
}

TEST(Pool, ReserveAndAlignment) {
  Pool pool = make(1000, 100);
  EXPECT_EQ(pool.usable_bytes(), 896);  // 900 rounded down to 8-byte words
  EXPECT_EQ(*pool.allocate(896), 0);
  EXPECT_EQ(pool.rounded(1), 8);
  EXPECT_FALSE(Pool::create({1000, 12, 8192, 0}));   // not a power of two
  EXPECT_FALSE(Pool::create({1000, 8, 8192, 1000})); // reserve eats everything
  EXPECT_FALSE(Pool::create({0, 8, 8192, 0}));
  Pool other = make(1024);
  EXPECT_FALSE(other.allocate(0));
  Status bad = other.release(16);
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("no block"), std::string::npos);
}

}  // namespace
}  // namespace ork::sched
