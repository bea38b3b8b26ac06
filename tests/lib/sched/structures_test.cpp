// The flat structures behind the scheduler's speed (docs/sched.md "Speed"), each checked
// against the standard container it replaced, on random operation sequences.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "lib/sched/names.h"
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

TEST(NameTable, MatchesStdMapAndRefusesDuplicates) {
  std::mt19937 rng(7);
  std::vector<std::string> names;  // the table holds views: the strings stay put
  names.reserve(200000);
  for (int i = 0; i < 200000; ++i) names.push_back("n" + std::to_string(rng() % 150000));
  NameTable table(16);  // small on purpose: it grows many times
  std::map<std::string, int> slow;
  for (int i = 0; i < static_cast<int>(names.size()); ++i) {
    auto [it, fresh] = slow.emplace(names[i], i);
    ASSERT_EQ(table.insert(names[i], i), it->second) << names[i];  // a duplicate gives the first id
    ASSERT_EQ(table.insert(names[i], -5), it->second);  // never stored again
    ASSERT_EQ(fresh, it->second == i);
  }
  ASSERT_EQ(table.size(), slow.size());
  for (const auto& [name, id] : slow) ASSERT_EQ(table.find(name), id);
  EXPECT_EQ(table.find("absent"), -1);
  EXPECT_EQ(table.find(""), -1);
  EXPECT_EQ(table.insert("", 3), 3);  // the empty name is a name like any other
  EXPECT_EQ(table.find(""), 3);
}

// The guess of the next declared entry (names.h): names found in declaration order, out of
// order, past the last entry, and a name absent between hits all give the stored ids.
TEST(NameTable, FindsInDeclarationOrderAndOutOfIt) {
  std::vector<std::string> names;
  for (int i = 0; i < 10000; ++i) names.push_back("b" + std::to_string(i));
  NameTable table(names.size());
  for (int i = 0; i < static_cast<int>(names.size()); ++i) ASSERT_EQ(table.insert(names[i], 3 * i), 3 * i);
  for (int i = 0; i < static_cast<int>(names.size()); ++i) ASSERT_EQ(table.find(names[i]), 3 * i) << i;
  EXPECT_EQ(table.find(names.back()), 3 * 9999);  // the guess is now past the last entry
  EXPECT_EQ(table.find("b10000"), -1);
  EXPECT_EQ(table.find(names[0]), 0);
  EXPECT_EQ(table.find("b1x"), -1);  // absent right where the guess (b1) points
  EXPECT_EQ(table.find(names[1]), 3);
  std::mt19937 rng(11);
  for (int k = 0; k < 20000; ++k) {
    const int i = static_cast<int>(rng() % names.size());
    ASSERT_EQ(table.find(names[i]), 3 * i) << i;
    if (i + 1 < static_cast<int>(names.size())) {
      ASSERT_EQ(table.find(names[i + 1]), 3 * (i + 1));
    }
  }
}

}  // namespace
}  // namespace ork::sched
