// The byte-bounded cache (driver/common/byte_lru.h) under the runner's contexts and the
// emulator's prepared weights: the bound counts bytes, eviction by the clock takes an entry
// not found since the hand last passed it before any found since, a new entry is never
// evicted by its own insert, groups drop together, keep_new keeps an oversized newcomer; its
// flat index (key and value in the slot) finds every key through collisions, growth,
// deletions and evictions, with the value that key was given.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "driver/common/byte_lru.h"

namespace ork {
namespace {

using Lru = ByteLru<int, std::string>;

// The keys present, sorted (the cache has no order of its own).
std::vector<int> keys(const Lru& lru) {
  std::vector<int> out;
  lru.for_each([&](int k, const std::string&) { out.push_back(k); });
  std::sort(out.begin(), out.end());
  return out;
}

TEST(ByteLru, BoundIsBytesNotCount) {
  Lru lru(1000);
  for (int i = 0; i < 100; ++i) ASSERT_NE(lru.insert(i, 0, "x", 10, false), nullptr);
  EXPECT_EQ(lru.size(), 100u);  // 100 entries of 10 bytes: exactly at the bound, none dropped
  EXPECT_EQ(lru.bytes(), 1000u);
  EXPECT_EQ(lru.evictions(), 0u);
  ASSERT_NE(lru.insert(100, 0, "y", 25, false), nullptr);  // 1025 > 1000: three of 10 bytes go
  EXPECT_EQ(lru.size(), 98u);
  EXPECT_EQ(lru.bytes(), 995u);
  EXPECT_EQ(lru.evictions(), 3u);
  ASSERT_NE(lru.find(100), nullptr);  // never the newcomer
  EXPECT_EQ(*lru.find(100), "y");
}

TEST(ByteLru, AFoundEntryOutlivesTheUnfoundOnesAndANewOneItsOwnInsert) {
  Lru lru(30);
  lru.insert(1, 0, "a", 10, false);
  lru.insert(2, 0, "b", 10, false);
  lru.insert(3, 0, "c", 10, false);
  EXPECT_EQ(keys(lru), (std::vector<int>{1, 2, 3}));
  ASSERT_NE(lru.find(1), nullptr);  // 1 is referenced: 2 and 3 are not
  EXPECT_EQ(*lru.find(1), "a");
  lru.insert(4, 0, "d", 10, false);  // one of 2 and 3 goes, never 1, never 4
  const std::vector<int> left = keys(lru);
  ASSERT_EQ(left.size(), 3u);
  EXPECT_TRUE(left == (std::vector<int>{1, 3, 4}) || left == (std::vector<int>{1, 2, 4})) << ::testing::PrintToString(left);
  lru.set_capacity(15);  // shrinking evicts down to the bound, the unfound first
  EXPECT_EQ(keys(lru), (std::vector<int>{1}));
  EXPECT_EQ(lru.bytes(), 10u);
}

// At model scale: 100 entries, every bit cleared by one full sweep, then 30 of them found;
// 50 inserts evict 50 entries, all among those not found since (the other old ones and the
// new ones, which start unfound), none of the 30.
TEST(ByteLru, EvictionUnderTheBoundSparesEveryEntryFoundSinceTheSweep) {
  Lru lru(1000);
  for (int i = 0; i < 100; ++i) lru.insert(i, static_cast<uint64_t>(i % 7), std::to_string(i), 10, false);
  for (int i = 0; i < 100; ++i) ASSERT_NE(lru.find(i), nullptr);  // every bit set
  lru.insert(1000, 0, "n", 10, false);  // the hand clears all 100, then evicts one
  ASSERT_EQ(lru.evictions(), 1u);
  std::set<int> hot;
  std::mt19937 rng(3);
  for (int k : keys(lru))
    if (k < 100 && rng() % 3 == 0 && hot.size() < 30) hot.insert(k);
  ASSERT_EQ(hot.size(), 30u);
  for (int k : hot) ASSERT_NE(lru.find(k), nullptr);
  for (int i = 0; i < 50; ++i) ASSERT_NE(lru.insert(2000 + i, 1, "new", 10, false), nullptr);
  EXPECT_EQ(lru.evictions(), 51u);
  EXPECT_EQ(lru.size(), 100u);
  EXPECT_EQ(lru.bytes(), 1000u);
  const std::vector<int> left = keys(lru);
  for (int k : hot) EXPECT_TRUE(std::binary_search(left.begin(), left.end(), k)) << "found entry " << k << " evicted";
  for (int k : left) EXPECT_EQ(*lru.find(k), k >= 2000 ? "new" : k == 1000 ? "n" : std::to_string(k));
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
  EXPECT_EQ(keys(lru), (std::vector<int>{1}));  // and it evicts nothing for a place it cannot take
  EXPECT_EQ(lru.bytes(), 10u);
  EXPECT_EQ(lru.evictions(), 0u);
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
  EXPECT_EQ(keys(lru), (std::vector<int>{0, 2, 3, 5, 6, 8, 9}));
  EXPECT_EQ(lru.bytes(), 35u);
  EXPECT_EQ(lru.erase_group(1), 0u);
  EXPECT_EQ(lru.erase_group_if(0, [](int k, const std::string&) { return k >= 6; }), 2u);  // 6, 9
  EXPECT_EQ(keys(lru), (std::vector<int>{0, 2, 3, 5, 8}));
  EXPECT_EQ(lru.erase_group_if(2, [](int, const std::string&) { return true; }), 3u);  // 2, 5, 8
  EXPECT_EQ(keys(lru), (std::vector<int>{0, 3}));
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

// The same collisions under a bound of 200 bytes that entries of 1-10 bytes overflow: the
// clock evicts while the index shifts entries back, grows and drops groups. Whatever is left
// must be exactly what the cache says it holds, each key with the value it was last given,
// its bytes counted once, the bound kept; a key evicted and inserted again is found again.
TEST(ByteLru, FlatIndexStaysRightThroughEvictions) {
  ByteLru<int, int, FourHashes> lru(200);
  std::map<int, std::pair<int, size_t>> given;  // key -> (value, bytes) of its last insert
  std::mt19937 rng(11);
  for (int step = 0; step < 20000; ++step) {
    const int k = static_cast<int>(rng() % 120);
    if (rng() % 3 != 0) {
      const size_t bytes = 1 + rng() % 10;
      ASSERT_NE(lru.insert(k, static_cast<uint64_t>(k % 5), step, bytes, false), nullptr);
      given[k] = {step, bytes};
    } else if (rng() % 8 == 0) {
      lru.erase_group(static_cast<uint64_t>(k % 5));
    } else {
      (void)lru.find(k);  // sets bits, so the clock has something to spare
    }
    if (step % 500 != 499) continue;
    size_t n = 0, bytes = 0;
    lru.for_each([&](int key, int value) {
      ++n;
      bytes += given.at(key).second;
      EXPECT_EQ(value, given.at(key).first) << "key " << key;
    });
    ASSERT_EQ(n, lru.size());
    ASSERT_EQ(bytes, lru.bytes());
    ASSERT_LE(lru.bytes(), lru.capacity());
    for (int key = 0; key < 120; ++key) {
      const int* got = lru.find(key);
      bool listed = false;
      lru.for_each([&](int other, int) { listed = listed || other == key; });
      ASSERT_EQ(got != nullptr, listed) << "key " << key << " at step " << step;
    }
  }
  EXPECT_GT(lru.evictions(), 1000u);
}

}  // namespace
}  // namespace ork
