// The scalar arithmetic of lib/quant (arith.h) on hand-computed cases. The scheme: scheme_test.cpp.
#include <gtest/gtest.h>

#include <cfenv>
#include <cmath>
#include <limits>
#include <vector>

#include "lib/quant/arith.h"
#include "lib/quant/scheme.h"

namespace ork::quant {
namespace {

TEST(RoundHalfEven, TiesGoToTheEvenNeighbour) {
  EXPECT_EQ(round_half_even(0.5f), 0);
  EXPECT_EQ(round_half_even(1.5f), 2);
  EXPECT_EQ(round_half_even(2.5f), 2);
  EXPECT_EQ(round_half_even(3.5f), 4);
  EXPECT_EQ(round_half_even(-0.5f), 0);
  EXPECT_EQ(round_half_even(-1.5f), -2);
  EXPECT_EQ(round_half_even(-2.5f), -2);
  EXPECT_EQ(round_half_even(126.5f), 126);
  EXPECT_EQ(round_half_even(-126.5f), -126);
}

TEST(RoundHalfEven, NonTiesGoToTheNearest) {
  EXPECT_EQ(round_half_even(0.49999997f), 0);  // largest float below 0.5
  EXPECT_EQ(round_half_even(0.50000006f), 1);  // smallest float above 0.5
  EXPECT_EQ(round_half_even(-2.7f), -3);
  EXPECT_EQ(round_half_even(-2.3f), -2);
  EXPECT_EQ(round_half_even(0.0f), 0);
  EXPECT_EQ(round_half_even(-0.0f), 0);
  EXPECT_EQ(round_half_even(8388609.0f), 8388609);  // 2^23 + 1: already an integer
}

TEST(RoundHalfEven, IgnoresTheRoundingMode) {
  // nearbyint would follow fesetround; ours must not.
  const int old = std::fegetround();
  for (int mode : {FE_UPWARD, FE_DOWNWARD, FE_TOWARDZERO}) {
    ASSERT_EQ(std::fesetround(mode), 0);
    EXPECT_EQ(round_half_even(2.5f), 2) << mode;
    EXPECT_EQ(round_half_even(-3.5f), -4) << mode;
    EXPECT_EQ(round_half_even(2.6f), 3) << mode;
  }
  std::fesetround(old);
}

TEST(RoundHalfEven, SaturatesHugeValues) {
  EXPECT_EQ(round_half_even(3e9f), std::numeric_limits<int32_t>::max());
  EXPECT_EQ(round_half_even(-3e9f), std::numeric_limits<int32_t>::min());
}

TEST(Scale, AbsmaxOverQmax) {
  EXPECT_EQ(scale_from_absmax(127.0f, Bits::int8), 1.0f);
  EXPECT_EQ(scale_from_absmax(14.0f, Bits::int4), 2.0f);
  EXPECT_EQ(scale_from_absmax(1.0f, Bits::int8), 1.0f / 127.0f);
  EXPECT_EQ(scale_from_absmax(0.0f, Bits::int8), 0.0f);
  EXPECT_EQ(scale_from_absmax(1e-45f, Bits::int8), 0.0f);  // underflows: treated as a zero group
}

TEST(QuantiseValue, ClampsToTheSymmetricRange) {
  EXPECT_EQ(quantise_value(127.0f, 1.0f, Bits::int8), 127);
  EXPECT_EQ(quantise_value(200.0f, 1.0f, Bits::int8), 127);
  EXPECT_EQ(quantise_value(-128.0f, 1.0f, Bits::int8), -127);  // never -128
  EXPECT_EQ(quantise_value(-1e30f, 1.0f, Bits::int8), -127);
  EXPECT_EQ(quantise_value(7.0f, 1.0f, Bits::int4), 7);
  EXPECT_EQ(quantise_value(-8.0f, 1.0f, Bits::int4), -7);  // never -8
  EXPECT_EQ(quantise_value(6.5f, 1.0f, Bits::int4), 6);
  EXPECT_EQ(quantise_value(-6.5f, 1.0f, Bits::int4), -6);
  EXPECT_EQ(quantise_value(5.0f, 2.0f, Bits::int4), 2);   // 2.5 -> 2
  EXPECT_EQ(quantise_value(3.0f, 2.0f, Bits::int8), 2);   // 1.5 -> 2
}

TEST(QuantiseValue, ZeroScaleGivesZero) {
  EXPECT_EQ(quantise_value(0.0f, 0.0f, Bits::int8), 0);
  EXPECT_EQ(quantise_value(1e-45f, 0.0f, Bits::int4), 0);
}

TEST(CheckFinite, NamesTheFirstBadElement) {
  std::vector<float> x(6, 1.0f);
  EXPECT_TRUE(check_finite(x, 2, 3, "A").ok());
  x[4] = std::numeric_limits<float>::quiet_NaN();
  x[5] = std::numeric_limits<float>::infinity();
  auto s = check_finite(x, 2, 3, "A");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code, -EINVAL);
  EXPECT_EQ(s.error().message, "A[1][1] = nan: inputs must be finite");
  x[4] = 0.0f;
  EXPECT_EQ(check_finite(x, 2, 3, "W").error().message, "W[1][2] = inf: inputs must be finite");
}

}  // namespace
}  // namespace ork::quant
