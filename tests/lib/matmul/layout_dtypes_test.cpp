// fp16 / int4 host layouts (lib/matmul/layout_dtypes.cpp) against the index functions
// (docs/dtypes.md). The CPU reference's fp16 slice order: tests/lib/ref/fp16_matmul_test.cpp.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <tuple>
#include <vector>

#include "lib/matmul/layout.h"
#include "driver/common/fp16.h"
#include "lib/ref/fp16_matmul.h"
#include "driver/common/int4.h"

namespace ork::matmul {
namespace {

Plan layout_dtypes_plan_of(Shape s, DType dt, bool fp16_out = false) {
  auto p = make_plan(s, {.dtype = dt, .cores = 1, .mc_cap = 0, .fp16_out = fp16_out});
  EXPECT_TRUE(p.ok()) << p.error().message;
  return *p;
}

int8_t nib(const std::vector<uint8_t>& v, int64_t i) { return ork::int4::value_at(v.data(), i); }

TEST(LayoutFp16, PackAAndBFollowTheIndexFunctions) {
  const Plan p = layout_dtypes_plan_of({5, 4100, 20}, DType::fp16);  // 3 slices, K and N tails
  std::mt19937 rng(3);
  std::vector<uint16_t> a(5 * 4100), b(4100 * 20);
  for (auto& x : a) x = static_cast<uint16_t>(rng() | 1);  // never 0: padding shows
  for (auto& x : b) x = static_cast<uint16_t>(rng() | 1);
  std::vector<uint16_t> na(static_cast<size_t>(p.a_bytes() / 2)), nb(static_cast<size_t>(p.b_bytes() / 2));
  ASSERT_TRUE(pack_a_fp16(a, p, na).ok());
  ASSERT_TRUE(pack_b_fp16(b, p, nb).ok());
  for (int64_t m = 0; m < 5; ++m)
    for (int64_t k = 0; k < p.kp; ++k)
      ASSERT_EQ(na[feature_index(DType::fp16, m, k, p.mp)], k < 4100 ? a[m * 4100 + k] : 0) << m << "," << k;
  for (int64_t k = 0; k < p.kp; ++k) {
    const int64_t s = k / p.slice_k, kt = std::min(p.slice_k, p.kp - s * p.slice_k);
    for (int64_t n = 0; n < p.np; ++n) {
      const uint16_t want = (k < 4100 && n < 20) ? b[k * 20 + n] : 0;
      ASSERT_EQ(nb[s * p.np * p.slice_k + weight_index(DType::fp16, k % p.slice_k, n, kt)], want) << k << "," << n;
    }
  }
}

TEST(LayoutInt4, PackAAndBKeepEveryNibble) {
  const Plan p = layout_dtypes_plan_of({3, 999, 70}, DType::int4);  // odd K*N: the last byte half used
  std::mt19937 rng(4);
  std::vector<uint8_t> a((3 * 999 + 1) / 2), b((999 * 70 + 1) / 2);
  for (auto& x : a) x = static_cast<uint8_t>(rng());
  for (auto& x : b) x = static_cast<uint8_t>(rng());
  std::vector<uint8_t> na(static_cast<size_t>(p.a_bytes())), nb(static_cast<size_t>(p.b_bytes()));
  ASSERT_TRUE(pack_a_int4(a, p, na).ok());
  ASSERT_TRUE(pack_b_int4(b, p, nb).ok());
  for (int64_t m = 0; m < 3; ++m)
    for (int64_t k = 0; k < p.kp; ++k)
      ASSERT_EQ(nib(na, feature_index(DType::int4, m, k, p.mp)), k < 999 ? nib(a, m * 999 + k) : 0);
  for (int64_t k = 0; k < p.kp; ++k) {
    const int64_t s = k / p.slice_k, kt = std::min(p.slice_k, p.kp - s * p.slice_k);
    for (int64_t n = 0; n < p.np; ++n) {
      const int8_t want = (k < 999 && n < 70) ? nib(b, k * 70 + n) : 0;
      ASSERT_EQ(nib(nb, s * p.np * p.slice_k + weight_index(DType::int4, k % p.slice_k, n, kt)), want);
    }
  }
  std::vector<uint8_t> short_a(a.size() - 1);
  auto bad = pack_a_int4(short_a, p, na);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("A (packed int4 bytes)"), std::string::npos);
}

TEST(LayoutInt4, WidenIsLowNibbleFirstTwosComplement) {
  const std::vector<uint8_t> packed = {0x21, 0xf8, 0x07};
  std::vector<int8_t> out(5);
  ASSERT_TRUE(widen_int4(packed, 5, out).ok());
  EXPECT_EQ(out, (std::vector<int8_t>{1, 2, -8, -1, 7}));
  EXPECT_FALSE(widen_int4(packed, 7, out).ok());  // 7 elements need 4 bytes
}

// Every byte value, odd and even counts, and a count past the two-thread split (1 MiB of
// packed bytes): element by element as int4::value_at reads it.
TEST(LayoutInt4, WidenMatchesValueAtOnOneAndTwoThreads) {
  for (int64_t count : {int64_t{1}, int64_t{511}, int64_t{512}, (int64_t{1} << 21) + 3}) {
    std::vector<uint8_t> packed(static_cast<size_t>((count + 1) / 2));
    for (size_t i = 0; i < packed.size(); ++i) packed[i] = static_cast<uint8_t>(i * 37 + (i >> 8));
    std::vector<int8_t> out(static_cast<size_t>(count) + 1, 99);  // one past: must stay
    ASSERT_TRUE(widen_int4(packed, count, std::span<int8_t>(out).first(static_cast<size_t>(count))).ok());
    for (int64_t i = 0; i < count; ++i) ASSERT_EQ(out[static_cast<size_t>(i)], int4::value_at(packed.data(), i)) << count << " " << i;
    EXPECT_EQ(out.back(), 99);
  }
}

TEST(LayoutUnpack, Int16PartialsWidenAndAdd) {
  const Plan p = layout_dtypes_plan_of({2, 1000, 9}, DType::int4);
  std::vector<int16_t> nat(static_cast<size_t>(c_elements_per_slice(p)));
  for (size_t i = 0; i < nat.size(); ++i) nat[i] = static_cast<int16_t>(30000 - static_cast<int>(i) * 7);
  std::vector<int32_t> c(2 * 9);
  ASSERT_TRUE(unpack_c_int16(nat, p, c, true).ok());
  ASSERT_TRUE(unpack_c_int16(nat, p, c, false).ok());
  for (int64_t m = 0; m < 2; ++m)
    for (int64_t n = 0; n < 9; ++n) EXPECT_EQ(c[m * 9 + n], 2 * int32_t{nat[output_index(8, m, n, p.mp)]});
}

TEST(LayoutUnpack, Fp16OutputNeedsTheMatchingPlan) {
  const Plan f16 = layout_dtypes_plan_of({2, 64, 16}, DType::fp16, true);
  std::vector<float> nat(static_cast<size_t>(c_elements_per_slice(f16))), c(32);
  EXPECT_FALSE(unpack_c_fp32(nat, f16, c, true).ok());
  std::vector<uint16_t> h(nat.size()), hc(32);
  EXPECT_TRUE(unpack_c_fp16(h, f16, hc).ok());
}

}  // namespace
}  // namespace ork::matmul
