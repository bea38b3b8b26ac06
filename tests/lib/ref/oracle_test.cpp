// The CPU reference's oracle (lib/ref/oracle.h): the fp16 oracle against hand-computed values
// (the conversions themselves are tested in tests/driver/common/fp16_test.cpp), the int8 /
// int4 oracle, and its operand errors. The fast int8 path against it: fast_test.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <thread>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>
#if defined(__aarch64__)
#include <asm/hwcap.h>
#include <sys/auxv.h>
#endif

#include "lib/ref/fast.h"
#include "driver/common/fp16.h"
#include "lib/ref/oracle.h"
#include "lib/ref/random.h"

namespace ork::ref {
namespace {

std::vector<uint16_t> halves(std::initializer_list<float> v) {
  std::vector<uint16_t> out;
  for (float f : v) out.push_back(float_to_half(f));
  return out;
}

TEST(OracleFp16, DefinedAccumulationOrder) {
  // 4096 * 4096 = 2^24; then + 1 rounds back to 2^24 twice (tie -> even). Summing the ones
  // first would give 2^24 + 2: the order is visible and defined.
  const auto a = halves({4096, 1, 1}), b = halves({4096, 1, 1});
  std::vector<float> c(1);
  ASSERT_TRUE(matmul_fp16(a, b, c, {1, 3, 1}).ok());
  EXPECT_EQ(c[0], 16777216.0f);
  const auto a2 = halves({1, 1, 4096}), b2 = halves({1, 1, 4096});
  ASSERT_TRUE(matmul_fp16(a2, b2, c, {1, 3, 1}).ok());
  EXPECT_EQ(c[0], 16777218.0f);
}

TEST(OracleFp16, ProductsExactAndOutputRounding) {
  // 2x2 by hand: A = [[0.5, 3], [-2, 2^-24]], B = [[2, 1], [1, 2^-24]] (2^-24: a subnormal).
  const auto a = halves({0.5f, 3.0f, -2.0f, std::ldexp(1.0f, -24)});
  const auto b = halves({2.0f, 1.0f, 1.0f, std::ldexp(1.0f, -24)});
  std::vector<float> c(4);
  ASSERT_TRUE(matmul_fp16(a, b, c, {2, 2, 2}).ok());
  EXPECT_EQ(c[0], 4.0f);                                      // 0.5*2 + 3*1
  EXPECT_EQ(c[1], 0.5f + 3.0f * std::ldexp(1.0f, -24));       // exact in fp32
  EXPECT_EQ(c[2], -4.0f + std::ldexp(1.0f, -24));
  EXPECT_EQ(c[3], -2.0f + std::ldexp(1.0f, -48));             // rounds to -2 in fp32
  EXPECT_EQ(c[3], -2.0f);
  // fp16 output: 2048 + 1 = 2049 is a tie between 2048 and 2050 -> 2048 (even); 2051 -> 2052.
  std::vector<uint16_t> h(1);
  ASSERT_TRUE(matmul_fp16_to_fp16(halves({2048, 1}), halves({1, 1}), h, {1, 2, 1}).ok());
  EXPECT_EQ(h[0], 0x6800);
  ASSERT_TRUE(matmul_fp16_to_fp16(halves({2048, 3}), halves({1, 1}), h, {1, 2, 1}).ok());
  EXPECT_EQ(h[0], 0x6802);
  // Overflow to inf, and inf * 0 = NaN propagate as IEEE says.
  ASSERT_TRUE(matmul_fp16_to_fp16(halves({65504, 65504}), halves({2, 0}), h, {1, 2, 1}).ok());
  EXPECT_EQ(h[0], 0x7c00);
  std::vector<float> one(1);
  ASSERT_TRUE(matmul_fp16(halves({INFINITY}), halves({0}), one, {1, 1, 1}).ok());
  EXPECT_TRUE(std::isnan(one[0]));
}

TEST(OracleInt, Int8AndInt4ByHand) {
  const std::vector<int8_t> a = {1, -2, 3, 127, -128, 0}, b = {4, -5, 6, 7, -128, 127};
  std::vector<int32_t> c(4);
  ASSERT_TRUE(matmul_int8(a, b, c, {2, 3, 2}).ok());
  // row0 = [1,-2,3], row1 = [127,-128,0]; B rows [4,-5], [6,7], [-128,127]
  EXPECT_EQ(c, (std::vector<int32_t>{4 - 12 - 384, -5 - 14 + 381, 508 - 768, -635 - 896}));
  const std::vector<int8_t> a4 = {-8, 7, 1}, b4 = {-8, 7, -1};
  std::vector<int32_t> c4(1);
  ASSERT_TRUE(matmul_int4(a4, b4, c4, {1, 3, 1}).ok());
  EXPECT_EQ(c4[0], 64 + 49 - 1);
  const std::vector<int8_t> bad = {8, 0, 0};
  EXPECT_EQ(matmul_int4(bad, b4, c4, {1, 3, 1}).error().message, "A[0] = 8: int4 values must be in -8..7");
}

TEST(OracleInt, OperandErrorsAreNamed) {
  std::vector<int8_t> a(6), b(6);
  std::vector<int32_t> c(4);
  EXPECT_EQ(matmul_int8(a, b, c, {0, 3, 2}).error().message, "M = 0: must be >= 1");
  EXPECT_EQ(matmul_int8(a, b, c, {2, 4, 2}).error().message,
            "A has 6 elements, M = 2, K = 4, N = 2 needs 8");
  EXPECT_EQ(matmul_int8(a, b, c, {2, 3, 3}).error().message,
            "B has 6 elements, M = 2, K = 3, N = 3 needs 9");
  EXPECT_EQ(matmul_int8_fast(a, b, c, {2, 3, 2}, {.threads = -1}).error().message,
            "threads = -1: must be >= 0");
}

}  // namespace
}  // namespace ork::ref
