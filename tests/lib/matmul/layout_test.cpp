// Native layouts: the index functions against the contract's formulas and hand-computed
// values; the int8 pack/unpack against the index functions; a plan executed task by task
// on the packed buffers (a CPU model of the 1x1 convolution) equals the oracle.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "lib/matmul/layout.h"
#include "lib/matmul/plan.h"
#include "lib/ref/oracle.h"
#include "lib/ref/random.h"

namespace ork::matmul {
namespace {

using ork::ref::random_int8;

Plan layout_plan_of(int64_t m, int64_t k, int64_t n, int cores = 1) {
  Result<Plan> r = make_plan({m, k, n}, {.cores = cores});
  EXPECT_TRUE(r.ok()) << r.error().message;
  return r.value();
}

TEST(LayoutIndex, HandComputed) {
  // int8 feature (K/16, M, 16) with M = 10: (k=37, m=3) -> 2*10*16 + 3*16 + 5.
  EXPECT_EQ(feature_index(DType::int8, 3, 37, 10), 320 + 48 + 5);
  EXPECT_EQ(feature_index(DType::fp16, 3, 37, 10), 4 * 10 * 8 + 3 * 8 + 5);
  EXPECT_EQ(feature_index(DType::int4, 3, 37, 10), 1 * 10 * 32 + 3 * 32 + 5);
  // int8 weights (N/32, K/32, 32, 32) with K = 64: (k=40, n=33) -> 1*32*64 + 1*1024 + 1*32 + 8.
  EXPECT_EQ(weight_index(DType::int8, 40, 33, 64), 2048 + 1024 + 32 + 8);
  EXPECT_EQ(weight_index(DType::fp16, 40, 33, 64), 2 * 16 * 64 + 512 + 1 * 32 + 8);
  EXPECT_EQ(weight_index(DType::int4, 40, 65, 64), 1 * 64 * 64 + 2048 + 1 * 32 + 8);
  // int32 output (N/4, M, 4) with M = 10: (m=3, n=9) -> 2*40 + 12 + 1.
  EXPECT_EQ(output_index(DType::int8, 3, 9, 10), 80 + 12 + 1);
  EXPECT_EQ(output_index(DType::int4, 3, 9, 10), 1 * 80 + 24 + 1);  // int16 (N/8, M, 8)
  EXPECT_EQ(output_index(8, 3, 9, 10), 1 * 80 + 24 + 1);           // fp16 output
}

// Every index function is a bijection from the padded logical shape onto [0, size).
TEST(LayoutIndex, BijectiveOnPaddedShapes) {
  for (DType dt : {DType::int8, DType::fp16, DType::int4}) {
    const int64_t m = 5, k = 64, n = weight_atom(dt) * 2;
    std::set<int64_t> feat, weight, out;
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < k; ++j) feat.insert(feature_index(dt, i, j, m));
    }
    for (int64_t j = 0; j < k; ++j) {
      for (int64_t c = 0; c < n; ++c) weight.insert(weight_index(dt, j, c, k));
    }
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t c = 0; c < n; ++c) out.insert(output_index(dt, i, c, m));
    }
    EXPECT_EQ(feat.size(), static_cast<size_t>(m * k));
    EXPECT_EQ(*feat.rbegin(), m * k - 1) << dtype_name(dt);
    EXPECT_EQ(*weight.rbegin(), k * n - 1) << dtype_name(dt);
    EXPECT_EQ(weight.size(), static_cast<size_t>(k * n));
    EXPECT_EQ(*out.rbegin(), m * n - 1) << dtype_name(dt);
  }
}

TEST(LayoutPack, PackAMatchesIndexAndZeroPads) {
  for (auto [m, k] : {std::pair<int64_t, int64_t>{1, 2048}, {3, 50}, {7, 5000}, {65, 17}}) {
    const Plan p = layout_plan_of(m, k, 32);
    const std::vector<int8_t> a = random_int8(m * k, 1);
    std::vector<int8_t> native(p.a_bytes(), 99);
    ASSERT_TRUE(pack_a_int8(a, p, native).ok());
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < p.kp; ++j) {
        const int8_t want = j < k ? a[i * k + j] : 0;
        ASSERT_EQ(native[feature_index(DType::int8, i, j, p.mp)], want) << i << "," << j;
      }
    }
  }
}

TEST(LayoutPack, PackBPerSliceMatchesIndex) {
  for (auto [k, n] : {std::pair<int64_t, int64_t>{50, 40}, {4100, 70}, {6144, 32}}) {
    const Plan p = layout_plan_of(1, k, n);
    const std::vector<int8_t> b = random_int8(k * n, 2);
    std::vector<int8_t> native(p.b_bytes(), 99);
    ASSERT_TRUE(pack_b_int8(b, p, native).ok());
    for (int64_t j = 0; j < p.kp; ++j) {
      const int64_t s = j / p.slice_k, kk = j % p.slice_k;
      const int64_t kt = std::min(p.slice_k, p.kp - s * p.slice_k);
      const int64_t base = s * p.np * p.slice_k;
      for (int64_t c = 0; c < p.np; ++c) {
        const int8_t want = (j < k && c < n) ? b[j * n + c] : 0;
        ASSERT_EQ(native[base + weight_index(DType::int8, kk, c, kt)], want) << j << "," << c;
      }
    }
  }
}

TEST(LayoutPack, UnpackAndAccumulateC) {
  const Plan p = layout_plan_of(3, 8960, 37);  // 3 slices (3008 + 3008 + 2944), N padded to 64
  const int64_t per = c_elements_per_slice(p);
  std::vector<int32_t> native(per * p.slices);
  for (int64_t s = 0; s < p.slices; ++s) {
    for (int64_t i = 0; i < p.mp; ++i) {
      for (int64_t c = 0; c < p.np; ++c) {
        native[s * per + output_index(DType::int8, i, c, p.mp)] =
            static_cast<int32_t>((s + 1) * 1000000 + i * 100 + c);
      }
    }
  }
  std::vector<int32_t> out(3 * 37, -1);
  ASSERT_TRUE(unpack_c_int32(std::span(native).first(per), p, out).ok());
  EXPECT_EQ(out[1 * 37 + 36], 1000000 + 136);
  ASSERT_TRUE(unpack_c_slices_int32(native, p, out).ok());
  for (int64_t i = 0; i < 3; ++i) {
    for (int64_t c = 0; c < 37; ++c) ASSERT_EQ(out[i * 37 + c], 6000000 + 3 * (i * 100 + c));
  }
  // Adding past 2^31 wraps modulo 2^32 (the oracle's int32 result), without UB.
  std::vector<int32_t> big(per, INT32_MAX);
  ASSERT_TRUE(accumulate_c_int32(big, p, out).ok());
  EXPECT_EQ(out[0], static_cast<int32_t>(6000000u + 2147483647u));
}

// Threads split pack A and unpack C by rows (lib/matmul/context.cpp): any split, odd ones
// included, gives the whole call's bytes, and rows outside the range are left alone.
TEST(LayoutPack, RowRangesComposeToTheWholeCall) {
  const Plan p = layout_plan_of(77, 300, 45);
  const auto a = random_int8(77 * 300, 3);
  std::vector<int8_t> whole(p.a_bytes(), 0x11), split(p.a_bytes(), 0x11);
  ASSERT_TRUE(pack_a_int8(a, p, whole).ok());
  for (auto [b, e] : {std::pair<int64_t, int64_t>{0, 13}, {13, 40}, {40, -1}})
    ASSERT_TRUE(pack_a_int8(a, p, split, {b, e}).ok());
  EXPECT_EQ(split, whole);
  std::vector<int32_t> native(c_elements_per_slice(p));
  for (size_t i = 0; i < native.size(); ++i) native[i] = static_cast<int32_t>(i * 2654435761u);
  std::vector<int32_t> c_whole(77 * 45, -7), c_split(77 * 45, -7);
  ASSERT_TRUE(unpack_c_int32(native, p, c_whole).ok());
  ASSERT_TRUE(unpack_c_int32(native, p, c_split, {0, 40}).ok());
  EXPECT_EQ(c_split[40 * 45], -7);  // row 40 not yet written
  ASSERT_TRUE(unpack_c_int32(native, p, c_split, {40, 77}).ok());
  EXPECT_EQ(c_split, c_whole);
  ASSERT_TRUE(accumulate_c_int32(native, p, c_whole).ok());
  ASSERT_TRUE(accumulate_c_int32(native, p, c_split, {0, 8}).ok());
  ASSERT_TRUE(accumulate_c_int32(native, p, c_split, {8, -1}).ok());
  EXPECT_EQ(c_split, c_whole);
  ASSERT_TRUE(unpack_c_int32(native, p, c_split, {77, -1}).ok());  // empty: nothing to do
  EXPECT_EQ(c_split, c_whole);
}

TEST(LayoutPack, SizeErrorsAreNamed) {
  const Plan p = layout_plan_of(2, 64, 32);
  std::vector<int8_t> a(5), native(p.a_bytes());
  Status s = pack_a_int8(a, p, native);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message, "A: 5 elements given, the plan needs 128");
  std::vector<int8_t> b(64 * 32), nb(7);
  EXPECT_EQ(pack_b_int8(b, p, nb).error().message, "native B: 7 elements given, the plan needs 2048");
  std::vector<int32_t> nc(p.mp * p.np), c(3);
  EXPECT_EQ(unpack_c_int32(nc, p, c).error().message, "C: 3 elements given, the plan needs 64");
}

// Runs a plan on the CPU the way the contract says the NPU runs it: each task reads its
// feature at a_offset (SURF_STRIDE = mp atoms), its weights at b_offset (kt x nt block), and
// writes int32 at c_offset of its slice's output (surface stride mp).
std::vector<int32_t> execute(const Plan& p, const std::vector<int8_t>& na, const std::vector<int8_t>& nb) {
  const int64_t per = c_elements_per_slice(p);
  std::vector<int32_t> out(per * p.slices, 0);
  for (const Task& t : p.tasks) {
    const int8_t* a = na.data() + p.a_offset(t);
    const int8_t* w = nb.data() + p.b_offset(t);
    int32_t* c = out.data() + t.slice * per + p.c_offset(t) / 4;
    for (int64_t i = 0; i < t.mc; ++i) {
      for (int64_t j = 0; j < t.nt; ++j) {
        int32_t acc = 0;
        for (int64_t kk = 0; kk < t.kt; ++kk) {
          acc += a[feature_index(DType::int8, i, kk, p.mp)] * w[weight_index(DType::int8, kk, j, t.kt)];
        }
        c[output_index(DType::int8, i, j, p.mp)] = acc;
      }
    }
  }
  return out;
}

TEST(LayoutPack, PlanExecutedOnPackedBuffersEqualsOracle) {
  const std::vector<std::tuple<int64_t, int64_t, int64_t, int>> shapes = {
      {1, 2048, 96, 3}, {1, 100, 37, 2}, {65, 100, 70, 2}, {705, 512, 64, 3}, {33, 4128, 40, 1}, {40, 6144, 96, 3}};
  for (auto [m, k, n, cores] : shapes) {
    const Plan p = layout_plan_of(m, k, n, cores);
    const auto a = random_int8(m * k, 3), b = random_int8(k * n, 4);
    std::vector<int8_t> na(p.a_bytes()), nb(p.b_bytes());
    ASSERT_TRUE(pack_a_int8(a, p, na).ok());
    ASSERT_TRUE(pack_b_int8(b, p, nb).ok());
    const std::vector<int32_t> native = execute(p, na, nb);
    std::vector<int32_t> got(m * n), want(m * n);
    ASSERT_TRUE(unpack_c_slices_int32(native, p, got).ok());
    ASSERT_TRUE(ref::matmul_int8(a, b, want, {m, k, n}).ok());
    ASSERT_EQ(got, want) << "M=" << m << " K=" << k << " N=" << n << " cores=" << cores;
  }
}

}  // namespace
}  // namespace ork::matmul
