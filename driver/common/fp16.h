// IEEE 754 binary16 <-> binary32, bit-exact and constexpr, the one converter of the project:
// the emulated NPU (CNA input, DPU output) and the CPU reference (oracle, packers, tools) both
// use it, so a rounding or NaN rule can never differ between the device model and the oracle.
// It lives in driver/common because that is the lowest layer both may include (header only:
// lib/ref stays free of a link dependency on the driver). Written out rather than _Float16:
// GCC 12 on x86-64 has no _Float16 in C++.
//
// Formats: IEEE 754-2008 table 3.5 (binary16: 1 sign, 5 exponent bits with bias 15, 10
// fraction bits; binary32: 8 exponent bits with bias 127, 23 fraction bits).
// Rules (docs/dtypes.md section "fp16 conversion" says which are known and which assumed):
// - half -> float is exact for every half that is a number (subnormals normalised); a NaN
//   keeps its sign and payload (in the float's top fraction bits) and comes out quiet, as
//   a conversion quiets a signalling NaN (IEEE 754-2008 section 6.2) and as F16C VCVTPH2PS
//   and AArch64 FCVT do;
// - float -> half rounds to nearest, ties to even; |x| >= 65520 gives inf; below 2^-25 gives 0
//   (2^-25 itself ties to 0); subnormal halves by gradual underflow;
// - float NaN -> half NaN: sign kept, the top 10 fraction bits kept, the quiet bit (0x200)
//   forced. This is what x86 F16C VCVTPS2PH and AArch64 FCVT (FPCR.DN = 0) do, and what
//   IEEE 754-2008 section 6.2.3 recommends; the NPU's own rule is not published (assumed).
#pragma once

#include <bit>
#include <cstdint>

namespace ork {

constexpr float half_to_float(uint16_t h) {
  const uint32_t sign = uint32_t{h & 0x8000u} << 16;
  const uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t frac = h & 0x3ffu;
  if (exp == 0x1f) {  // inf, or NaN made quiet (bit 22)
    return std::bit_cast<float>(sign | 0x7f800000u | (frac << 13) | (frac != 0 ? 0x400000u : 0u));
  }
  if (exp != 0) return std::bit_cast<float>(sign | ((exp - 15 + 127) << 23) | (frac << 13));
  if (frac == 0) return std::bit_cast<float>(sign);  // +-0
  // Subnormal: frac * 2^-24. Normalise: shift the leading one up to bit 10.
  int e = -14;
  while ((frac & 0x400u) == 0) {
    frac <<= 1;
    --e;
  }
  return std::bit_cast<float>(sign | (static_cast<uint32_t>(e + 127) << 23) | ((frac & 0x3ffu) << 13));
}

namespace fp16_detail {
// q plus one when the dropped bits r (out of 2^shift) are above half, or exactly half and q
// is odd: round to nearest, ties to even. A carry out of the fraction bumps the exponent,
// which is the correctly rounded result (up to inf at the top).
constexpr uint32_t round_nearest_even(uint32_t q, uint32_t r, int shift) {
  const uint32_t half = 1u << (shift - 1);
  return (r > half || (r == half && (q & 1u))) ? q + 1 : q;
}
}  // namespace fp16_detail

constexpr uint16_t float_to_half(float value) {
  const uint32_t x = std::bit_cast<uint32_t>(value);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const uint32_t ax = x & 0x7fffffffu;
  if (ax > 0x7f800000u) return static_cast<uint16_t>(sign | 0x7e00u | ((ax >> 13) & 0x3ffu));  // NaN
  if (ax >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // >= 65520, or inf
  if (ax >= 0x38800000u) {  // >= 2^-14: a normal half
    const uint32_t q = (((ax >> 23) - 127 + 15) << 10) | ((ax & 0x7fffffu) >> 13);
    return static_cast<uint16_t>(sign | fp16_detail::round_nearest_even(q, ax & 0x1fffu, 13));
  }
  if (ax < 0x33000000u) return static_cast<uint16_t>(sign);  // < 2^-25: rounds to zero
  // Subnormal half: value = m * 2^(e-150) = (m >> (126 - e)) units of 2^-24; 14 <= shift <= 24.
  const uint32_t e = ax >> 23;
  const uint32_t m = (ax & 0x7fffffu) | 0x800000u;
  const int shift = static_cast<int>(126 - e);
  return static_cast<uint16_t>(sign | fp16_detail::round_nearest_even(m >> shift, m & ((1u << shift) - 1), shift));
}

// Whether this CPU converts in hardware (F16C) is cpu_features.h's kF16c. The converters
// above stay the definition; the fast paths that use F16C are tested against them.

}  // namespace ork
