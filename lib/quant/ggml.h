// ggml's block formats imported exactly (docs/quantisation.md "ggml blocks"). Facts from
// ggml's public source (github.com/ggml-org/ggml, src/ggml-common.h: block_q4_0, block_q4_1,
// block_q8_0, block_q8_1; src/ggml-quants.c: dequantize_row_q4_0 / _q4_1 / _q8_0):
//   every format holds 32 values along K per block (QK4_0 = QK4_1 = QK8_0 = QK8_1 = 32);
//   Q4_0 (18 bytes): fp16 d, 16 bytes qs; value j < 16 = ((qs[j] & 0xf) - 8) * d,
//                    value j + 16 = ((qs[j] >> 4) - 8) * d
//   Q4_1 (20 bytes): fp16 d, fp16 m, 16 bytes qs; value = q * d + m, q the nibble 0..15 (same
//                    nibble order as Q4_0)
//   Q8_0 (34 bytes): fp16 d, int8 qs[32]; value = qs[j] * d
//   Q8_1 (36 bytes): fp16 d, fp16 s (= d * sum(qs), used by ggml only when Q8_1 holds
//                    activations), int8 qs[32]; value = qs[j] * d
// A weight tensor is N rows (output features) of K / 32 blocks each, blocks of a row in
// increasing K, fp16 little-endian. The type numbers are ggml's enum ggml_type.
#pragma once

#include <cstdint>
#include <span>

#include "driver/common/result.h"
#include "lib/quant/qweights.h"

namespace ork::quant::ggml {

inline constexpr int64_t kBlock = 32;  // values per block, along K
enum Type : int32_t { q4_0 = 2, q4_1 = 3, q8_0 = 8, q8_1 = 9 };

const char* type_name(int32_t type);
// Bytes per block of `type`, or 0 when the type is not one of the four.
int64_t block_bytes(int32_t type);

// The blocks of an N x K ggml weight as libork quantised weights (codes K x N, group 32):
// Q8_0 / Q8_1 int8 codes (full range -128..127), Q4_0 int4 codes -8..7, Q4_1 int4 codes
// q - 8 with code offset 8 and the m term; signed scales. Refuses an unknown type, K not a
// multiple of 32, a byte count that is not N * K/32 blocks, and non-finite d / m (naming the
// row and block).
Result<QuantWeights> import_blocks(int32_t type, std::span<const uint8_t> blocks, int64_t k, int64_t n);

}  // namespace ork::quant::ggml
