// Seeded int8 operands for tests and benchmarks: the whole range -128..127, the same values
// for the same seed on every run and machine (std::mt19937 is fully specified).
#pragma once

#include <cstdint>
#include <random>
#include <vector>

namespace ork::ref {

inline std::vector<int8_t> random_int8(size_t n, uint64_t seed) {
  std::mt19937 rng(static_cast<uint32_t>(seed ^ (seed >> 32)));
  std::vector<int8_t> v(n);
  for (auto& x : v) x = static_cast<int8_t>(rng());  // the low byte, modulo 2^8
  return v;
}

}  // namespace ork::ref
