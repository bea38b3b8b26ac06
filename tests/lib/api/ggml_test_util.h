// ggml blocks for the tests, built and read with plain loops of their own (facts from ggml's
// src/ggml-common.h and src/ggml-quants.c: 32 values per block, fp16 d first; Q4_1 / Q8_1 a
// second fp16 (m / s); Q4 nibbles: low nibble of qs[j] is value j, high nibble value j + 16).
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "driver/common/fp16.h"
#include "ork/ork.h"

namespace ork::ggml_testing {

inline int64_t block_bytes(int type) {
  return type == ORK_GGML_Q4_0 ? 18 : type == ORK_GGML_Q4_1 ? 20 : type == ORK_GGML_Q8_0 ? 34 : 36;
}
inline bool four_bit(int type) { return type == ORK_GGML_Q4_0 || type == ORK_GGML_Q4_1; }

// A weight decoded by a plain loop: value[k][n] = q * d + m, q the format's code (Q4_0:
// nibble - 8, Q4_1: nibble, Q8: qs), d and m per [block][n] (m = 0 except Q4_1).
struct Decoded {
  std::vector<int32_t> q;  // K x N
  std::vector<float> d, m; // [K/32][N]
  double value(int64_t k, int64_t n, int64_t cols) const {
    const size_t g = static_cast<size_t>((k / 32) * cols + n);
    return double(q[static_cast<size_t>(k * cols + n)]) * double(d[g]) + double(m[g]);
  }
};

inline uint16_t u16(const uint8_t* p) { return static_cast<uint16_t>(p[0] | (p[1] << 8)); }

inline Decoded decode(int type, const std::vector<uint8_t>& bytes, int64_t k, int64_t n) {
  Decoded out;
  const int64_t per_row = k / 32, bb = block_bytes(type);
  out.q.assign(static_cast<size_t>(k * n), 0);
  out.d.assign(static_cast<size_t>(per_row * n), 0.0f);
  out.m.assign(out.d.size(), 0.0f);
  for (int64_t row = 0; row < n; ++row)
    for (int64_t b = 0; b < per_row; ++b) {
      const uint8_t* blk = bytes.data() + (row * per_row + b) * bb;
      out.d[static_cast<size_t>(b * n + row)] = ork::half_to_float(u16(blk));
      if (type == ORK_GGML_Q4_1) out.m[static_cast<size_t>(b * n + row)] = ork::half_to_float(u16(blk + 2));
      const uint8_t* qs = blk + ((type == ORK_GGML_Q4_0 || type == ORK_GGML_Q8_0) ? 2 : 4);
      for (int j = 0; j < 32; ++j) {
        int32_t q;
        if (four_bit(type)) {
          const int nib = j < 16 ? (qs[j] & 0x0f) : (qs[j - 16] >> 4);
          q = type == ORK_GGML_Q4_0 ? nib - 8 : nib;
        } else {
          q = static_cast<int8_t>(qs[j]);
        }
        out.q[static_cast<size_t>((b * 32 + j) * n + row)] = q;
      }
    }
  return out;
}

// A random fp16 of either sign. exact: exponent field e0 and only the top 4 mantissa bits
// (5 significant bits), so 127 * q * d and 127 * (q * d + m) are exact in fp32 for d at e0 = 10
// and m at e0 = 13 (at most 20 significant bits). Otherwise any exponent field 0..20
// (subnormals included) and any mantissa.
inline uint16_t random_half(std::mt19937& rng, int e0, bool exact) {
  const uint32_t r = rng();
  if (exact) return static_cast<uint16_t>((r & 0x8000u) | (static_cast<uint32_t>(e0) << 10) | (r & 0x3c0u));
  return static_cast<uint16_t>((r & 0x8000u) | (((r >> 16) % 21) << 10) | (r & 0x3ffu));
}

// Random N x K blocks of `type`: every nibble value (so Q4_0's -8), negative d, and for Q8 the
// whole int8 range (-128 included in the first block).
inline std::vector<uint8_t> random_blocks(int type, int64_t k, int64_t n, uint32_t seed, bool exact = false) {
  std::mt19937 rng(seed);
  const int64_t bb = block_bytes(type), count = n * (k / 32);
  std::vector<uint8_t> b(static_cast<size_t>(count * bb));
  for (int64_t i = 0; i < count; ++i) {
    uint8_t* blk = b.data() + i * bb;
    const uint16_t d = random_half(rng, 10, exact);
    blk[0] = static_cast<uint8_t>(d);
    blk[1] = static_cast<uint8_t>(d >> 8);
    if (bb == 20 || bb == 36) {  // Q4_1 m, or Q8_1 s (unused by the weights: any value)
      const uint16_t m = random_half(rng, 13, exact);
      blk[2] = static_cast<uint8_t>(m);
      blk[3] = static_cast<uint8_t>(m >> 8);
    }
    for (int64_t j = (bb == 18 || bb == 34) ? 2 : 4; j < bb; ++j) blk[j] = static_cast<uint8_t>(rng());
    if (i == 0) blk[bb - 1] = four_bit(type) ? 0x0f : 0x80;  // the extremes: nibbles 15 / 0, int8 -128
  }
  return b;
}

}  // namespace ork::ggml_testing
