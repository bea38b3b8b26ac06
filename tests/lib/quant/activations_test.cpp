// The host activation quantiser (lib/quant/activations.h) gives the reference's scales and
// codes, per tensor and per row, int8 and int4.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "lib/quant/activations.h"
#include "lib/quant/reference.h"

namespace ork::quant {
namespace {

TEST(HostQuantiser, ActivationsMatchTheReference) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> dist(-4.0f, 4.0f);
  const int64_t m = 5, k = 70;
  std::vector<float> a(m * k);
  for (float& x : a) x = dist(rng);
  for (int64_t j = 0; j < k; ++j) a[static_cast<size_t>(2 * k + j)] = 0.0f;  // a zero row
  for (Bits bits : {Bits::int8, Bits::int4})
    for (bool per_row : {false, true}) {
      const ActScheme s{bits, per_row};
      auto q = quantise_activations(a, m, k, s);
      ASSERT_TRUE(q.ok());
      const auto sa = reference::activation_scales(a, m, k, s);
      EXPECT_EQ(q->scales, sa);
      EXPECT_EQ(q->codes, reference::activation_codes(a, m, k, s, sa));
      if (per_row) {
        EXPECT_EQ(q->scales[2], 0.0f);
      }
    }
}


// Rows that exercise each tier: random magnitudes over many binades, a zero row, a row of
// denormals, a row with its absmax in the tail.
std::vector<float> mixed_rows(int64_t m, int64_t k, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> mant(-1.0f, 1.0f);
  std::uniform_int_distribution<int> exp(-30, 30);
  std::vector<float> a(static_cast<size_t>(m * k));
  for (float& x : a) x = std::ldexp(mant(rng), exp(rng));
  for (int64_t i = 0; i < m; ++i) {
    float* row = a.data() + i * k;
    if (i % 4 == 1) std::fill(row, row + k, 0.0f);
    if (i % 4 == 2)
      for (int64_t j = 0; j < k; ++j) row[j] = std::ldexp(mant(rng), -140);  // denormals
    if (i % 4 == 3) row[k - 1] = 1e6f;  // the absmax last, in any tail
  }
  return a;
}

TEST(HostQuantiser, EveryTierGivesTheScalarScalesAndCodes) {
  for (detail::ActTier t : detail::supported_act_tiers())
    for (int64_t k : {1, 7, 15, 16, 17, 31, 32, 33, 53, 64, 100, 1536 + 5})
      for (int64_t m : {1, 4, 5}) {
        const auto a = mixed_rows(m, k, static_cast<uint32_t>(k * 10 + m));
        for (Bits bits : {Bits::int8, Bits::int4})
          for (bool per_row : {false, true}) {
            const ActScheme s{bits, per_row};
            auto want = quantise_activations_scalar(a, m, k, s);
            auto got = quantise_activations(a, m, k, s, t);
            ASSERT_TRUE(want.ok() && got.ok());
            ASSERT_EQ(got->scales, want->scales) << detail::act_tier_name(t) << " K = " << k << " M = " << m;
            ASSERT_EQ(got->codes, want->codes) << detail::act_tier_name(t) << " K = " << k << " M = " << m;
            ASSERT_EQ(got->codes, reference::activation_codes(a, m, k, s, reference::activation_scales(a, m, k, s)));
          }
      }
}

// One QuantActivations reused call after call (QuantMatmul::run keeps one per thread): each
// call's scales and codes are the scalar definition's, whatever the call before left in it
// (a bigger M, a longer K, the other scheme, an error half way), on every tier, on one
// thread and (big A) on the kept threads.
TEST(HostQuantiser, AReusedResultHoldsOnlyTheLastCall) {
  struct Call {
    int64_t m, k;
    ActScheme s;
  };
  // 300 x 1000 and 600 x 700 (1.2 and 1.7 MB of A): both passes on two threads where there are two.
  const Call calls[] = {{9, 300, {Bits::int8, true}}, {2, 45, {Bits::int4, false}}, {300, 1000, {Bits::int8, false}},
                        {1, 7, {Bits::int8, false}}, {5, 1000, {Bits::int4, true}}, {600, 700, {Bits::int4, true}},
                        {3, 16, {Bits::int8, true}}};
  for (detail::ActTier t : detail::supported_act_tiers()) {
    QuantActivations q;
    uint32_t seed = 60;
    for (const Call& c : calls) {
      auto bad = mixed_rows(c.m + 1, c.k, seed);
      bad.back() = std::numeric_limits<float>::infinity();  // refused after a pass over the rows
      ASSERT_FALSE(quantise_activations(bad, c.m + 1, c.k, c.s, t, q).ok());
      const auto a = mixed_rows(c.m, c.k, seed++);
      auto want = quantise_activations_scalar(a, c.m, c.k, c.s);
      ASSERT_TRUE(want.ok());
      ASSERT_TRUE(quantise_activations(a, c.m, c.k, c.s, t, q, seed % 2 == 0 ? 1 : 0).ok());
      EXPECT_EQ(q.m, c.m);
      EXPECT_EQ(q.k, c.k);
      EXPECT_EQ(q.scheme.per_row, c.s.per_row);
      ASSERT_EQ(q.scales, want->scales) << detail::act_tier_name(t) << " M = " << c.m << " K = " << c.k;
      ASSERT_EQ(q.codes, want->codes) << detail::act_tier_name(t) << " M = " << c.m << " K = " << c.k;
    }
  }
}

// The first non-finite element is named by row and column, as the scalar check names it:
// at the first position, in the vector body, in the tail, in a later row, and with a second
// bad element after it.
TEST(HostQuantiser, TheFirstNonFiniteElementIsNamedOnEveryTier) {
  const int64_t m = 3, k = 53;  // 53 = 3 x 16 + 5: a tail on every tier
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  struct Case {
    int64_t i, j;
    float v;
  };
  for (const Case& c : {Case{0, 0, nan}, Case{0, 20, inf}, Case{0, 50, -inf}, Case{1, 0, inf}, Case{1, 33, nan},
                        Case{2, 52, nan}, Case{2, 48, -inf}})
    for (detail::ActTier t : detail::supported_act_tiers())
      for (bool per_row : {false, true}) {
        auto a = mixed_rows(m, k, 5);
        a[static_cast<size_t>(c.i * k + c.j)] = c.v;
        if (c.i + 1 < m) a[static_cast<size_t>((c.i + 1) * k)] = nan;  // a later one is not named
        const ActScheme s{Bits::int8, per_row};
        auto want = quantise_activations_scalar(a, m, k, s);
        auto got = quantise_activations(a, m, k, s, t);
        ASSERT_FALSE(want.ok());
        ASSERT_FALSE(got.ok()) << detail::act_tier_name(t) << " at [" << c.i << "][" << c.j << "]";
        EXPECT_EQ(got.error().message, want.error().message);
        EXPECT_EQ(got.error().code, -EINVAL);
        const std::string v = std::isnan(c.v) ? "nan" : c.v > 0 ? "inf" : "-inf";
        EXPECT_EQ(got.error().message, "A[" + std::to_string(c.i) + "][" + std::to_string(c.j) + "] = " + v +
                                           ": inputs must be finite");
      }
}

}  // namespace
}  // namespace ork::quant
