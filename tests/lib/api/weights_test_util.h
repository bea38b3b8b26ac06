// Shared by the weights tests: seeded weights of each dtype as dense K x N, their copy in an
// engine layout (N x K or K x N, a row stride), and a matmul through a weights object.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "ork/ork.h"

namespace ork::weights_testing {

inline const char* const kDevices[] = {"cpu", "emu-rknpu", "emu-rocket"};

// Bytes of K x N values of `dtype`: int8 one, fp16 two per element, int4 a nibble stream.
inline size_t dense_bytes(ork_dtype dtype, int64_t k, int64_t n) {
  const auto kn = static_cast<size_t>(k * n);
  return dtype == ORK_DTYPE_FP16 ? 2 * kn : dtype == ORK_DTYPE_INT4 ? (kn + 1) / 2 : kn;
}

// One element as an unsigned code: int8 byte, fp16 bits, int4 nibble. The int4 order is
// re-coded here deliberately, from ork.h's statement, independent of driver/common/int4.h.
inline uint32_t get(ork_dtype dtype, const std::vector<uint8_t>& b, int64_t i) {
  if (dtype == ORK_DTYPE_FP16) return uint32_t{b[static_cast<size_t>(2 * i)]} | uint32_t{b[static_cast<size_t>(2 * i + 1)]} << 8;
  if (dtype == ORK_DTYPE_INT4) return (i % 2 == 0) ? b[static_cast<size_t>(i / 2)] & 0x0fu : b[static_cast<size_t>(i / 2)] >> 4;
  return b[static_cast<size_t>(i)];
}
inline void put(ork_dtype dtype, std::vector<uint8_t>& b, int64_t i, uint32_t v) {
  if (dtype == ORK_DTYPE_FP16) {
    b[static_cast<size_t>(2 * i)] = static_cast<uint8_t>(v);
    b[static_cast<size_t>(2 * i + 1)] = static_cast<uint8_t>(v >> 8);
  } else if (dtype == ORK_DTYPE_INT4) {
    uint8_t& x = b[static_cast<size_t>(i / 2)];
    x = (i % 2 == 0) ? static_cast<uint8_t>((x & 0xf0) | (v & 0x0f)) : static_cast<uint8_t>((x & 0x0f) | ((v & 0x0f) << 4));
  } else {
    b[static_cast<size_t>(i)] = static_cast<uint8_t>(v);
  }
}

// Seeded K x N values; fp16 are finite halves of magnitude 2^-4 .. 2^3 (no NaN / inf).
inline std::vector<uint8_t> random_dense(ork_dtype dtype, int64_t k, int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> b(dense_bytes(dtype, k, n), 0);
  for (int64_t i = 0; i < k * n; ++i) {
    const uint32_t r = rng();
    put(dtype, b, i, dtype == ORK_DTYPE_FP16 ? ((r & 0x8000u) | ((11 + (r >> 16) % 8) << 10) | (r & 0x3ffu)) : r);
  }
  return b;
}

// The same values in `layout` with rows `stride` elements apart (0 = dense); the gaps hold
// junk (0xA5 bytes) that must never be read.
inline std::vector<uint8_t> to_layout(ork_dtype dtype, const std::vector<uint8_t>& dense, int64_t k, int64_t n,
                                      int32_t layout, int64_t stride) {
  const bool nk = layout == ORK_LAYOUT_N_BY_K;
  const int64_t rows = nk ? n : k, cols = nk ? k : n, ld = stride == 0 ? cols : stride;
  std::vector<uint8_t> out(dense_bytes(dtype, rows, ld) + 2, 0xA5);
  for (int64_t kk = 0; kk < k; ++kk)
    for (int64_t nn = 0; nn < n; ++nn) put(dtype, out, nk ? nn * ld + kk : kk * ld + nn, get(dtype, dense, kk * n + nn));
  return out;
}

// Seeded A for weights of `dtype` (W4A4: int4 A), M x K.
inline std::vector<uint8_t> random_a(ork_dtype dtype, int64_t m, int64_t k, uint32_t seed) {
  return random_dense(dtype, m, k, seed);
}

// C = A x W as bytes (int32 or fp32 C, 4 bytes per element).
inline std::vector<uint8_t> run(ork_device* dev, const ork_weights* w, const std::vector<uint8_t>& a, int64_t m, int64_t n) {
  std::vector<uint8_t> c(static_cast<size_t>(m * n * 4), 0);
  EXPECT_EQ(ork_matmul(dev, w, a.data(), m, c.data(), nullptr), ORK_OK) << ork_last_error();
  return c;
}

// The packed blob of `w`.
inline std::vector<uint8_t> export_blob(const ork_weights* w) {
  size_t size = 0;
  EXPECT_EQ(ork_weights_export_packed(w, nullptr, 0, &size), ORK_OK) << ork_last_error();
  std::vector<uint8_t> b(size);
  EXPECT_EQ(ork_weights_export_packed(w, b.data(), b.size(), &size), ORK_OK) << ork_last_error();
  EXPECT_EQ(size, b.size());
  return b;
}

}  // namespace ork::weights_testing
