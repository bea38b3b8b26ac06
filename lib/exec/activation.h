// The rule for activations between matmuls (docs/execution.md "Activations"): what makes a
// whole chain of matmuls a function, so the executor's output can be checked bit for bit
// against the CPU reference running the same model.
//
// Integer models (int8, int4): a matmul's int32 output c becomes an activation
//   a = clamp(round_half_even(c / 2^shift), lo, hi)   lo, hi = -128, 127 (int8), -8, 7 (int4)
// computed exactly in integers. An input with several sources is their sum in the listed
// order, clamped to [lo, hi] after every add (saturating).
// fp16 models: the fp32 output c becomes a = fp16(c * 2^-shift), rounded to nearest even
// (the scaling is exact in fp32 unless it underflows); the sum of several sources is
// fp16(float(acc) + float(next)) in the listed order.
// Activations are held one element per int8_t (integer models) or one binary16 bit pattern
// per uint16_t (fp16); int4 activations are packed into nibbles only for the NPU call.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "lib/matmul/plan.h"

namespace ork::exec {

// An activation: rows x width elements, row-major. Integer models use `i8`, fp16 `f16`.
struct Activation {
  int64_t rows = 0, width = 0;
  std::vector<int8_t> i8;
  std::vector<uint16_t> f16;
};

int32_t round_shift(int32_t c, int shift);  // round_half_even(c / 2^shift), exact

// The matmul output (int32_t[] for integer models, float[] for fp16) -> an activation.
void requantise(matmul::DType dtype, const void* c, int64_t rows, int64_t width, int shift, Activation& out);

// Sum of sources in order (the rules above). All have the same shape.
void combine(matmul::DType dtype, std::span<const Activation* const> sources, Activation& out);

// The A operand of the NPU call: int8/fp16 as held; int4 packed two per byte.
std::vector<uint8_t> operand_bytes(matmul::DType dtype, const Activation& a);

// Bytes of a matmul output of rows x n (int32 or fp32).
inline int64_t output_bytes(int64_t rows, int64_t n) { return rows * n * 4; }

// FNV-1a (64-bit) over bytes: a fingerprint of every matmul output, compared with the
// reference's, and the packed model file's checksums. The offset basis is FNV's
// 14695981039346656037 and the prime 1099511628211 (Fowler, Noll, Vo: "FNV hash",
// http://www.isthe.com/chongo/tech/comp/fnv/), so any standard FNV-1a tool agrees; the basis
// was once one digit short (1469598103934665603), which packed model version 1 used.
inline constexpr uint64_t kFnvOffsetBasis = 14695981039346656037ull;
uint64_t fingerprint(std::span<const uint8_t> bytes, uint64_t h = kFnvOffsetBasis);

}  // namespace ork::exec
