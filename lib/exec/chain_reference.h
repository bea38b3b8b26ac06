// The CPU reference of a whole model (docs/execution.md "Checking"): the same chain of
// matmuls and activations, computed by lib/ref from weights read back out of the packed file
// with plain reads (not the loader) and unpacked through the layout's index functions, one
// token after the other (token t's input includes token t-1's output, as in decoding).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "driver/common/result.h"
#include "lib/exec/activation.h"
#include "lib/exec/pack_file.h"

namespace ork::exec {

struct ChainResult {
  // prints[token][layer * matmuls + j]: fingerprint of matmul j's raw output (int32/fp32).
  std::vector<std::vector<uint64_t>> prints;
  std::vector<Activation> outputs;  // per token: the last layer's output
};

// C (rows x n, int32 or fp32) = A x W, the oracle's bytes (lib/ref): int8 and int4 through
// the fast int8 path (int4 values checked in -8..7 first: matmul_int4_fast, lib/ref/int4.h),
// fp16 in the oracle's slice order through the cpu backend's row path (matmul_fp16_rows,
// lib/ref/fp16_matmul.h: the oracle's bytes, proven in tests/lib/ref/fp16_matmul_test.cpp;
// the oracle's per-cell loop was most of an fp16 chain test's time). W row-major as
// unpack_weights gives it.
Status reference_matmul(matmul::DType dtype, const Activation& a, std::span<const uint8_t> w_row_major,
                        int64_t k, int64_t n, std::vector<uint8_t>& c);

Result<ChainResult> reference_chain(const std::string& path, const PackedModel& model, int64_t m, int64_t tokens);

// Compares an executor's result with the reference's; the message names the first
// token, layer and matmul that differ. Exact bytes.
Status compare_chains(const PackedModel& model, const ChainResult& got, const ChainResult& want);

}  // namespace ork::exec
