// binary16 <-> binary32 (fp16.h). Formats: IEEE 754-2008 table 3.5 (binary16: 1 sign,
// 5 exponent bits with bias 15, 10 fraction bits; binary32: 8 exponent bits, bias 127, 23).
#include "lib/ref/fp16.h"

#include <cstring>

namespace ork::ref {

namespace {

uint32_t bits_of(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

float float_of(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

// q plus one when the dropped bits r (out of 2^shift) are above half, or exactly half and
// q is odd: round to nearest, ties to even.
uint32_t round_nearest_even(uint32_t q, uint32_t r, int shift) {
  const uint32_t half = 1u << (shift - 1);
  return (r > half || (r == half && (q & 1u))) ? q + 1 : q;
}

}  // namespace

float half_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu;
  const uint32_t frac = h & 0x3ffu;
  if (exp == 0x1f) return float_of(sign | 0x7f800000u | (frac << 13));  // inf / NaN
  if (exp != 0) return float_of(sign | ((exp - 15 + 127) << 23) | (frac << 13));
  if (frac == 0) return float_of(sign);  // +-0
  // Subnormal: frac * 2^-24. Normalise: shift the leading one up to bit 10.
  int e = -14;
  uint32_t f = frac;
  while ((f & 0x400u) == 0) {
    f <<= 1;
    --e;
  }
  return float_of(sign | static_cast<uint32_t>(e + 127) << 23 | ((f & 0x3ffu) << 13));
}

uint16_t float_to_half(float value) {
  const uint32_t x = bits_of(value);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const uint32_t ax = x & 0x7fffffffu;
  if (ax > 0x7f800000u) return static_cast<uint16_t>(sign | 0x7e00u | ((ax >> 13) & 0x3ffu));
  if (ax >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // >= 65520 (or inf)
  if (ax >= 0x38800000u) {  // >= 2^-14: a normal half (the rounding carry may bump exp)
    const uint32_t q = ((((ax >> 23) - 127 + 15) << 10) | ((ax & 0x7fffffu) >> 13));
    return static_cast<uint16_t>(sign | round_nearest_even(q, ax & 0x1fffu, 13));
  }
  if (ax < 0x33000000u) return static_cast<uint16_t>(sign);  // < 2^-25: rounds to zero
  // Subnormal half: value = m * 2^(e-150) = (m >> (126 - e)) units of 2^-24; 14 <= shift <= 24.
  const uint32_t e = ax >> 23;
  const uint32_t m = (ax & 0x7fffffu) | 0x800000u;
  const int shift = static_cast<int>(126 - e);
  const uint32_t q = m >> shift;
  return static_cast<uint16_t>(sign | round_nearest_even(q, m & ((1u << shift) - 1), shift));
}

}  // namespace ork::ref
