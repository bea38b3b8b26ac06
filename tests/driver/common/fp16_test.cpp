// The one fp16 converter (driver/common/fp16.h), used by the emulated NPU and the CPU
// reference alike: hand values for every class, all 2^16 halves exhaustively, and a broad
// fp32 sample (every 4099th bit pattern over all exponents, plus every NaN class and the
// rounding boundaries) against an independent converter: the host CPU's own (x86 F16C
// VCVTPH2PS / VCVTPS2PH; AArch64 FCVT through __fp16), NaN payloads included.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>

#include "driver/common/cpu_features.h"
#include "driver/common/fp16.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace ork {
namespace {

float f_of(uint32_t u) { return std::bit_cast<float>(u); }
uint32_t u_of(float f) { return std::bit_cast<uint32_t>(f); }
bool is_nan_half(uint32_t h) { return (h & 0x7c00) == 0x7c00 && (h & 0x3ff) != 0; }

// The host's hardware converter, when it has one: an oracle written by someone else.
#if defined(__x86_64__)
__attribute__((target("f16c"))) uint16_t host_f2h(float f) {
  return static_cast<uint16_t>(_cvtss_sh(f, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}
__attribute__((target("f16c"))) float host_h2f(uint16_t h) { return _cvtsh_ss(h); }
bool host_has_converter() { return cpu::has(cpu::kF16c); }
#elif defined(__aarch64__)
uint16_t host_f2h(float f) {  // FCVT Hd, Sn: RNE under the default FPCR (DN = 0)
  const __fp16 h = static_cast<__fp16>(f);
  uint16_t u;
  std::memcpy(&u, &h, 2);
  return u;
}
float host_h2f(uint16_t u) {
  __fp16 h;
  std::memcpy(&h, &u, 2);
  return static_cast<float>(h);
}
bool host_has_converter() { return true; }
#else
uint16_t host_f2h(float) { return 0; }
float host_h2f(uint16_t) { return 0; }
bool host_has_converter() { return false; }
#endif

// constexpr: the converter is usable at compile time (the emulator's tables may need it).
static_assert(float_to_half(1.0f) == 0x3c00);
static_assert(half_to_float(0x3c00) == 1.0f);

TEST(Fp16, HalfToFloatHandValues) {
  EXPECT_EQ(half_to_float(0x3c00), 1.0f);
  EXPECT_EQ(half_to_float(0xc000), -2.0f);
  EXPECT_EQ(half_to_float(0x7bff), 65504.0f);
  EXPECT_EQ(half_to_float(0x0400), std::ldexp(1.0f, -14));     // smallest normal
  EXPECT_EQ(half_to_float(0x0001), std::ldexp(1.0f, -24));     // smallest subnormal
  EXPECT_EQ(half_to_float(0x03ff), std::ldexp(1023.0f, -24));  // largest subnormal
  EXPECT_EQ(u_of(half_to_float(0x8000)), 0x80000000u);         // -0
  EXPECT_EQ(u_of(half_to_float(0x7c00)), 0x7f800000u);         // +inf
  EXPECT_EQ(u_of(half_to_float(0xfc00)), 0xff800000u);         // -inf
  EXPECT_EQ(u_of(half_to_float(0x7e01)), 0x7fc02000u);         // quiet NaN, payload kept
  EXPECT_EQ(u_of(half_to_float(0x7c01)), 0x7fc02000u);         // signalling NaN quieted, payload kept
  EXPECT_EQ(u_of(half_to_float(0xfd55)), 0xffeaa000u);
  EXPECT_EQ(u_of(half_to_float(0xfe00)), 0xffc00000u);         // sign kept
}

TEST(Fp16, FloatToHalfHandValues) {
  EXPECT_EQ(float_to_half(1.0f), 0x3c00);
  EXPECT_EQ(float_to_half(1.0f + std::ldexp(1.0f, -11)), 0x3c00);      // tie -> even (down)
  EXPECT_EQ(float_to_half(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02);  // tie -> even (up)
  EXPECT_EQ(float_to_half(1.0f + std::ldexp(1.0f, -11) + std::ldexp(1.0f, -20)), 0x3c01);
  EXPECT_EQ(float_to_half(65504.0f), 0x7bff);
  EXPECT_EQ(float_to_half(65519.996f), 0x7bff);  // just below the tie
  EXPECT_EQ(float_to_half(65520.0f), 0x7c00);    // tie with 2^16 -> inf
  EXPECT_EQ(float_to_half(-1e9f), 0xfc00);
  EXPECT_EQ(float_to_half(std::ldexp(1.0f, -25)), 0x0000);  // tie 0 / 2^-24 -> 0
  EXPECT_EQ(float_to_half(std::ldexp(1.0f, -25) * 1.0000001f), 0x0001);
  EXPECT_EQ(float_to_half(3 * std::ldexp(1.0f, -25)), 0x0002);  // tie 1 / 2 -> 2
  EXPECT_EQ(float_to_half(std::ldexp(3.0f, -26)), 0x0001);
  EXPECT_EQ(float_to_half(std::ldexp(1023.5f, -24)), 0x0400);  // rounds up to normal
  EXPECT_EQ(float_to_half(std::ldexp(1.0f, -30)), 0x0000);
  EXPECT_EQ(float_to_half(-std::ldexp(1.0f, -30)), 0x8000);
  EXPECT_EQ(float_to_half(-0.0f), 0x8000);
  EXPECT_EQ(float_to_half(f_of(0x7f800000u)), 0x7c00);
}

// The NaN rule (fp16.h): sign kept, top 10 fraction bits kept, quiet bit forced. The pattern
// 0x7f802000 is the one two earlier converters of this project disagreed on (0x7e00 vs 0x7e01).
TEST(Fp16, NanRule) {
  EXPECT_EQ(float_to_half(f_of(0x7f802000u)), 0x7e01);  // sNaN, payload 1 after the shift
  EXPECT_EQ(float_to_half(f_of(0x7f800001u)), 0x7e00);  // payload below bit 13: dropped, quieted
  EXPECT_EQ(float_to_half(f_of(0x7fc00000u)), 0x7e00);  // the default quiet NaN
  EXPECT_EQ(float_to_half(f_of(0xffc00000u)), 0xfe00);  // x86's "real indefinite"
  EXPECT_EQ(float_to_half(f_of(0x7fffffffu)), 0x7fff);
  EXPECT_EQ(float_to_half(f_of(0xffffe000u)), 0xffff);
  for (uint32_t h = 0; h < 0x10000; ++h) {  // a NaN never becomes inf, never loses its sign
    if (!is_nan_half(h)) continue;
    const uint16_t back = float_to_half(half_to_float(static_cast<uint16_t>(h)));
    ASSERT_EQ(back, h | 0x200u) << std::hex << h;  // quieted, payload and sign kept
  }
}

TEST(Fp16, EveryHalfRoundTripsExactly) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    if (is_nan_half(h)) continue;  // NanRule covers these
    const float f = half_to_float(static_cast<uint16_t>(h));
    ASSERT_FALSE(std::isnan(f)) << std::hex << h;
    ASSERT_EQ(float_to_half(f), h) << std::hex << h;
    // Exactness, independently of the converter: the float's value is sign * frac * 2^e.
    const int exp = static_cast<int>((h >> 10) & 0x1f);
    const double frac = h & 0x3ff;
    const double mag = exp == 0x1f ? INFINITY : exp == 0 ? std::ldexp(frac, -24) : std::ldexp(1024 + frac, exp - 25);
    ASSERT_EQ(static_cast<double>(f), (h & 0x8000) ? -mag : mag) << std::hex << h;
  }
}

TEST(Fp16, EveryHalfMatchesTheHostConverter) {
  if (!host_has_converter()) GTEST_SKIP() << "host without a hardware fp16 converter";
  for (uint32_t h = 0; h < 0x10000; ++h)
    ASSERT_EQ(u_of(half_to_float(static_cast<uint16_t>(h))), u_of(host_h2f(static_cast<uint16_t>(h)))) << std::hex << h;
}

// Every 4099th fp32 pattern (4099 is prime: every exponent and many fraction bit patterns,
// about 1.05 million values), then the boundaries: each exponent's ties and neighbours, and
// NaNs with every single payload bit.
TEST(Fp16, BroadFloatSampleMatchesTheHostConverter) {
  if (!host_has_converter()) GTEST_SKIP() << "host without a hardware fp16 converter";
  for (uint64_t u = 0; u <= 0xffffffffu; u += 4099) {
    const float f = f_of(static_cast<uint32_t>(u));
    ASSERT_EQ(float_to_half(f), host_f2h(f)) << std::hex << u;
  }
  for (uint32_t sign : {0u, 0x80000000u}) {
    for (uint32_t exp = 0; exp < 256; ++exp) {
      for (uint32_t low : {0u, 1u, 0xfffu, 0x1000u, 0x1001u, 0x1fffu, 0x2000u, 0x3000u, 0x7fffffu, 0x400000u, 0x401000u}) {
        const float f = f_of(sign | (exp << 23) | low);
        ASSERT_EQ(float_to_half(f), host_f2h(f)) << std::hex << (sign | (exp << 23) | low);
      }
    }
    for (int bit = 0; bit < 23; ++bit) {
      const float f = f_of(sign | 0x7f800000u | (1u << bit));
      ASSERT_EQ(float_to_half(f), host_f2h(f)) << "NaN payload bit " << bit;
    }
  }
}

}  // namespace
}  // namespace ork
