// sparse_check's host reference (tools/sparse_check/host_ref.h): a dot and a row agree
// exactly, gathered columns give the same dots, and sums past the int32 range stay exact.
#include <gtest/gtest.h>

#include <vector>

#include "tools/sparse_check/cells.h"
#include "tools/sparse_check/host_ref.h"

namespace ork::tools {
namespace {

TEST(HostRef, DotAndRowAgreeExactly) {
  const int64_t m = 3, k = 5, n = 4;
  const std::vector<int8_t> a = {1, -2, 3, -4, 5, 127, -128, 0, 1, 2, -1, -1, -1, -1, -1};
  std::vector<int8_t> w(k * n);
  for (int64_t i = 0; i < k * n; ++i) w[i] = static_cast<int8_t>(i * 13 - 100);
  // Row 0, column 0 by hand: w[x][0] = -100, -48, 4, 56, 108.
  EXPECT_EQ(host_dot(a, w, k, n, 0, 0), 1 * -100 + -2 * -48 + 3 * 4 + -4 * 56 + 5 * 108);
  std::vector<int64_t> row(n);
  for (int64_t r = 0; r < m; ++r) {
    host_row(a, w, k, n, r, row);
    for (int64_t c = 0; c < n; ++c) EXPECT_EQ(row[c], host_dot(a, w, k, n, r, c));
  }
}

TEST(HostRef, GatheredColumnsGiveTheSameDots) {
  const int64_t m = 4, k = 200, n = 70;
  std::vector<int8_t> a(m * k), w(k * n);
  SplitMix64 rng(3);
  fill_random_int8(a, rng);
  fill_random_int8(w, rng);
  const WColumns cols(w, k, n, {0, 5, 31, 32, 69});
  for (int64_t r = 0; r < m; ++r)
    for (int64_t c : {0, 5, 31, 32, 69}) EXPECT_EQ(cols.dot(a, r, c), host_dot(a, w, k, n, r, c));
  const std::vector<int8_t> big_a(140000, -128), big_w(140000 * 2, -128);
  EXPECT_EQ(WColumns(big_w, 140000, 2, {1}).dot(big_a, 0, 1), int64_t{140000} * 16384);
}

TEST(HostRef, SumsPastTheInt32RangeStayExact) {
  const int64_t k = 140000, n = 2;  // 140000 * 16384 > 2^31: the int32 chunks must flush
  const std::vector<int8_t> a(k, -128);
  const std::vector<int8_t> w(k * n, -128);
  std::vector<int64_t> row(n);
  host_row(a, w, k, n, 0, row);
  EXPECT_EQ(row[0], int64_t{140000} * 16384);
  EXPECT_EQ(row[1], int64_t{140000} * 16384);
  EXPECT_EQ(host_dot(a, w, k, n, 0, 1), int64_t{140000} * 16384);
}

}  // namespace
}  // namespace ork::tools
