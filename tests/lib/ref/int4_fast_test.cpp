// matmul_int4_fast (lib/ref/fast.h) == the oracle's matmul_int4, byte for byte, on every ISA
// tier this CPU has: odd shapes, K not a multiple of the kernels' 32-byte groups, the int4
// extremes; and every value out of -8..7, in A or in B, refused with the oracle's error.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "lib/ref/fast.h"
#include "lib/ref/int4.h"
#include "lib/ref/oracle.h"

namespace ork::ref {
namespace {

std::vector<int8_t> random_int4_values(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> d(-8, 7);
  std::vector<int8_t> v(n);
  for (auto& x : v) x = static_cast<int8_t>(d(rng));
  return v;
}

void expect_int4_fast_equals_oracle(Dims d, uint32_t seed) {
  const auto a = random_int4_values(static_cast<size_t>(d.m * d.k), seed);
  const auto b = random_int4_values(static_cast<size_t>(d.k * d.n), seed + 1);
  std::vector<int32_t> want(static_cast<size_t>(d.m * d.n));
  ASSERT_TRUE(matmul_int4(a, b, want, d).ok());
  for (Isa isa : supported_isas()) {
    for (int threads : {1, 2}) {
      std::vector<int32_t> got(want.size(), 0x5a5a5a5a);
      const Status s = matmul_int4_fast(a, b, got, d, {.threads = threads, .isa = isa});
      ASSERT_TRUE(s.ok()) << s.error().message;
      // The bytes, as the executor's fingerprints read them.
      ASSERT_EQ(std::memcmp(got.data(), want.data(), want.size() * sizeof(int32_t)), 0)
          << isa_name(isa) << " threads=" << threads << " M=" << d.m << " K=" << d.k << " N=" << d.n;
    }
  }
}

TEST(FastInt4, EqualsTheInt4OracleOnOddShapes) {
  // K odd, K not a multiple of 32 (the kernels' K groups) and K past one group; N and M
  // short of a tile; decode (M = 1) and prefill rows.
  const Dims shapes[] = {{1, 1, 1}, {1, 3, 5}, {3, 31, 7}, {1, 33, 17}, {5, 63, 65}, {1, 97, 130},
                         {7, 129, 31}, {2, 480, 33}, {17, 1001, 19}, {64, 512, 128}};
  uint32_t seed = 1;
  for (Dims d : shapes) expect_int4_fast_equals_oracle(d, seed += 2);
}

TEST(FastInt4, ExtremesEqualTheOracle) {
  const Dims d{3, 1409, 9};  // every product -8 x -8 = 64 at its largest: 1409 x 64 per cell
  std::vector<int8_t> a(static_cast<size_t>(d.m * d.k), -8), b(static_cast<size_t>(d.k * d.n), -8);
  b[5] = 7;
  a[d.k] = 7;
  std::vector<int32_t> want(static_cast<size_t>(d.m * d.n)), got(want.size());
  ASSERT_TRUE(matmul_int4(a, b, want, d).ok());
  ASSERT_TRUE(matmul_int4_fast(a, b, got, d).ok());
  EXPECT_EQ(got, want);
  EXPECT_EQ(got[2 * d.n], 1409 * 64);
}

// The check reads eight values a word: an outlier at every position of three words and a
// tail, each of the 240 values outside -8..7 and both edges inside, and the first of two
// outliers named.
TEST(FastInt4, EveryOutsideValueAtEveryPositionIsNamed) {
  const Dims d{1, 27, 1};
  std::vector<int32_t> c(1);
  std::vector<int8_t> b(27, 0);
  for (int64_t at = 0; at < d.k; ++at) {
    for (int v = -128; v <= 127; ++v) {
      std::vector<int8_t> a(static_cast<size_t>(d.k), 0);
      for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<int8_t>(i % 2 == 0 ? 7 : -8);
      a[static_cast<size_t>(at)] = static_cast<int8_t>(v);
      const Status s = matmul_int4_fast(a, b, c, d);
      if (v >= -8 && v <= 7) {
        ASSERT_TRUE(s.ok()) << "A[" << at << "] = " << v;
        continue;
      }
      ASSERT_FALSE(s.ok()) << "A[" << at << "] = " << v;
      ASSERT_EQ(s.error().message, "A[" + std::to_string(at) + "] = " + std::to_string(v) +
                                       ": int4 values must be in -8..7");
    }
  }
  std::vector<int8_t> a(27, 0);
  a[13] = 9, a[5] = -100;
  EXPECT_EQ(matmul_int4_fast(a, b, c, d).error().message, "A[5] = -100: int4 values must be in -8..7");
}

TEST(FastInt4, AValueOutsideMinus8To7IsRefusedAsTheOracleRefusesIt) {
  const Dims d{2, 5, 3};
  std::vector<int32_t> c(6);
  for (int8_t bad : {int8_t{8}, int8_t{-9}, int8_t{127}, int8_t{-128}}) {
    auto a = random_int4_values(10, 7), b = random_int4_values(15, 8);
    a[6] = bad;
    const Status fa = matmul_int4_fast(a, b, c, d), oa = matmul_int4(a, b, c, d);
    ASSERT_FALSE(fa.ok());
    EXPECT_EQ(fa.error().message, "A[6] = " + std::to_string(bad) + ": int4 values must be in -8..7");
    EXPECT_EQ(fa.error().message, oa.error().message);
    a[6] = 0;
    b[14] = bad;
    const Status fb = matmul_int4_fast(a, b, c, d);
    ASSERT_FALSE(fb.ok());
    EXPECT_EQ(fb.error().message, "B[14] = " + std::to_string(bad) + ": int4 values must be in -8..7");
  }
  // Sizes are checked before any value is read.
  std::vector<int8_t> short_a(3, 0), b(15, 0);
  const Status s = matmul_int4_fast(short_a, b, c, d);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message, "A has 3 elements, M = 2, K = 5, N = 3 needs 10");
}

}  // namespace
}  // namespace ork::ref
