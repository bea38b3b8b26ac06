#include "lib/quant/ggml.h"

#include <cmath>
#include <vector>

#include <fmt/format.h>

#include "driver/common/fp16.h"
#include "driver/common/int4.h"

namespace ork::quant::ggml {
namespace {

float half_at(const uint8_t* p) { return ork::half_to_float(static_cast<uint16_t>(p[0] | (p[1] << 8))); }

Status check_finite_half(float v, const char* what, int64_t row, int64_t block) {
  if (std::isfinite(v)) return Status::success();
  return make_error(-EINVAL, fmt::format("row {} block {}: {} = {}: block scales must be finite", row, block, what, v));
}

}  // namespace

const char* type_name(int32_t type) {
  switch (type) {
    case q4_0: return "Q4_0";
    case q4_1: return "Q4_1";
    case q8_0: return "Q8_0";
    case q8_1: return "Q8_1";
  }
  return "?";
}

int64_t block_bytes(int32_t type) {
  switch (type) {
    case q4_0: return 2 + kBlock / 2;
    case q4_1: return 4 + kBlock / 2;
    case q8_0: return 2 + kBlock;
    case q8_1: return 4 + kBlock;
  }
  return 0;
}

Result<QuantWeights> import_blocks(int32_t type, std::span<const uint8_t> blocks, int64_t k, int64_t n) {
  const int64_t bb = block_bytes(type);
  if (bb == 0)
    return make_error(-EINVAL, fmt::format("ggml type {}: supported are Q4_0 (2), Q4_1 (3), Q8_0 (8) and Q8_1 (9)", type));
  if (k < 1 || n < 1) return make_error(-EINVAL, fmt::format("K = {}, N = {}: must be >= 1", k, n));
  if (k % kBlock != 0)
    return make_error(-EINVAL, fmt::format("K = {} is not a multiple of 32: {} blocks hold 32 values along K", k, type_name(type)));
  const int64_t per_row = k / kBlock;
  if (static_cast<int64_t>(blocks.size()) != n * per_row * bb)
    return make_error(-EINVAL, fmt::format("{} bytes of {} blocks: N = {} rows of K / 32 = {} blocks of {} bytes are {} "
                                           "(block count does not match K and N)", blocks.size(), type_name(type), n,
                                           per_row, bb, n * per_row * bb));
  const bool four = type == q4_0 || type == q4_1;
  const int64_t head = (type == q4_0 || type == q8_0) ? 2 : 4;  // d, or d and m / s
  std::vector<uint8_t> codes(static_cast<size_t>(QuantWeights::code_bytes(four ? Bits::int4 : Bits::int8, k, n)), 0);
  std::vector<float> scales(static_cast<size_t>(per_row * n)), mins(type == q4_1 ? scales.size() : 0);
  for (int64_t row = 0; row < n; ++row)
    for (int64_t b = 0; b < per_row; ++b) {
      const uint8_t* blk = blocks.data() + (row * per_row + b) * bb;
      const float d = half_at(blk);
      if (auto s = check_finite_half(d, "d", row, b); !s) return s.error();
      scales[static_cast<size_t>(b * n + row)] = d;
      if (type == q4_1) {
        const float m = half_at(blk + 2);
        if (auto s = check_finite_half(m, "m", row, b); !s) return s.error();
        mins[static_cast<size_t>(b * n + row)] = m;
      }
      const uint8_t* qs = blk + head;
      for (int64_t j = 0; j < kBlock; ++j) {
        const int64_t kk = b * kBlock + j, i = kk * n + row;  // codes are K x N: element k*N + n
        if (four) {
          const int nib = j < 16 ? (qs[j] & 0x0f) : (qs[j - 16] >> 4);  // low nibbles first
          int4::put(codes.data(), i, static_cast<int8_t>(nib - 8));      // Q4_0: q - 8; Q4_1: stored q - 8
        } else {
          codes[static_cast<size_t>(i)] = qs[j];
        }
      }
    }
  const WeightScheme scheme{.bits = four ? Bits::int4 : Bits::int8, .group = kBlock, .full_range = true, .signed_scales = true};
  QuantWeights::Affine affine;
  if (type == q4_1) affine = {.mins = mins, .code_offset = 8};
  return QuantWeights::import(codes, scales, k, n, scheme, affine);
}

}  // namespace ork::quant::ggml
