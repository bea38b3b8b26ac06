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

// Row-major K x N weights in the dtype's host format: int8 over -128..127, int4 nibbles
// shaped as GGUF Q4_0 quantises normal values (q4_0_like_weights), fp16 multiples of 1/128 in
// [-1, 1). Deterministic for (seed, layer, matmul).
std::vector<uint8_t> synthetic_weights(const ModelDesc& desc, int layer, int matmul, uint64_t seed);
// The same into `out`, its memory reused (a writer's loop over tensors).
void synthetic_weights_into(const ModelDesc& desc, int layer, int matmul, uint64_t seed, std::vector<uint8_t>& out);
// The generator's seed of tensor (layer, matmul) of a model of seed `seed`.
uint64_t synthetic_seed(uint64_t seed, int layer, int matmul);

// K x N int4 weights (the nibble stream, element k*N + n) as Q4_0 quantises values of about
// N(0, 1): for each column, blocks of 32 consecutive k share one scale d = v / -8, v the
// block's value of largest magnitude (the first of them), and q = min(7, floor(x / d + 1/2)),
// so every block holds one -8 (the Q4_0 block and its rule from ggml's public source,
// github.com/ggml-org/ggml, src/ggml-common.h block_q4_0 and src/ggml-quants.c
// quantize_row_q4_0_ref; the facts are used, the code is ours). The values are sums of 12
// uniform 16-bit integers from splitmix64(seed), centred (the Irwin-Hall approximation of
// a normal: tails cut at 6 sd, where 32-value blocks never reach), so x / d is a ratio of
// integers and the codes are exact on every machine, no libm in them.
std::vector<uint8_t> q4_0_like_weights(int64_t k, int64_t n, uint64_t seed);
// K x N int4 weights uniform over all 16 codes -8..7 from splitmix64(seed): what the synthetic
// int4 models drew before (mean |w| = 4, about the worst the int16 bound meets in practice).
std::vector<uint8_t> uniform_int4_weights(int64_t k, int64_t n, uint64_t seed);

// Packs a synthetic model into `path`. `progress(done, total)` after each tensor (may be empty).
Status write_synthetic(const std::string& path, const ModelDesc& desc, uint64_t seed,
                       const std::function<void(int64_t, int64_t)>& progress = {});

// Token t's input "x" for the first layer: m rows x hidden, seeded by t (int8/int4 codes
// over the dtype's range, fp16 as the weights).
Activation token_input(const ModelDesc& desc, int64_t m, int64_t token);

}  // namespace ork::exec
