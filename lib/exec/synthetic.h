// Synthetic models (docs/execution.md "Synthetic models"): the weights of tensor (layer,
// matmul) come from a seeded generator, so any size can be made, packed and checked
// without a download. Also the token inputs every run uses.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "driver/common/result.h"
#include "lib/exec/activation.h"
#include "lib/exec/model.h"

namespace ork::exec {

// Row-major K x N weights in the dtype's host format: int8 over -128..127, int4 nibbles over
// -8..7, fp16 multiples of 1/128 in [-1, 1). Deterministic for (seed, layer, matmul).
std::vector<uint8_t> synthetic_weights(const ModelDesc& desc, int layer, int matmul, uint64_t seed);

// Packs a synthetic model into `path`. `progress(done, total)` after each tensor (may be empty).
Status write_synthetic(const std::string& path, const ModelDesc& desc, uint64_t seed,
                       const std::function<void(int64_t, int64_t)>& progress = {});

// Token t's input "x" for the first layer: m rows x hidden, seeded by t (int8/int4 codes
// over the dtype's range, fp16 as the weights).
Activation token_input(const ModelDesc& desc, int64_t m, int64_t token);

}  // namespace ork::exec
