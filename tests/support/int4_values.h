// int4 test operands: values one per int8 (-8..7, as the oracle takes them), drawn from a
// seed, and the same values packed two per byte (driver/common/int4.h's nibble order) as the
// C API takes int4 tensors.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "driver/common/int4.h"

namespace ork::test {

inline std::vector<uint8_t> pack_int4_values(const std::vector<int8_t>& v) {
  std::vector<uint8_t> out(static_cast<size_t>(int4::packed_bytes(static_cast<int64_t>(v.size()))), 0);
  for (size_t i = 0; i < v.size(); ++i) int4::put(out.data(), static_cast<int64_t>(i), v[i]);
  return out;
}

// `count` values in lo .. lo + span - 1 (a span of at most 16 keeps them int4).
inline std::vector<int8_t> draw_int4_values(size_t count, unsigned seed, int lo, int span) {
  std::mt19937 rng(seed);
  std::vector<int8_t> v(count);
  for (auto& x : v) x = static_cast<int8_t>(static_cast<int>(rng() % static_cast<unsigned>(span)) + lo);
  return v;
}

}  // namespace ork::test
