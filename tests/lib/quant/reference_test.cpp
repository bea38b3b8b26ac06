// The quantised-matmul reference (lib/quant/reference.h) on hand-computed cases, and its
// accuracy against float64. The host quantisers against it: qweights_test.cpp, activations_test.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "lib/quant/activations.h"
#include "lib/quant/qweights.h"
#include "lib/quant/reference.h"

namespace ork::quant {
namespace {

// A (1 x 4) = [127, 2.5, -3.5, 0.5]: absmax 127 -> scale 1, codes [127, 2, -4, 0] (ties to
// even). W column 0 = [1, 2, 3, 127] (scale 1), column 1 all zero (scale 0).
// acc = 127*1 + 2*2 - 4*3 + 0*127 = 119; C = [119 * 1 * 1, 0]. (Unquantised: 185.)
TEST(Reference, W8A8PerChannelByHand) {
  const std::vector<float> a{127.0f, 2.5f, -3.5f, 0.5f};
  const std::vector<float> w{1, 0, 2, 0, 3, 0, 127, 0};
  const WeightScheme ws{Bits::int8, 0};
  const ActScheme as{Bits::int8, false};
  EXPECT_EQ(reference::weight_scales(w, 4, 2, ws), (std::vector<float>{1.0f, 0.0f}));
  EXPECT_EQ(reference::activation_codes(a, 1, 4, as, reference::activation_scales(a, 1, 4, as)),
            (std::vector<int8_t>{127, 2, -4, 0}));
  auto c = reference::qmatmul(a, w, 1, 4, 2, ws, as);
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(*c, (std::vector<float>{119.0f, 0.0f}));
}

// K = 40, group 32: groups [0, 32) and a tail [32, 40) with its own scale.
// W[:,0]: group 0 has 254 (scale 2, code 127) and 3 (1.5 -> 2); group 1 has 63.5 (scale 0.5,
// code 127) and 0.25 (0.5 -> 0). W[:,1] = 0. A row 0: A[0][0] = 1, A[0][1] = 127,
// A[0][32] = 2, A[0][33] = 100 (per-row scale 1); row 1 all zero (scale 0).
// acc_0 = 1*127 + 127*2 = 381, acc_1 = 2*127 + 100*0 = 254; t = 381*2 = 762,
// t = 762 + 254*0.5 = 889; C[0][0] = 889 * 1.
TEST(Reference, PerGroupWithTailByHand) {
  const int64_t k = 40, n = 2;
  std::vector<float> w(k * n, 0.0f), a(2 * k, 0.0f);
  w[0 * n] = 254.0f;
  w[1 * n] = 3.0f;
  w[32 * n] = 63.5f;
  w[33 * n] = 0.25f;
  a[0] = 1.0f;
  a[1] = 127.0f;
  a[32] = 2.0f;
  a[33] = 100.0f;
  const WeightScheme ws{Bits::int8, 32};
  const ActScheme as{Bits::int8, true};
  const auto sw = reference::weight_scales(w, k, n, ws);
  EXPECT_EQ(sw, (std::vector<float>{2.0f, 0.0f, 0.5f, 0.0f}));
  const auto qw = reference::weight_codes(w, k, n, ws, sw);
  EXPECT_EQ(qw[0], 127);
  EXPECT_EQ(qw[1 * n], 2);
  EXPECT_EQ(qw[32 * n], 127);
  EXPECT_EQ(qw[33 * n], 0);
  EXPECT_EQ(reference::activation_scales(a, 2, k, as), (std::vector<float>{1.0f, 0.0f}));
  auto c = reference::qmatmul(a, w, 2, k, n, ws, as);
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(*c, (std::vector<float>{889.0f, 0.0f, 0.0f, 0.0f}));
}

// int4: W column = [14, 5, -7, 1] -> scale 2, codes [7, 2 (2.5), -4 (-3.5), 0 (0.5)].
// A = [7, 6.5, -1, 3] (a4, scale 1) -> codes [7, 6, -1, 3].
// acc = 49 + 12 + 4 + 0 = 65; C = 65 * 2 * 1 = 130.
TEST(Reference, W4A4ByHand) {
  const std::vector<float> a{7.0f, 6.5f, -1.0f, 3.0f};
  const std::vector<float> w{14.0f, 5.0f, -7.0f, 1.0f};
  auto c = reference::qmatmul(a, w, 1, 4, 1, {Bits::int4, 0}, {Bits::int4, false});
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(*c, std::vector<float>{130.0f});
}

// The order of the dequantisation is part of the contract: with three groups the fp32 sum
// (a + b) + c differs from a + (b + c). Three groups, acc_g = 127 * 127 = 16129 each, scales
// 2^25, 1, 1: t = 16129 * 2^25 (in [2^38, 2^39)) has an fp32 step of 2^15, so adding 16129 (< half a step) twice
// leaves t unchanged, whereas adding 32258 at once would round up by one step.
TEST(Reference, GroupsAddInIncreasingOrder) {
  const int64_t k = 96, n = 1;
  std::vector<float> w(k, 0.0f), a(k, 0.0f);
  w[0] = 127.0f * 33554432.0f;  // scale 2^25, code 127
  w[32] = 127.0f;               // scale 1
  w[64] = 127.0f;
  a[0] = a[32] = a[64] = 127.0f;  // codes 127, scale 1
  auto c = reference::qmatmul(a, w, 1, k, n, {Bits::int8, 32}, {Bits::int8, false});
  ASSERT_TRUE(c.ok());
  // acc_g = 127*127 = 16129 each: t = 16129 * 2^25 (exact); + 16129 rounds back; twice.
  const float t0 = 16129.0f * 33554432.0f;
  float t = t0;
  t = t + 16129.0f;
  t = t + 16129.0f;
  EXPECT_EQ((*c)[0], t);
  EXPECT_EQ((*c)[0], t0);
  EXPECT_EQ(t0 + (16129.0f + 16129.0f), t0 + 32768.0f);  // the other order differs
}

TEST(Reference, RefusesBadSchemes) {
  const std::vector<float> a(64, 1.0f), w(64, 1.0f);
  EXPECT_FALSE(reference::qmatmul(a, w, 1, 64, 1, {Bits::int8, 16}, {}).ok());
  EXPECT_FALSE(reference::qmatmul(a, w, 1, 63, 1, {Bits::int8, 0}, {}).ok());  // span sizes
}

// Accuracy against float64: per element, |C - A.W| <= sum_k 0.5 (|a_k| sw + sa |w_k|) +
// 0.75 sa sw (one rounding error of at most half a step on each side, and their product),
// plus fp32 rounding of the dequantisation (2^-20 of sum |a_k w_k|, K < 2^16 terms).
TEST(Accuracy, WithinTheRoundingBound) {
  std::mt19937 rng(11);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  const int64_t m = 4, k = 300, n = 24;
  std::vector<float> a(m * k), w(k * n);
  for (float& x : a) x = dist(rng);
  for (float& x : w) x = dist(rng);
  for (auto [wb, ab] : {std::pair{Bits::int8, Bits::int8}, {Bits::int4, Bits::int8}, {Bits::int4, Bits::int4}})
    for (int64_t group : {0, 32, 64, 128})
      for (bool per_row : {false, true}) {
        const WeightScheme ws{wb, group};
        const ActScheme as{ab, per_row};
        auto c = reference::qmatmul(a, w, m, k, n, ws, as);
        ASSERT_TRUE(c.ok());
        const auto sw = reference::weight_scales(w, k, n, ws);
        const auto sa = reference::activation_scales(a, m, k, as);
        for (int64_t i = 0; i < m; ++i)
          for (int64_t j = 0; j < n; ++j) {
            double exact = 0, bound = 0, mag = 0;
            const double s_a = sa[per_row ? static_cast<size_t>(i) : 0];
            for (int64_t x = 0; x < k; ++x) {
              const double av = a[static_cast<size_t>(i * k + x)], wv = w[static_cast<size_t>(x * n + j)];
              const double s_w = sw[static_cast<size_t>((x / group_width(ws, k)) * n + j)];
              exact += av * wv;
              mag += std::fabs(av * wv);
              bound += 0.5 * (std::fabs(av) * s_w + s_a * std::fabs(wv)) + 0.75 * s_a * s_w;
            }
            const double err = std::fabs((*c)[static_cast<size_t>(i * n + j)] - exact);
            ASSERT_LE(err, bound + mag * 0x1p-20) << "w" << int(wb) << "a" << int(ab) << " group " << group;
          }
      }
}

}  // namespace
}  // namespace ork::quant
