// sparse_check's quantised modes (--quant w8a8|w4a8|w4a4): each checked cell recomputed from
// the reference's own scales and codes (lib/quant/reference.h defines the arithmetic) with
// per-group integer sums over K and the defined dequantisation order, compared bit for bit.
// Codes and scales are computed once (O(MK + KN)); each cell costs O(K).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "lib/quant/scheme.h"
#include "tools/sparse_check/cells.h"
#include "tools/sparse_check/verify.h"

namespace ork::tools {

struct QuantProblem {
  std::span<const float> a, w;  // A: M x K, W: K x N, row-major fp32
  int64_t m = 0, k = 0, n = 0;
  quant::WeightScheme weights;
  quant::ActScheme activations;
};

// `c` is the device's fp32 C, M x N row-major. Mismatch.expected / .got hold fp32 bits.
void verify_quant_cells(const QuantProblem& p, const std::vector<Cell>& cells, std::span<const float> c,
                        Outcome& out);

}  // namespace ork::tools
