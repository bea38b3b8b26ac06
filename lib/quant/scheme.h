// Quantisation schemes (docs/quantisation.md): which integer widths and which scales.
// Weights: symmetric, one scale per output column n per K-group (per-channel = one group
// of width K). Activations: symmetric, one scale per tensor or per row of A.
#pragma once

#include <cstdint>

#include "driver/common/result.h"

namespace ork::quant {

enum class Bits { int4 = 4, int8 = 8 };

// Symmetric clamp limits: int8 [-127, 127], int4 [-7, 7]. The most negative code (-128 / -8)
// is never produced, so q and -q are both representable and the scale is absmax / qmax.
inline constexpr int32_t qmax(Bits bits) { return bits == Bits::int8 ? 127 : 7; }
const char* bits_name(Bits bits);

// Group widths accepted along K (the group sizes engines ship: llama.cpp Q4_0/Q8_0 use 32,
// GPTQ/AWQ 64 and 128). 0 means per-channel.
inline constexpr int64_t kGroupWidths[] = {32, 64, 128};

// Largest K of a per-channel scheme: 127 * 127 * 131072 = 2,114,060,288 < 2^31 - 1, so the
// int32 accumulator of every backend is exact (no wrap). Groups are at most 128 wide.
inline constexpr int64_t kMaxPerChannelK = int64_t{1} << 17;

struct WeightScheme {
  Bits bits = Bits::int8;
  int64_t group = 0;  // 0 = per-channel; else 32, 64 or 128 along K
  // Imported block formats (ggml Q4_0 / Q8_0, docs/quantisation.md "ggml blocks"): codes over
  // the whole two's-complement range (int8 -128..127, int4 -8..7) and scales of either sign.
  // The arithmetic stays exact: |q| <= 128 keeps every int32 sum exact (per-channel:
  // 127 * 128 * kMaxPerChannelK = 2,130,706,432 < 2^31), a negative scale is one more fp32
  // multiply of the same formula, and -q of a full-range code is never formed.
  bool full_range = false;
  bool signed_scales = false;
};

// The most negative code a scheme accepts: -qmax, or -(qmax + 1) with full_range.
inline constexpr int32_t qmin(const WeightScheme& s) { return -qmax(s.bits) - (s.full_range ? 1 : 0); }

struct ActScheme {
  Bits bits = Bits::int8;
  bool per_row = false;  // one scale per row of A instead of one per tensor
};

// The modes engines name: weight bits x activation bits.
enum class Mode { w8a8, w4a8, w4a4 };
const char* mode_name(Mode mode);
Result<Mode> parse_mode(const char* name);
Bits weight_bits(Mode mode);
Bits activation_bits(Mode mode);

// Width of the groups along K (the last one may be shorter: K - (groups-1) * width).
inline int64_t group_width(const WeightScheme& s, int64_t k) { return s.group == 0 ? k : s.group; }
inline int64_t group_count(const WeightScheme& s, int64_t k) {
  const int64_t w = group_width(s, k);
  return (k + w - 1) / w;
}

// Checks bits, group width and K against the limits above; names the bad value.
Status check_weight_scheme(const WeightScheme& s, int64_t k);

}  // namespace ork::quant
