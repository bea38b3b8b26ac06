// The int4 slice width from the weights (lib/matmul/int4_bound.h, docs/dtypes.md "int4 slices
// from the weights"): the exact int16 bound at its edges, the widest width for weights just
// under and just over it, and the planner taking the width.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "driver/common/int4.h"
#include "lib/matmul/context.h"
#include "lib/matmul/int4_bound.h"
#include "lib/matmul/plan.h"

namespace {

using namespace ork::matmul;

// K x N int4 weights, every element `v`.
std::vector<uint8_t> filled(int64_t k, int64_t n, int v) {
  std::vector<uint8_t> w(static_cast<size_t>(ork::int4::packed_bytes(k * n)), 0);
  for (int64_t i = 0; i < k * n; ++i) ork::int4::put(w.data(), i, v);
  return w;
}

int64_t width(const std::vector<uint8_t>& w, int64_t k, int64_t n) {
  auto r = int4_safe_slice_k(w, k, n);
  EXPECT_TRUE(r.ok()) << r.error().message;
  return r.ok() ? *r : -1;
}

// 7P + 8Q <= 32767 and 8P + 7Q <= 32768: activations -8..7 reach exactly those sums.
TEST(Int4Bound, SumsFitInt16AtTheExactEdges) {
  EXPECT_TRUE(int4_sums_fit_int16({.pos = 4096, .neg = 0}));   // a = -8: -32768, representable
  EXPECT_FALSE(int4_sums_fit_int16({.pos = 4097, .neg = 0}));  // -32776
  EXPECT_TRUE(int4_sums_fit_int16({.pos = 0, .neg = 4095}));   // a = -8 on -w: 32760
  EXPECT_FALSE(int4_sums_fit_int16({.pos = 0, .neg = 4096}));  // 32768 > 32767
  EXPECT_TRUE(int4_sums_fit_int16({.pos = 1, .neg = 4095}));   // 7 + 32760 = 32767
  EXPECT_FALSE(int4_sums_fit_int16({.pos = 2, .neg = 4095}));  // 14 + 32760 = 32774
}

// All +4: a 1024-row window sums to 8 x 4096 = 32768 at a = -8, exactly -32768; one 5 in
// the column makes every window holding it 4 too much, so the width drops a K step.
TEST(Int4Bound, WeightsJustUnderAndJustOverTheBound) {
  const int64_t k = 2048, n = 64;
  std::vector<uint8_t> w = filled(k, n, 4);
  EXPECT_EQ(width(w, k, n), 1024);
  ork::int4::put(w.data(), 1500 * n + 7, 5);  // row 1500, column 7: no slice start near it
  EXPECT_EQ(width(w, k, n), 992);
}

TEST(Int4Bound, FloorAndCeiling) {
  EXPECT_EQ(width(filled(8192, 8, -8), 8192, 8), kInt4SliceK);     // the worst weights: 480 x 64 fits
  EXPECT_EQ(width(filled(8192, 8, 0), 8192, 8), kInt4MaxSliceK);   // zeros: the task ceiling
  EXPECT_EQ(width(filled(8192, 8, 1), 8192, 8), 4096);             // 8 x 4096 = 32768 exactly
  EXPECT_EQ(width(filled(8192, 8, -1), 8192, 8), 4064);            // 8 x 4095 = 32760: 4064 in steps of 32
  // A K shorter than a window is one window: 100 rows of -8 sum to at most 6400, so any
  // width holds the whole K in one task.
  EXPECT_EQ(width(filled(100, 3, -8), 100, 3), kInt4MaxSliceK);
}

// Every aligned window counts, not only the ones at multiples of the width: 600 sevens in
// rows 724..1323 of one column. A window may hold at most 585 of them (8 x 7 x 585 = 32760),
// and the window of 19 blocks (608 rows) from row 736 holds 588, so the width is 18 blocks,
// 576; checking only slices at multiples of 608 (0, 608, 1216) would have allowed 608.
TEST(Int4Bound, AWindowAcrossSliceStartsCounts) {
  const int64_t k = 4096, n = 8;
  std::vector<uint8_t> w = filled(k, n, 0);
  for (int64_t r = 1024 - 300; r < 1024 + 300; ++r) ork::int4::put(w.data(), r * n + 2, 7);  // 600 x 7 x 8 = 33600
  EXPECT_EQ(width(w, k, n), 576);
}

TEST(Int4Bound, BadSizesAreNamed) {
  const std::vector<uint8_t> w(10, 0);
  auto r = int4_safe_slice_k(w, 0, 4);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("K = 0"), std::string::npos) << r.error().message;
  r = int4_safe_slice_k(w, 8, 4);  // 32 elements need 16 bytes
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("need 16"), std::string::npos) << r.error().message;
}

// The planner: the weights' width slices K (and is the full-K ceiling); bad widths named.
TEST(Int4Bound, ThePlannerTakesTheWidth) {
  auto p = make_plan({1, 2048, 64}, {.dtype = DType::int4, .cores = 1, .slice_k = 1024});
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_EQ(p->slices, 2);
  EXPECT_EQ(p->slice_k, 1024);
  for (const Task& t : p->tasks) EXPECT_EQ(t.kt, 1024);
  auto full = make_plan({1, 1000, 64}, {.dtype = DType::int4, .cores = 1, .slice_k = 1024});
  ASSERT_TRUE(full.ok());
  EXPECT_EQ(full->slices, 1);
  EXPECT_EQ(full->schedule, Schedule::k_reduction);
  auto dflt = make_plan({1, 2048, 64}, {.dtype = DType::int4, .cores = 1});
  ASSERT_TRUE(dflt.ok());
  EXPECT_EQ(dflt->slice_k, kInt4SliceK);
  for (int64_t bad : {int64_t{448}, int64_t{1000}, int64_t{4128}}) {
    auto b = make_plan({1, 2048, 64}, {.dtype = DType::int4, .cores = 1, .slice_k = bad});
    ASSERT_FALSE(b.ok()) << bad;
    EXPECT_NE(b.error().message.find("int4 slice_k = " + std::to_string(bad)), std::string::npos) << b.error().message;
  }
  auto i8 = make_plan({1, 2048, 64}, {.dtype = DType::int8, .cores = 1, .slice_k = 1024});
  ASSERT_FALSE(i8.ok());
  EXPECT_NE(i8.error().message.find("only int4"), std::string::npos) << i8.error().message;
}

// Weights packed in the native layout at `slice_k` (a file's width), checked slice by slice.
ork::Status native_check(const std::vector<uint8_t>& w, int64_t k, int64_t n, int64_t slice_k) {
  auto p = make_plan({1, k, n}, {.dtype = DType::int4, .cores = 1, .slice_k = slice_k});
  if (!p.ok()) return p.error();
  std::vector<uint8_t> native(static_cast<size_t>(p->b_bytes()));
  if (auto s = pack_weights(*p, w.data(), native); !s) return s;
  return int4_native_slices_fit(*p, native);
}

// The check of packed weights agrees with the bound on the slices the layout has: all +4
// with one 5 in row 1500 of column 70 (N = 100: the second block of 64 kernels, padded) fit
// 992 (the widest, above) and 1024 save for that column's slice 1 (rows 1024..2047: 4 x 1023
// + 5 = 4097, 8P = 32776), which is named.
TEST(Int4Bound, PackedWeightsAreCheckedSliceBySlice) {
  const int64_t k = 2048, n = 100;
  std::vector<uint8_t> w = filled(k, n, 4);
  EXPECT_TRUE(native_check(w, k, n, 1024).ok());
  ork::int4::put(w.data(), 1500 * n + 70, 5);
  EXPECT_EQ(width(w, k, n), 992);
  EXPECT_TRUE(native_check(w, k, n, 992).ok());
  EXPECT_TRUE(native_check(w, k, n, 480).ok());
  const ork::Status wide = native_check(w, k, n, 1024);
  ASSERT_FALSE(wide.ok());
  EXPECT_NE(wide.error().message.find("column 70 of slice 1 (K 1024..2047) has P = 4097, Q = 0"), std::string::npos)
      << wide.error().message;
  // Full K in one task (a width past K): the whole column, 4 x 2047 + 5, is over too.
  const ork::Status full = native_check(w, k, n, 2048);
  ASSERT_FALSE(full.ok());
  EXPECT_NE(full.error().message.find("column 0 of slice 0 (K 0..2047)"), std::string::npos) << full.error().message;
}

}  // namespace
