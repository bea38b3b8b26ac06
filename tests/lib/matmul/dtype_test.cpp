// The dtype table (lib/matmul/dtype.h) and the CPU reference's kernels it points at
// (lib/matmul/cpu_matmul.h): the table's facts against their sources, the A / C rules and
// their messages, and each row's CPU kernel against the oracle (lib/ref/oracle.h), byte for
// byte.
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "driver/common/int4.h"
#include "driver/regs/matmul_fixed.h"
#include "lib/matmul/cpu_matmul.h"
#include "lib/matmul/dtype.h"
#include "lib/matmul/plan.h"
#include "lib/ref/oracle.h"
#include "lib/ref/random.h"

namespace ork::matmul {
namespace {

TEST(DTypeTable, RowsInDTypeOrderWithTheirFacts) {
  ASSERT_EQ(weights_dtypes().size(), 3u);
  // The C API numbers (include/ork/ork.h), bits, precision codes (matmul_fixed.h) and slice
  // widths (plan.h; docs/dtypes.md "Common to every dtype").
  struct Want { DType d; int32_t code; const char* name; int bits; uint32_t prec; int64_t slice, full; };
  const Want want[] = {{DType::int8, 1, "int8", 8, regs::kPrecisionInt8, 3072, 4096},
                       {DType::fp16, 2, "fp16", 16, regs::kPrecisionFp16, 2048, 4096},
                       {DType::int4, 3, "int4", 4, regs::kPrecisionInt4, 480, 480}};
  for (const Want& w : want) {
    const DTypeInfo& r = dtype_info(w.d);
    EXPECT_EQ(r.dtype, w.d);
    EXPECT_EQ(r.code, w.code);
    EXPECT_STREQ(r.name, w.name);
    EXPECT_STREQ(dtype_name(w.d), w.name);
    EXPECT_EQ(r.bits, w.bits);
    EXPECT_EQ(element_bits(w.d), w.bits);
    EXPECT_EQ(r.precision, w.prec);
    EXPECT_EQ(slice_width(w.d), w.slice);
    EXPECT_EQ(full_k_limit(w.d), w.full);
    EXPECT_EQ(weights_dtype(w.code), &r);
    EXPECT_EQ(dtype_by_name(w.name), &r);
  }
}

TEST(DTypeTable, ElementTypesAndUnknownNumbers) {
  const std::pair<int32_t, int> bits[] = {{1, 8}, {2, 16}, {3, 4}, {4, 32}, {5, 32}};
  for (auto [code, b] : bits) {
    ASSERT_NE(element_type(code), nullptr) << code;
    EXPECT_EQ(element_type(code)->bits, b);
  }
  for (int32_t code : {-1, 0, 6, 99}) {
    EXPECT_EQ(element_type(code), nullptr) << code;
    EXPECT_EQ(weights_dtype(code), nullptr) << code;
  }
  EXPECT_EQ(weights_dtype(kCodeInt32), nullptr);  // output only
  EXPECT_EQ(weights_dtype(kCodeFp32), nullptr);
  EXPECT_EQ(dtype_by_name("int32"), nullptr);
  EXPECT_EQ(code_text(4), "int32 (4)");
  EXPECT_EQ(code_text(99), "unknown (99)");
}

TEST(DTypeTable, CallCodesDefaultsAndRefusals) {
  int32_t a = 0, c = 0;
  ASSERT_TRUE(check_call_codes(dtype_info(DType::fp16), 0, 0, &a, &c));
  EXPECT_EQ(a, kCodeFp16);
  EXPECT_EQ(c, kCodeFp32);  // the default C first
  ASSERT_TRUE(check_call_codes(dtype_info(DType::fp16), 0, kCodeFp16, &a, &c));
  ASSERT_TRUE(check_call_codes(dtype_info(DType::int4), kCodeInt8, 0, &a, &c));  // w4a8
  EXPECT_EQ(c, kCodeInt32);
  auto s = check_call_codes(dtype_info(DType::int8), 0, kCodeFp16, &a, &c);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().message, "ork_matmul: c_dtype fp16 (2) with int8 weights: expected int32");
  s = check_call_codes(dtype_info(DType::int4), kCodeFp16, 0, &a, &c);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().message, "ork_matmul: a_dtype fp16 (2) with int4 weights: expected int4 (W4A4) or int8 (w4a8)");
  s = check_call_codes(dtype_info(DType::fp16), 0, kCodeInt32, &a, &c);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().message, "ork_matmul: c_dtype int32 (4) with fp16 weights: expected fp32 or fp16");
  EXPECT_TRUE(takes_a(dtype_info(DType::int4), kCodeInt8));
  EXPECT_FALSE(takes_a(dtype_info(DType::int8), kCodeInt4));
  EXPECT_FALSE(takes_c(dtype_info(DType::int8), 0));
}

constexpr int64_t kM = 5, kK = 70, kN = 9;  // odd sizes: int4 rows start on high nibbles

std::vector<uint8_t> nibbles(const std::vector<int8_t>& v) {
  std::vector<uint8_t> out(static_cast<size_t>(int4::packed_bytes(static_cast<int64_t>(v.size()))), 0);
  for (size_t i = 0; i < v.size(); ++i) int4::put(out.data(), static_cast<int64_t>(i), v[i]);
  return out;
}

TEST(DTypeTableCpu, Int8AndW4A8AndW4A4EqualTheOracle) {
  const ref::Dims d{kM, kK, kN};
  const auto a8 = ref::random_int8(kM * kK, 1), w8 = ref::random_int8(kK * kN, 2);
  const auto a4 = ref::random_int4(kM * kK, 3), w4 = ref::random_int4(kK * kN, 4);
  const auto a4p = nibbles(a4), w4p = nibbles(w4);
  struct Case { DType w; const void* wdata; int32_t a_code; const void* a; const std::vector<int8_t>* oa, *ow; };
  const Case cases[] = {{DType::int8, w8.data(), kCodeInt8, a8.data(), &a8, &w8},
                        {DType::int4, w4p.data(), kCodeInt8, a8.data(), &a8, &w4},    // w4a8
                        {DType::int4, w4p.data(), kCodeInt4, a4p.data(), &a4, &w4}};  // W4A4
  for (const Case& k : cases) {
    const DTypeInfo& row = dtype_info(k.w);
    auto hw = row.host_weights(kK, kN, k.wdata);
    ASSERT_TRUE(hw) << hw.error().message;
    std::vector<int32_t> got(kM * kN, -1), want(kM * kN);
    ASSERT_TRUE(ref::matmul_int8(*k.oa, *k.ow, want, d));
    int threads = 0;
    ASSERT_TRUE(row.cpu(*hw, {.a = k.a, .m = kM, .c = got.data(), .a_code = k.a_code, .c_code = kCodeInt32,
                              .threads = 2, .threads_used = &threads}));
    EXPECT_EQ(got, want) << row.name << " A " << k.a_code;
    EXPECT_GE(threads, 1);
  }
}

TEST(DTypeTableCpu, Fp16BothOutputsEqualTheSlicedOracle) {
  const int64_t k = 4100;  // past 4096: two K-slices of 2048 and one of 4, added in slice order
  std::vector<uint16_t> a(static_cast<size_t>(2 * k)), w(static_cast<size_t>(k * 3));
  const auto ra = ref::random_int8(a.size(), 5), rw = ref::random_int8(w.size(), 6);
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<uint16_t>(0x3000 | (ra[i] & 0x83ff));  // |x| < 1
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<uint16_t>(0x3400 | (rw[i] & 0x83ff));
  const ref::Dims d{2, k, 3};
  const DTypeInfo& row = dtype_info(DType::fp16);
  auto hw = row.host_weights(k, 3, w.data());
  ASSERT_TRUE(hw);
  std::vector<float> got32(6), want32(6);
  std::vector<uint16_t> got16(6), want16(6);
  ASSERT_TRUE(ref::matmul_fp16_sliced(a, w, want32, d, kSliceK));
  ASSERT_TRUE(ref::matmul_fp16_sliced_to_fp16(a, w, want16, d, kSliceK));
  ASSERT_TRUE(row.cpu(*hw, {.a = a.data(), .m = 2, .c = got32.data(), .a_code = kCodeFp16, .c_code = kCodeFp32}));
  ASSERT_TRUE(row.cpu(*hw, {.a = a.data(), .m = 2, .c = got16.data(), .a_code = kCodeFp16, .c_code = kCodeFp16}));
  EXPECT_EQ(std::memcmp(got32.data(), want32.data(), sizeof(float) * 6), 0);
  EXPECT_EQ(got16, want16);
}

}  // namespace
}  // namespace ork::matmul
