// The byte-bounded LRU (driver/common/byte_lru.h) under the runner's contexts and the
// emulator's prepared weights: the bound counts bytes, eviction takes the least recently
// used first, a find refreshes, groups drop together, keep_new keeps an oversized newcomer;
// its flat index finds every key through collisions, growth and deletions.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <string>
#include <vector>

#include "driver/common/byte_lru.h"

namespace ork {
namespace {

using Lru = ByteLru<int, std::string>;

std::vector<int> keys(const Lru& lru) {
  std::vector<int> out;
  lru.for_each([&](int k, const std::string&) { out.push_back(k); });
  return out;
}

TEST(ByteLru, BoundIsBytesNotCount) {
  Lru lru(1000);
  for (int i = 0; i < 100; ++i) ASSERT_NE(lru.insert(i, 0, "x", 10, false), nullptr);
  EXPECT_EQ(lru.size(), 100u);  // 100 entries of 10 bytes: exactly at the bound, none dropped
  EXPECT_EQ(lru.bytes(), 1000u);
  EXPECT_EQ(lru.evictions(), 0u);
  lru.insert(100, 0, "y", 25, false);  // 1025 > 1000: the three oldest (0, 1, 2) go
  EXPECT_EQ(lru.size(), 98u);
  EXPECT_EQ(lru.bytes(), 995u);
  EXPECT_EQ(lru.evictions(), 3u);
  EXPECT_EQ(lru.find(0), nullptr);
  EXPECT_EQ(lru.find(2), nullptr);
  ASSERT_NE(lru.find(3), nullptr);
}

TEST(ByteLru, EvictsLeastRecentlyUsedFirstAndFindRefreshes) {
  Lru lru(30);
  lru.insert(1, 0, "a", 10, false);
  lru.insert(2, 0, "b", 10, false);
  lru.insert(3, 0, "c", 10, false);
  EXPECT_EQ(keys(lru), (std::vector<int>{3, 2, 1}));
  ASSERT_NE(lru.find(1), nullptr);  // 1 is now the most recent: 2 is the oldest
  EXPECT_EQ(*lru.find(1), "a");
  EXPECT_EQ(keys(lru), (std::vector<int>{1, 3, 2}));
  lru.insert(4, 0, "d", 10, false);
  EXPECT_EQ(keys(lru), (std::vector<int>{4, 1, 3}));
  lru.set_capacity(15);  // shrinking evicts down to the bound, oldest first
  EXPECT_EQ(keys(lru), (std::vector<int>{4}));
  EXPECT_EQ(lru.bytes(), 10u);
}

TEST(ByteLru, ReinsertReplacesAndRecountsBytes) {
  Lru lru(100);
  lru.insert(1, 0, "a", 10, false);
  lru.insert(1, 0, "b", 30, false);
  EXPECT_EQ(lru.size(), 1u);
  EXPECT_EQ(lru.bytes(), 30u);
  EXPECT_EQ(*lru.find(1), "b");
}

TEST(ByteLru, OversizedEntryKeptOnlyWithKeepNew) {
  Lru lru(50);
  lru.insert(1, 0, "a", 10, false);
  EXPECT_EQ(lru.insert(2, 0, "big", 80, false), nullptr);  // bigger than the bound: not kept
  EXPECT_EQ(lru.size(), 0u);  // and it pushed out the older entry on its way
  EXPECT_EQ(lru.bytes(), 0u);
  lru.insert(1, 0, "a", 10, false);
  auto* kept = lru.insert(3, 0, "big", 80, true);  // the caller is about to use it
  ASSERT_NE(kept, nullptr);
  EXPECT_EQ(*kept, "big");
  EXPECT_EQ(keys(lru), (std::vector<int>{3}));
  lru.insert(4, 0, "d", 10, true);  // the next insert drops it
  EXPECT_EQ(keys(lru), (std::vector<int>{4}));
  EXPECT_EQ(lru.bytes(), 10u);
}

TEST(ByteLru, ForgetDropsOneGroupOnly) {
  Lru lru(1000);
  for (int i = 0; i < 10; ++i) lru.insert(i, static_cast<uint64_t>(i % 3), std::to_string(i), 5, false);
  EXPECT_EQ(lru.erase_group(1), 3u);  // 1, 4, 7
  EXPECT_EQ(keys(lru), (std::vector<int>{9, 8, 6, 5, 3, 2, 0}));
  EXPECT_EQ(lru.bytes(), 35u);
  EXPECT_EQ(lru.erase_group(1), 0u);
  EXPECT_EQ(lru.erase_group_if(0, [](int k, const std::string&) { return k >= 6; }), 2u);  // 6, 9
  EXPECT_EQ(keys(lru), (std::vector<int>{8, 5, 3, 2, 0}));
  EXPECT_EQ(lru.erase_group_if(2, [](int, const std::string&) { return true; }), 3u);  // 2, 5, 8
  EXPECT_EQ(keys(lru), (std::vector<int>{3, 0}));
  EXPECT_TRUE(lru.erase(3));
  EXPECT_FALSE(lru.erase(3));
  EXPECT_EQ(lru.bytes(), 5u);
  // Evictions keep the group index right: a group's later forget finds only live entries.
  lru.set_capacity(0);
  EXPECT_EQ(lru.size(), 0u);
  EXPECT_EQ(lru.erase_group(0), 0u);
  lru.set_capacity(100);
  lru.insert(20, 7, "x", 5, false);
  EXPECT_EQ(lru.erase_group(7), 1u);
  EXPECT_EQ(lru.size(), 0u);
}

// Every key hashed to one of four values: the flat index's probe runs are long, and each
// erase shifts entries back across them. Random inserts, erases and group drops against a
// plain map; every key present must be found, every key absent must not.
struct FourHashes {
  size_t operator()(int k) const noexcept { return static_cast<size_t>(k % 4); }
};

TEST(ByteLru, FlatIndexFindsEveryKeyThroughCollisionsAndDeletions) {
  ByteLru<int, int, FourHashes> lru(size_t{1} << 40);
  std::map<int, int> want;
  std::mt19937 rng(7);
  for (int step = 0; step < 20000; ++step) {
    const int k = static_cast<int>(rng() % 300);
    switch (rng() % 4) {
      case 0:
      case 1:
        lru.insert(k, static_cast<uint64_t>(k % 5), step, 1, false);
        want[k] = step;
        break;
      case 2:
        EXPECT_EQ(lru.erase(k), want.erase(k) == 1);
        break;
      default:
        if (step % 50 == 0) {
          lru.erase_group(static_cast<uint64_t>(k % 5));
          std::erase_if(want, [&](const auto& e) { return e.first % 5 == k % 5; });
        }
    }
    if (step % 1000 != 999) continue;
    ASSERT_EQ(lru.size(), want.size());
    for (int key = 0; key < 300; ++key) {
      const int* got = lru.find(key);
      auto it = want.find(key);
      ASSERT_EQ(got != nullptr, it != want.end()) << "key " << key << " at step " << step;
      if (got != nullptr) {
        EXPECT_EQ(*got, it->second);
      }
    }
  }
}

}  // namespace
}  // namespace ork
