// Activation quantisation, per call on the host: fp32 A (M x K) -> int8 codes + scales.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "driver/common/result.h"
#include "lib/quant/act_kernels.h"
#include "lib/quant/scheme.h"

namespace ork::quant {

struct QuantActivations {
  int64_t m = 0, k = 0;
  ActScheme scheme;
  std::vector<int8_t> codes;  // M x K row-major, one code per byte (int4 codes in -7..7)
  std::vector<float> scales;  // 1 (per-tensor) or M (per-row)
  float scale(int64_t row) const { return scales[scheme.per_row ? static_cast<size_t>(row) : 0]; }
};

// Refuses non-finite A with the position of the first bad element. Vectorised, on the best
// tier this CPU has (act_kernels.h); the codes and scales are the scalar definition's.
Result<QuantActivations> quantise_activations(std::span<const float> a, int64_t m, int64_t k, const ActScheme& s);
// The same on a given tier (tests force each one; it must be supported).
Result<QuantActivations> quantise_activations(std::span<const float> a, int64_t m, int64_t k, const ActScheme& s,
                                              detail::ActTier tier);
// The scalar definition, element by element in three passes (check, absmax, codes): the
// oracle the tiers are tested against.
Result<QuantActivations> quantise_activations_scalar(std::span<const float> a, int64_t m, int64_t k,
                                                     const ActScheme& s);

// Columns [k0, k0 + cols) of the codes, row-major M x cols: one K-group's feature matrix.
void copy_columns(const QuantActivations& q, int64_t k0, int64_t cols, std::span<int8_t> out);

}  // namespace ork::quant
