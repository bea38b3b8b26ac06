// lib/ref/pack.cpp column_bias (the rows kernel's -128 x column sum over a panel of packed B),
// against its definition summed a byte at a time: odd and even panel widths, one to a few
// hundred groups, random bytes over the whole int8 range and each extreme everywhere.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "lib/ref/pack.h"
#include "lib/ref/random.h"

namespace ork::ref {
namespace {

// Panel p's column c: bytes [g][c][4] of each group g; -128 x their sum, modulo 2^32.
std::vector<int32_t> bias_by_definition(const std::vector<int8_t>& panels, int64_t count, int64_t groups, int nr) {
  std::vector<int32_t> out(static_cast<size_t>(count * nr));
  for (int64_t p = 0; p < count; ++p)
    for (int c = 0; c < nr; ++c) {
      int64_t sum = 0;
      for (int64_t g = 0; g < groups; ++g)
        for (int i = 0; i < 4; ++i) sum += panels[static_cast<size_t>(((p * groups + g) * nr + c) * 4 + i)];
      out[static_cast<size_t>(p * nr + c)] = static_cast<int32_t>(static_cast<uint32_t>(-128 * sum));
    }
  return out;
}

TEST(ColumnBias, EqualsTheColumnSumsOfEveryPanel) {
  for (int nr : {1, 3, 16, 32, 63, 64})
    for (int64_t groups : {1, 2, 7, 300}) {
      const int64_t count = 3, bytes = count * groups * nr * 4;
      std::vector<std::vector<int8_t>> cases = {random_int8(bytes, static_cast<uint32_t>(nr * 1000 + groups)),
                                                std::vector<int8_t>(static_cast<size_t>(bytes), -128),
                                                std::vector<int8_t>(static_cast<size_t>(bytes), 127)};
      for (const auto& panels : cases) {
        std::vector<int32_t> got(static_cast<size_t>(count * nr), 0x5a5a5a5a);
        detail::column_bias(reinterpret_cast<const uint8_t*>(panels.data()), count, groups, nr, got.data());
        ASSERT_EQ(got, bias_by_definition(panels, count, groups, nr)) << "nr " << nr << ", groups " << groups;
      }
    }
}

// Past the 2^20 groups the sums run in before they are folded into 32 bits (a K of 4 Mi).
TEST(ColumnBias, PastOneRunOfGroups) {
  const int64_t groups = (int64_t{1} << 20) + 5;
  for (int8_t v : {int8_t{127}, int8_t{-128}, int8_t{-3}}) {
    std::vector<int8_t> panels(static_cast<size_t>(groups * 2 * 4), v);
    panels[7] = 11;  // column 1 of group 0
    std::vector<int32_t> got(2);
    detail::column_bias(reinterpret_cast<const uint8_t*>(panels.data()), 1, groups, 2, got.data());
    EXPECT_EQ(got, bias_by_definition(panels, 1, groups, 2)) << int{v};
  }
}

}  // namespace
}  // namespace ork::ref
