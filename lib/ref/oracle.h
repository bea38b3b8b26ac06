// The CPU reference oracle: plain, obviously-correct loops that define what every backend
// (emulated NPU, real NPU, the fast CPU path) must return, bit for bit.
// All matrices are row-major: A is M x K, B is K x N, C is M x N.
#pragma once

#include <cstdint>
#include <span>

#include "driver/common/result.h"

namespace ork::ref {

struct Dims {
  int64_t m = 0, k = 0, n = 0;
};

// int8 x int8 -> int32. Exact: |a*b| <= 2^14, so any K < 2^17 sums without overflow; past
// that the result is the exact sum modulo 2^32 (two's complement), which is also what the
// host's int32 accumulation of K-slice partials gives (layout.cpp adds modulo 2^32).
Status matmul_int8(std::span<const int8_t> a, std::span<const int8_t> b, std::span<int32_t> c,
                   Dims d);

// fp16 x fp16 -> fp32 with the defined accumulation order: acc = 0.0f; for k = 0..K-1
// increasing: acc = acc + float(a) * float(b). Each product is exact in fp32 (11-bit
// significands, exponents within range); each add rounds to nearest even; no FMA
// (this file is compiled with -ffp-contract=off). Operands are binary16 bit patterns.
Status matmul_fp16(std::span<const uint16_t> a, std::span<const uint16_t> b, std::span<float> c,
                   Dims d);
// The same, then fp32 -> fp16 round-to-nearest-even (the OUT_CVT FP32TOFP16 output).
Status matmul_fp16_to_fp16(std::span<const uint16_t> a, std::span<const uint16_t> b,
                           std::span<uint16_t> c, Dims d);

// fp16 with K cut into slices of `slice_k` (the NPU's K-slices, docs/dtypes.md "fp16"):
// within a slice the order above (acc = 0.0f, k increasing, no FMA); then the slice
// partials are added in slice order in fp32: total = p0; total = total + p1; ... For
// slice_k >= K this is exactly matmul_fp16. The emulated and real NPU paths return these
// bytes when called with the plan's slice width (lib/matmul slice_width / Plan::slice_k).
Status matmul_fp16_sliced(std::span<const uint16_t> a, std::span<const uint16_t> b,
                          std::span<float> c, Dims d, int64_t slice_k);
// One cell of matmul_fp16_sliced, the very code its loop runs (not inlined anywhere): row
// `a` (K halves) times the column `b` (element k at b[k * ldb]). Which NaN a sum returns when
// several operands are NaN is the compiled code's choice of operand order, so a fast path
// recomputes its NaN cells here to return the oracle's payloads (fp16_matmul.h).
float fp16_sliced_cell(const uint16_t* a, const uint16_t* b, int64_t ldb, int64_t k, int64_t slice_k);
// The same, rounded once at the end to fp16 (nearest even).
Status matmul_fp16_sliced_to_fp16(std::span<const uint16_t> a, std::span<const uint16_t> b,
                                  std::span<uint16_t> c, Dims d, int64_t slice_k);

// int4 x int4 -> int32. Operands are one value per int8, each in -8..7 (checked).
Status matmul_int4(std::span<const int8_t> a, std::span<const int8_t> b, std::span<int32_t> c,
                   Dims d);

// Checks shared by the oracle and the fast path: dimensions >= 1 and span sizes that match.
Status check_operands(Dims d, size_t a_size, size_t b_size, size_t c_size);

}  // namespace ork::ref
