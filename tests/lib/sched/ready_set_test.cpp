// lib/sched/ready_set.h: the flat ready set behind the scheduler's speed (docs/sched.md
// "Speed"), checked against the std::set it replaced on random operation sequences.
#include <gtest/gtest.h>

#include <random>
#include <set>
#include <string>
#include <vector>

#include "lib/sched/ready_set.h"

namespace ork::sched {
namespace {

using detail::ReadySet;

// Every element in order, by the set's own iteration.
std::vector<int> items(const ReadySet& s) {
  std::vector<int> out;
  for (int pos : s) out.push_back(pos);
  return out;
}

TEST(ReadySet, MatchesStdSetOnRandomOperations) {
  for (int n : {1, 63, 64, 65, 4095, 4096, 4097, 300000}) {
    SCOPED_TRACE("n " + std::to_string(n));
    std::mt19937 rng(static_cast<unsigned>(n));
    ReadySet fast(n);
    std::set<int> slow;
    // Sparse phases (few elements far apart: the upper levels are searched) and dense ones.
    for (int step = 0; step < 20000; ++step) {
      const int pos = static_cast<int>(rng() % static_cast<unsigned>(n));
      if (rng() % 3 == 0) {
        fast.erase(pos);
        slow.erase(pos);
      } else if ((step / 2000) % 2 == 0 || rng() % 8 == 0) {
        fast.insert(pos);
        slow.insert(pos);
      }
      ASSERT_EQ(fast.size(), static_cast<int>(slow.size()));
      ASSERT_EQ(fast.empty(), slow.empty());
      ASSERT_EQ(fast.contains(pos), slow.count(pos) == 1);
      ASSERT_EQ(fast.first(), slow.empty() ? -1 : *slow.begin());
      const int from = static_cast<int>(rng() % static_cast<unsigned>(n));
      auto it = slow.lower_bound(from);
      ASSERT_EQ(fast.next(from), it == slow.end() ? -1 : *it) << "from " << from;
    }
    ASSERT_EQ(items(fast), std::vector<int>(slow.begin(), slow.end()));
  }
}

TEST(ReadySet, FarApartPositions) {
  ReadySet s(1 << 20);
  for (int pos : {0, 63, 64, 4095, 4096, 262143, 262144, (1 << 20) - 1}) s.insert(pos);
  EXPECT_EQ(items(s), (std::vector<int>{0, 63, 64, 4095, 4096, 262143, 262144, (1 << 20) - 1}));
  s.erase(0);
  s.erase(63);
  s.erase(64);
  EXPECT_EQ(s.first(), 4095);
  EXPECT_EQ(s.next(4097), 262143);
  EXPECT_EQ(s.next(262145), (1 << 20) - 1);
  EXPECT_EQ(s.next(1 << 20), -1);
  s.erase((1 << 20) - 1);
  EXPECT_EQ(s.next(262145), -1);
}

}  // namespace
}  // namespace ork::sched
