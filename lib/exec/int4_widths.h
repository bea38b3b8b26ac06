// The int4 K-slice widths of a model's weights (docs/dtypes.md "int4 slices from the
// weights", lib/matmul/int4_bound.h), for the board projection: each matmul's width is what
// its weights' own bound allows, found on one layer's weights of a chosen kind.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "driver/common/result.h"
#include "lib/exec/model.h"

namespace ork::exec {

enum class Int4Weights {
  floor,      // no weights looked at: the dtype's 480 everywhere
  synthetic,  // the synthetic model's own weights (synthetic.h: uniform over -8..7)
  q4_0,       // shaped like real quantised ones: N(0, 1) values quantised as GGUF Q4_0 does
};
Result<Int4Weights> parse_int4_weights(const std::string& name);  // "floor", "synthetic", "q4_0"
const char* int4_weights_name(Int4Weights kind);

// K x N int4 weights (the nibble stream, element k*N + n) as Q4_0 quantises standard normal
// values: for each column, blocks of 32 consecutive k share one scale d = v / -8, v the
// block's value of largest magnitude, and each q = round(x / d) clamped to -8..7, so every
// block holds one -8 (the Q4_0 block and its scale rule from ggml's public source,
// github.com/ggml-org/ggml, src/ggml-common.h block_q4_0 and src/ggml-quants.c
// quantize_row_q4_0_ref; the facts are used, the code is ours). The normal values come from
// mt19937_64(seed) by Box-Muller: the distribution tests/lib/ggml/synthetic_gguf.py writes
// for its Q4_0 models (normal values, quantised by gguf-py).
std::vector<uint8_t> q4_0_like_weights(int64_t k, int64_t n, uint64_t seed);

// Per matmul of `desc` (an int4 model), the K-slice width of layer `layer`'s weights of
// `kind` (int4_safe_slice_k); floor gives 0 (the dtype's) for every matmul.
Result<std::vector<int64_t>> int4_slice_widths(const ModelDesc& desc, Int4Weights kind, int layer, uint64_t seed);

}  // namespace ork::exec
