// The CPU reference's fp16 matmuls (lib/ref/fp16_matmul.h): the slice order is the defined
// one (docs/dtypes.md), and the cpu device's tiled, threaded path returns the oracle's bytes.
#include <gtest/gtest.h>

#include <cstring>
#include <iterator>
#include <span>
#include <string>
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

// Random halves of |x| < 4 with a few sums that round (fp32 adds lose bits on these).
std::vector<uint16_t> random_halves(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-3.0f, 3.0f);
  std::vector<uint16_t> v(n);
  for (auto& x : v) x = ork::float_to_half(u(rng));
  return v;
}

// Every tier this CPU has, forced, on shapes that are no multiple of any vector width or
// tile (M = 1 and K = 1 included; M <= 8 reads B's halves in the tiles, M > 8 through the
// per-strip fp32 buffer), 0..2 threads, fp32 and fp16 C: the oracle's bytes.
TEST(RefFp16Packed, EveryTierEqualsTheOracleOnOddShapes) {
  using S = std::tuple<int64_t, int64_t, int64_t, int64_t>;
  for (auto [m, k, n, slice] : {S{1, 1, 1, 1}, S{1, 37, 65, 32}, S{2, 300, 17, 128}, S{3, 5, 130, 2}, S{5, 1, 63, 1},
                                S{8, 129, 64, 64}, S{9, 33, 200, 32}, S{13, 100, 1, 37}, S{17, 70, 129, 70}}) {
    const auto a = random_halves(static_cast<size_t>(m * k), 11), b = random_halves(static_cast<size_t>(k * n), 12);
    const ref::Dims d{m, k, n};
    std::vector<float> want(static_cast<size_t>(m * n));
    std::vector<uint16_t> want16(want.size());
    ASSERT_TRUE(ref::matmul_fp16_sliced(a, b, want, d, slice).ok());
    ASSERT_TRUE(ref::matmul_fp16_sliced_to_fp16(a, b, want16, d, slice).ok());
    auto packed = ref::pack_b_fp16(b, k, n);
    ASSERT_TRUE(packed.ok());
    for (ref::Fp16Isa isa : ref::supported_fp16_isas())
      for (int threads : {0, 1, 2}) {
        const ref::Fp16Options o{.threads = threads, .isa = isa};
        std::vector<float> got(want.size(), -1.0f);
        std::vector<uint16_t> got16(want.size());
        ASSERT_TRUE(ref::matmul_fp16_packed(a, m, *packed, got, slice, o).ok());
        ASSERT_TRUE(ref::matmul_fp16_packed_to_fp16(a, m, *packed, got16, slice, o).ok());
        EXPECT_EQ(0, std::memcmp(want.data(), got.data(), want.size() * 4))
            << ref::fp16_isa_name(isa) << " " << m << "x" << k << "x" << n << " t" << threads;
        EXPECT_EQ(want16, got16) << ref::fp16_isa_name(isa) << " " << m << "x" << k << "x" << n;
      }
  }
}

// NaN, inf and the largest halves: where a fused multiply-add could pick another NaN than
// the oracle's multiply, then add (several NaN operands with different payloads in one
// cell), or overflow differently. Each tier gives the oracle's bit patterns.
TEST(RefFp16Packed, NaNPayloadsAndInfinitiesAreTheOracles) {
  const int64_t m = 9, k = 6, n = 70;  // 9 rows: both the direct and the buffered form
  std::vector<uint16_t> a = random_halves(static_cast<size_t>(m * k), 13), b = random_halves(static_cast<size_t>(k * n), 14);
  const uint16_t specials[] = {0x7e01, 0xfe37, 0x7c00, 0xfc00, 0x7bff, 0xfbff, 0x0000, 0x8000, 0x7d55, 0xffff};
  std::mt19937 rng(15);
  for (int i = 0; i < 60; ++i) {
    a[rng() % a.size()] = specials[rng() % std::size(specials)];
    b[rng() % b.size()] = specials[rng() % std::size(specials)];
  }
  const ref::Dims d{m, k, n};
  std::vector<float> want(static_cast<size_t>(m * n));
  ASSERT_TRUE(ref::matmul_fp16_sliced(a, b, want, d, 4).ok());
  auto packed = ref::pack_b_fp16(b, k, n);
  ASSERT_TRUE(packed.ok());
  for (ref::Fp16Isa isa : ref::supported_fp16_isas())
    for (int64_t rows : {int64_t{1}, int64_t{3}, m}) {
      std::vector<float> got(static_cast<size_t>(rows * n));
      ASSERT_TRUE(ref::matmul_fp16_packed(std::span(a).first(static_cast<size_t>(rows * k)), rows, *packed, got, 4,
                                          {.isa = isa}).ok());
      EXPECT_EQ(0, std::memcmp(want.data(), got.data(), got.size() * 4)) << ref::fp16_isa_name(isa) << " M = " << rows;
    }
}

// B's strips give the dense halves back; bad sizes and slices are refused by name.
TEST(RefFp16Packed, UnpacksAndRefusesBadOperands) {
  const auto b = random_halves(3 * 130, 16);
  auto packed = ref::pack_b_fp16(b, 3, 130);
  ASSERT_TRUE(packed.ok());
  std::vector<uint16_t> back(b.size());
  ASSERT_TRUE(ref::unpack_b_fp16(*packed, back).ok());
  EXPECT_EQ(back, b);
  EXPECT_FALSE(ref::pack_b_fp16(b, 4, 130).ok());
  EXPECT_FALSE(ref::pack_b_fp16({}, 0, 130).ok());
  std::vector<uint16_t> a(6);
  std::vector<float> c(260);
  EXPECT_FALSE(ref::matmul_fp16_packed(a, 2, *packed, c, 0).ok());
  EXPECT_FALSE(ref::matmul_fp16_packed(a, 3, *packed, c, 3).ok());
  EXPECT_FALSE(ref::matmul_fp16_packed(a, 2, *packed, c, 3, {.threads = -1}).ok());
  EXPECT_FALSE(ref::matmul_fp16_packed(a, 2, ref::PackedFp16{}, c, 3).ok());
  auto msg = ref::matmul_fp16_packed(a, 2, *packed, std::span(c).first(259), 3);
  ASSERT_FALSE(msg.ok());
  EXPECT_NE(msg.error().message.find("C has 259 elements"), std::string::npos) << msg.error().message;
}

}  // namespace
}  // namespace ork::ref
