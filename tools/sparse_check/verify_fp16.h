// sparse_check's fp16 reference: each checked cell recomputed on the host in the order
// docs/dtypes.md defines (per K-slice: acc = 0.0f, k increasing, acc + a*b without FMA;
// slice partials added in slice order; fp16 C rounded once, nearest even), written here
// apart from lib/ref so a bug there cannot hide one in the NPU path. Exact bit comparison.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "tools/sparse_check/cells.h"
#include "tools/sparse_check/verify.h"

namespace ork::tools {

struct Fp16Problem {
  std::span<const uint16_t> a, w;  // binary16 bit patterns, A: M x K, W: K x N, row-major
  int64_t m = 0, k = 0, n = 0;
  int64_t slice_k = 0;             // the plan's K-slice width (K when one slice)
  bool fp16_out = false;
};

// The reference value of cell (m, n) as C's bits: fp32 bits, or fp16 bits when fp16_out.
uint32_t fp16_reference_bits(const Fp16Problem& p, int64_t m, int64_t n);

// `c` holds C's elements (float, or uint16_t when fp16_out) as raw bytes, M x N row-major.
// Mismatch.expected / .got hold the bit patterns.
void verify_fp16_cells(const Fp16Problem& p, const std::vector<Cell>& cells, std::span<const uint8_t> c,
                       Outcome& out);

}  // namespace ork::tools
