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
  uniform,    // uniform over -8..7 (synthetic.h uniform_int4_weights): the synthetic models' draw before
  synthetic,  // the synthetic model's own: shaped as GGUF Q4_0 quantises normal values (q4_0_like_weights)
};
// "floor", "uniform", "synthetic"; "q4_0" names synthetic too (its weights are Q4_0-shaped).
Result<Int4Weights> parse_int4_weights(const std::string& name);
const char* int4_weights_name(Int4Weights kind);

// Per matmul of `desc` (an int4 model), the K-slice width of layer `layer`'s weights of
// `kind` (int4_safe_slice_k); floor gives 0 (the dtype's) for every matmul. The weights are
// the ones ork_pack --synthetic writes for (seed, layer, matmul) (synthetic: exactly;
// uniform: the same seeds, the previous draw).
Result<std::vector<int64_t>> int4_slice_widths(const ModelDesc& desc, Int4Weights kind, int layer, uint64_t seed);

}  // namespace ork::exec
