// IEEE 754 binary16 <-> binary32, written out so the emulator's fp16 path does not depend
// on compiler support for _Float16. half -> float is exact; float -> half rounds to nearest,
// ties to even, with overflow to infinity and gradual underflow (IEEE 754-2008 section 4.3).
#pragma once

#include <bit>
#include <cstdint>

namespace ork::emu {

constexpr float half_to_float(uint16_t h) {
  const uint32_t sign = uint32_t{h & 0x8000u} << 16;
  const uint32_t exp = (h >> 10) & 0x1f;
  uint32_t mant = h & 0x3ffu;
  if (exp == 0x1f) return std::bit_cast<float>(sign | 0x7f800000u | (mant << 13));  // inf/NaN
  if (exp != 0) return std::bit_cast<float>(sign | ((exp + 112) << 23) | (mant << 13));
  if (mant == 0) return std::bit_cast<float>(sign);  // +-0
  // Subnormal half: normalise (value = mant * 2^-24).
  int e = 113;
  while ((mant & 0x400u) == 0) {
    mant <<= 1;
    --e;
  }
  return std::bit_cast<float>(sign | (uint32_t(e) << 23) | ((mant & 0x3ffu) << 13));
}

constexpr uint16_t float_to_half(float f) {
  const uint32_t x = std::bit_cast<uint32_t>(f);
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  const uint32_t exp = (x >> 23) & 0xff;
  const uint32_t mant = x & 0x7fffffu;
  if (exp == 0xff) return sign | 0x7c00u | (mant != 0 ? 0x200u : 0u);  // inf, quiet NaN
  const int e = static_cast<int>(exp) - 127 + 15;                      // half exponent
  if (e >= 0x1f) return sign | 0x7c00u;                                // overflow -> inf
  if (e <= 0) {
    if (e < -10) return sign;  // below half the smallest subnormal: rounds to 0
    // Subnormal: shift the full significand (implicit 1) right, round to nearest even.
    const uint32_t full = mant | 0x800000u;
    const int shift = 14 - e;  // 24-bit significand down to 10 bits at exponent -14
    uint32_t h = full >> shift;
    const uint32_t rem = full & ((1u << shift) - 1);
    const uint32_t halfway = 1u << (shift - 1);
    if (rem > halfway || (rem == halfway && (h & 1u))) ++h;
    return sign | static_cast<uint16_t>(h);
  }
  uint32_t h = (uint32_t(e) << 10) | (mant >> 13);
  const uint32_t rem = mant & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;  // may carry into exp: correct
  return sign | static_cast<uint16_t>(h);
}

}  // namespace ork::emu
