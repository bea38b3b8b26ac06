// The quantisation scheme (lib/quant/scheme.h): group widths and limits per mode, and the
// modes themselves, on hand-computed cases.
#include <gtest/gtest.h>

#include "lib/quant/scheme.h"

namespace ork::quant {
namespace {

TEST(Scheme, GroupsAndLimits) {
  EXPECT_TRUE(check_weight_scheme({Bits::int8, 0}, 4096).ok());
  EXPECT_TRUE(check_weight_scheme({Bits::int4, 32}, 40).ok());
  EXPECT_TRUE(check_weight_scheme({Bits::int4, 128}, 1).ok());
  EXPECT_EQ(check_weight_scheme({Bits::int8, 48}, 96).error().message,
            "group = 48: expected 0 (per-channel), 32, 64 or 128");
  EXPECT_FALSE(check_weight_scheme({Bits::int8, -32}, 96).ok());
  EXPECT_FALSE(check_weight_scheme({Bits::int8, 0}, kMaxPerChannelK + 1).ok());
  EXPECT_TRUE(check_weight_scheme({Bits::int8, 0}, kMaxPerChannelK).ok());
  EXPECT_TRUE(check_weight_scheme({Bits::int8, 128}, kMaxPerChannelK * 4).ok());
  EXPECT_FALSE(check_weight_scheme({static_cast<Bits>(2), 0}, 64).ok());
  // 127 * 127 * kMaxPerChannelK fits int32: the reason for the limit.
  EXPECT_LT(int64_t{127} * 127 * kMaxPerChannelK, int64_t{INT32_MAX});
  EXPECT_GT(int64_t{127} * 127 * (kMaxPerChannelK * 2), int64_t{INT32_MAX});
  EXPECT_EQ(group_count({Bits::int8, 32}, 40), 2);
  EXPECT_EQ(group_count({Bits::int8, 0}, 40), 1);
  EXPECT_EQ(group_width({Bits::int8, 0}, 40), 40);
}

TEST(Scheme, Modes) {
  EXPECT_EQ(*parse_mode("w4a8"), Mode::w4a8);
  EXPECT_EQ(weight_bits(Mode::w4a8), Bits::int4);
  EXPECT_EQ(activation_bits(Mode::w4a8), Bits::int8);
  EXPECT_EQ(activation_bits(Mode::w4a4), Bits::int4);
  EXPECT_EQ(weight_bits(Mode::w8a8), Bits::int8);
  EXPECT_EQ(parse_mode("w8a4").error().message, "quantisation mode 'w8a4': expected w8a8, w4a8 or w4a4");
}

}  // namespace
}  // namespace ork::quant
