// Activation quantisation, per call on the host: fp32 A (M x K) -> int8 codes + scales.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "driver/common/result.h"
#include "lib/quant/scheme.h"

namespace ork::quant {

struct QuantActivations {
  int64_t m = 0, k = 0;
  ActScheme scheme;
  std::vector<int8_t> codes;  // M x K row-major, one code per byte (int4 codes in -7..7)
  std::vector<float> scales;  // 1 (per-tensor) or M (per-row)
  float scale(int64_t row) const { return scales[scheme.per_row ? static_cast<size_t>(row) : 0]; }
};

// Refuses non-finite A with the position of the first bad element.
Result<QuantActivations> quantise_activations(std::span<const float> a, int64_t m, int64_t k, const ActScheme& s);

// Columns [k0, k0 + cols) of the codes, row-major M x cols: one K-group's feature matrix.
void copy_columns(const QuantActivations& q, int64_t k0, int64_t cols, std::span<int8_t> out);

}  // namespace ork::quant
