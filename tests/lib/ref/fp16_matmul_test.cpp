// The CPU reference's fp16 matmuls (lib/ref/fp16_matmul.h): the slice order is the defined
// one (docs/dtypes.md), and the cpu device's tiled, threaded path returns the oracle's bytes.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <tuple>
#include <vector>

#include "driver/common/fp16.h"
#include "lib/ref/fp16_matmul.h"
#include "lib/ref/oracle.h"

namespace ork::ref {
namespace {

// The slice order is visible: 2^24 then 63 ones. One slice loses every 1 (2^24 + 1 rounds
// to 2^24, ties to even); slices of 32 sum 32 of them exactly in the second partial.
TEST(RefFp16, SliceOrderIsTheDefinedOne) {
  const int64_t k = 64;
  std::vector<uint16_t> a(k, ork::float_to_half(1.0f)), b(k, ork::float_to_half(1.0f));
  b[0] = ork::float_to_half(4096.0f);
  a[0] = ork::float_to_half(4096.0f);
  std::vector<float> c(1);
  ASSERT_TRUE(ref::matmul_fp16_sliced(a, b, c, {1, k, 1}, 32).ok());
  EXPECT_EQ(c[0], 16777216.0f + 32.0f);
  ASSERT_TRUE(ref::matmul_fp16_sliced(a, b, c, {1, k, 1}, 64).ok());
  EXPECT_EQ(c[0], 16777216.0f);
  std::vector<float> plain(1);
  ASSERT_TRUE(ref::matmul_fp16(a, b, plain, {1, k, 1}).ok());
  EXPECT_EQ(plain[0], c[0]);
  std::vector<uint16_t> h(1);
  ASSERT_TRUE(ref::matmul_fp16_sliced_to_fp16(a, b, h, {1, k, 1}, 32).ok());
  EXPECT_EQ(h[0], 0x7c00);  // 2^24 + 32 > 65504: inf
  EXPECT_FALSE(ref::matmul_fp16_sliced(a, b, c, {1, k, 1}, 0).ok());
}

// The CPU backend's row-at-a-time fp16 path returns the oracle's bytes (fp32 and fp16 C),
// with values whose sums round, at slice widths that cut K unevenly.
TEST(RefFp16, RowPathEqualsTheOracle) {
  std::mt19937 rng(9);
  std::uniform_real_distribution<float> u(-3.0f, 3.0f);
  for (auto [m, k, n, slice] : {std::tuple{3, 100, 17, 32}, {5, 4128, 9, 2048}, {1, 64, 64, 64}, {4, 37, 3, 5}}) {
    std::vector<uint16_t> a(static_cast<size_t>(m * k)), b(static_cast<size_t>(k * n));
    for (auto& x : a) x = ork::float_to_half(u(rng));
    for (auto& x : b) x = ork::float_to_half(u(rng));
    const ref::Dims d{m, k, n};
    std::vector<float> want(static_cast<size_t>(m * n)), got(want.size());
    ASSERT_TRUE(ref::matmul_fp16_sliced(a, b, want, d, slice).ok());
    ASSERT_TRUE(ref::matmul_fp16_rows(a, b, got, d, slice).ok());
    EXPECT_EQ(0, std::memcmp(want.data(), got.data(), want.size() * 4)) << m << "x" << k << "x" << n;
    std::vector<uint16_t> wh(want.size()), gh(want.size());
    ASSERT_TRUE(ref::matmul_fp16_sliced_to_fp16(a, b, wh, d, slice).ok());
    ASSERT_TRUE(ref::matmul_fp16_rows_to_fp16(a, b, gh, d, slice).ok());
    EXPECT_EQ(wh, gh);
  }
  std::vector<uint16_t> a(4), b(4);
  std::vector<float> c(1);
  EXPECT_FALSE(ref::matmul_fp16_rows(a, b, c, {1, 4, 1}, 0).ok());
  EXPECT_FALSE(ref::matmul_fp16_rows(a, b, c, {1, 3, 1}, 4).ok());
}

// Tiles (4 rows x 256 columns, 16-lane runs) and threads choose only which cells are
// computed together: partial tiles on both edges, 1..3 threads and the automatic count give
// the oracle's bytes; a negative thread count is refused.
TEST(RefFp16, TiledThreadedPathEqualsTheOracle) {
  std::mt19937 rng(10);
  std::uniform_real_distribution<float> u(-3.0f, 3.0f);
  for (auto [m, k, n, slice] : {std::tuple{7, 300, 530, 128}, {13, 2100, 257, 2048}, {1, 500, 1000, 480}}) {
    std::vector<uint16_t> a(static_cast<size_t>(m * k)), b(static_cast<size_t>(k * n));
    for (auto& x : a) x = ork::float_to_half(u(rng));
    for (auto& x : b) x = ork::float_to_half(u(rng));
    const ref::Dims d{m, k, n};
    std::vector<float> want(static_cast<size_t>(m * n));
    ASSERT_TRUE(ref::matmul_fp16_sliced(a, b, want, d, slice).ok());
    for (int threads : {0, 1, 2, 3}) {
      std::vector<float> got(want.size());
      int used = -1;
      ASSERT_TRUE(ref::matmul_fp16_rows(a, b, got, d, slice, {.threads = threads, .threads_used = &used}).ok());
      EXPECT_EQ(0, std::memcmp(want.data(), got.data(), want.size() * 4)) << m << "x" << k << "x" << n << " t" << threads;
      EXPECT_GE(used, 1);
      if (threads > 0) {
        EXPECT_EQ(used, threads);
      }
    }
  }
  std::vector<uint16_t> a(4), b(4);
  std::vector<float> c(1);
  EXPECT_FALSE(ref::matmul_fp16_rows(a, b, c, {1, 4, 1}, 4, {.threads = -1}).ok());
}

}  // namespace
}  // namespace ork::ref
