// Each tier of activation quantisation (lib/quant/act_kernels.h), forced, against the scalar
// definition (arith.h quantise_value, std::fabs's bit pattern) element by element: random
// bit patterns (NaN and infinity included), every tie, the clamp's edges, saturation,
// denormals and zeros, at lengths that leave every tail, under every rounding mode.
#include <gtest/gtest.h>

#include <bit>
#include <cfenv>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include <fmt/format.h>

#include "lib/quant/act_kernels.h"
#include "lib/quant/arith.h"

namespace ork::quant::detail {
namespace {

std::vector<float> random_bits(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<float> x(n);
  for (float& v : x) v = std::bit_cast<float>(static_cast<uint32_t>(rng()));
  return x;
}

// Every length from 0 to 70 (each tail of 8, 16, 32 and 64), then a long row.
std::vector<int64_t> lengths() {
  std::vector<int64_t> out;
  for (int64_t n = 0; n <= 70; ++n) out.push_back(n);
  out.push_back(1536 + 29);
  return out;
}

void expect_codes(const std::vector<float>& x, float scale, Bits bits, ActTier t, const char* what) {
  for (int64_t n : lengths()) {
    if (n > static_cast<int64_t>(x.size())) break;
    std::vector<int8_t> got(static_cast<size_t>(n) + 1, 99);  // one guard byte past the row
    quantise_row(x.data(), n, scale, bits, got.data(), t);
    for (int64_t i = 0; i < n; ++i)
      ASSERT_EQ(got[static_cast<size_t>(i)], quantise_value(x[static_cast<size_t>(i)], scale, bits))
          << what << ", " << act_tier_name(t) << ", n = " << n << ", i = " << i << ", x = " << x[static_cast<size_t>(i)]
          << ", scale = " << scale;
    ASSERT_EQ(got[static_cast<size_t>(n)], 99) << "wrote past the row";
  }
}

TEST(ActKernels, PortableIsAlwaysSupportedAndBestIsSupported) {
  EXPECT_TRUE(act_tier_supported(ActTier::portable));
  EXPECT_TRUE(act_tier_supported(best_act_tier()));
  EXPECT_EQ(supported_act_tiers().front(), ActTier::portable);
}

TEST(ActKernels, AbsmaxBitsIsTheScalarFabsMaxOnEveryTier) {
  for (ActTier t : supported_act_tiers())
    for (uint32_t seed = 1; seed <= 8; ++seed) {
      auto x = random_bits(2000, seed);
      if (seed % 2 == 0)  // finite rows too: the value, as the scalar max of std::fabs
        for (float& v : x) v = std::isfinite(v) ? v : 1.0f;
      for (int64_t n : lengths()) {
        uint32_t want = 0;
        for (int64_t i = 0; i < n; ++i)
          want = std::max(want, std::bit_cast<uint32_t>(x[static_cast<size_t>(i)]) & 0x7fffffffu);
        ASSERT_EQ(absmax_bits(x.data(), n, t), want) << act_tier_name(t) << ", n = " << n;
        bool finite = true;
        float amax = 0.0f;
        for (int64_t i = 0; i < n; ++i) {
          finite = finite && std::isfinite(x[static_cast<size_t>(i)]);
          amax = std::max(amax, std::fabs(x[static_cast<size_t>(i)]));
        }
        ASSERT_EQ(absmax_bits(x.data(), n, t) <= kMaxFiniteBits, finite);
        if (finite) {
          ASSERT_EQ(std::bit_cast<float>(absmax_bits(x.data(), n, t)), amax);
        }
      }
    }
}

TEST(ActKernels, ANonFiniteValueAtAnyPositionIsSeen) {
  for (ActTier t : supported_act_tiers())
    for (float bad : {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                      -std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::quiet_NaN()})
      for (int64_t n : {1, 7, 16, 53, 64, 131})
        for (int64_t at = 0; at < n; ++at) {
          std::vector<float> x(static_cast<size_t>(n), -3.0f);
          x[static_cast<size_t>(at)] = bad;
          ASSERT_GT(absmax_bits(x.data(), n, t), kMaxFiniteBits) << act_tier_name(t) << " n = " << n << " at " << at;
        }
}

TEST(ActKernels, RandomBitPatternsGiveTheScalarCodes) {
  const auto x = random_bits(1600, 7);
  for (ActTier t : supported_act_tiers())
    for (Bits bits : {Bits::int8, Bits::int4})
      for (float scale : {1.0f, 3.7e-3f, 1e-30f, 1e30f, 1e-45f, 0.0f, 2.5f})
        expect_codes(x, scale, bits, t, "random bits");
}

TEST(ActKernels, EveryTieRoundsToEven) {
  // x / scale = j + 0.5 exactly for j in -140..139 (past the clamp on both sides), at a scale
  // that is a power of two and at one that is not (x built as (j + 0.5) * scale and kept only
  // where the quotient comes back exact).
  for (float scale : {0.125f, 0.3f, 7.0e-39f /* denormal */}) {
    std::vector<float> x;
    for (int j = -140; j < 140; ++j) {
      const float v = (static_cast<float>(j) + 0.5f) * scale;
      if (v / scale == static_cast<float>(j) + 0.5f) x.push_back(v);
    }
    ASSERT_GT(x.size(), 20u) << scale;
    for (size_t i = 0, base = x.size(); x.size() < 1600; ++i) x.push_back(x[i % base]);
    for (ActTier t : supported_act_tiers())
      for (Bits bits : {Bits::int8, Bits::int4}) expect_codes(x, scale, bits, t, "ties");
  }
}

TEST(ActKernels, ClampSaturationDenormalsAndZeros) {
  const float big = 2147483648.0f, top = 2147483520.0f;  // 2^31 and the float below it
  std::vector<float> x = {126.5f, 127.0f, 127.49f, 127.5f, 128.0f, 128.5f, -126.5f, -127.5f, -128.0f, -128.5f,
                          6.5f,   7.5f,   8.0f,    -7.5f,  -8.5f,  big,    -big,    top,     -top,    3e9f,
                          -3e9f,  1e38f,  -1e38f,  std::numeric_limits<float>::max(), -std::numeric_limits<float>::max(),
                          0.0f,   -0.0f,  1e-45f,  -1e-45f, 1e-40f, -1e-40f, std::numeric_limits<float>::min()};
  while (x.size() < 1600) x.push_back(x[x.size() % 32] * (x.size() % 3 == 0 ? 1.0f : -1.0f));
  for (ActTier t : supported_act_tiers())
    for (Bits bits : {Bits::int8, Bits::int4})
      for (float scale : {1.0f, 1e-45f, 1e-40f, 0.5f}) expect_codes(x, scale, bits, t, "edges");
}

TEST(ActKernels, TheRoundingModeChangesNothing) {
  // The division follows the mode on both sides alike; the rounding to an integer must not.
  const auto x = random_bits(1600, 11);
  std::vector<float> ties;
  for (int j = -130; j < 130; ++j) ties.push_back((static_cast<float>(j) + 0.5f) * 0.25f);
  const int saved = std::fegetround();
  for (int mode : {FE_UPWARD, FE_DOWNWARD, FE_TOWARDZERO}) {
    ASSERT_EQ(std::fesetround(mode), 0);
    for (ActTier t : supported_act_tiers())
      for (Bits bits : {Bits::int8, Bits::int4}) {
        expect_codes(x, 0.0137f, bits, t, "random bits, mode changed");
        expect_codes(ties, 0.25f, bits, t, "ties, mode changed");
      }
  }
  std::fesetround(saved);
}

}  // namespace
}  // namespace ork::quant::detail
