// lib/sched/names.cpp: the name table behind the scheduler's speed (docs/sched.md "Speed"),
// checked against the std::map it replaced, and its guess of the next declared entry.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "lib/sched/names.h"

namespace ork::sched {
namespace {

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

// NameTable::hash reads a name a word at a time and its tail by overlapping loads: names of
// every length up to 40 that differ in any one byte, or only in length, hash apart.
TEST(NameTable, HashSeesEveryByteAndTheLength) {
  std::vector<uint64_t> seen;
  for (size_t n = 0; n <= 40; ++n) {
    const std::string name(n, 'a');
    seen.push_back(NameTable::hash(name));
    for (size_t i = 0; i < n; ++i) {
      std::string changed = name;
      changed[i] = 'b';
      seen.push_back(NameTable::hash(changed));
      changed[i] = '\0';
      seen.push_back(NameTable::hash(changed));
    }
  }
  std::sort(seen.begin(), seen.end());
  EXPECT_EQ(std::adjacent_find(seen.begin(), seen.end()), seen.end());
  EXPECT_EQ(NameTable::hash(std::string_view("a\0", 2)) == NameTable::hash("a"), false);
}

// Names up to 16 bytes are copied into their entry, longer ones are read where they lie:
// both kinds, and the lengths at the edge, are found and told apart.
TEST(NameTable, ShortAndLongNamesAreFoundAndToldApart) {
  std::vector<std::string> names;
  for (size_t n = 0; n <= 40; ++n) names.push_back(std::string(n, 'x'));
  for (size_t n = 15; n <= 18; ++n) names.push_back(std::string(n - 1, 'x') + 'y');
  NameTable table(4);
  for (size_t i = 0; i < names.size(); ++i) ASSERT_EQ(table.insert(names[i], static_cast<int>(i)), static_cast<int>(i));
  for (size_t i = 0; i < names.size(); ++i) EXPECT_EQ(table.find(names[i]), static_cast<int>(i)) << names[i];
  EXPECT_EQ(table.find(std::string(16, 'x') + 'z'), -1);
  EXPECT_EQ(table.find(std::string(17, 'x') + 'z'), -1);
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

// A decode stream's pattern (tools/ork_sched's decode streams): each layer declares its
// activation before its weights but uses the first weight before it, so the entry after the
// last one found is behind the next new name; the entry after the furthest one found is that
// name. Per layer: at most 2 finds of 3 go to the index (the first weight, the activation),
// where the guess of the last entry alone sent all 3. 20,000 layers: the 4,096 recent slots,
// which the inserts fill too, hold only the last layers' names by the time they are found.
TEST(NameTable, TheFurthestEntryFoundGuessesTheNextNewName) {
  std::vector<std::string> names;
  const int layers = 20000;
  for (int l = 0; l < layers; ++l)
    for (const char* kind : {"a", "w0_", "w1_"}) names.push_back(kind + std::to_string(l));
  NameTable table(names.size());
  for (size_t i = 0; i < names.size(); ++i) ASSERT_EQ(table.insert(names[i], static_cast<int>(i)), static_cast<int>(i));
  for (int l = 0; l < layers; ++l)
    for (int k : {1, 0, 2}) ASSERT_EQ(table.find(names[3 * l + k]), 3 * l + k);  // w0, a, w1
  EXPECT_LE(table.index_lookups(), 2u * layers);
  EXPECT_GE(table.index_lookups(), 2u * layers - 4096);  // only the recent slots answer the rest
}

}  // namespace
}  // namespace ork::sched
