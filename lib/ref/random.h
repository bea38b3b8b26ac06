// Seeded int8 operands for tests and benchmarks: the whole range -128..127, the same values
// for the same seed on every run and machine (std::mt19937 is fully specified, and the bytes
// are taken by shifts, not by the host's byte order). Each 32-bit draw gives four operands,
// low byte first: drawing was a quarter of mc_prof's published sweep under AddressSanitizer
// at one draw per operand (docs/reliability.md "CI time").
#pragma once

#include <cstdint>
#include <random>
#include <vector>

namespace ork::ref {

inline std::vector<int8_t> random_int8(size_t n, uint64_t seed) {
  std::mt19937 rng(static_cast<uint32_t>(seed ^ (seed >> 32)));
  std::vector<int8_t> v(n);
  for (size_t i = 0; i < n; i += 4) {
    const uint32_t r = rng();
    for (size_t b = 0; b < 4 && i + b < n; ++b) v[i + b] = static_cast<int8_t>(r >> (8 * b));  // modulo 2^8
  }
  return v;
}

// The same draws as int4 values, -8..7: each byte's high nibble, sign-extended (x >> 4).
inline std::vector<int8_t> random_int4(size_t n, uint64_t seed) {
  std::vector<int8_t> v = random_int8(n, seed);
  for (auto& x : v) x = static_cast<int8_t>(x >> 4);
  return v;
}

}  // namespace ork::ref
