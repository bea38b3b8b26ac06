// Weights as engines hold them, packed straight into the native layout (docs/dtypes.md
// "Weight layouts engines hold"), and the native layout read back (packed-weight import on
// the cpu backend, the int4 stream the w4a8 copy is made from).
#pragma once

#include <cstdint>
#include <span>

#include "driver/common/result.h"
#include "lib/matmul/plan.h"

namespace ork::matmul {

// The version of the native weight bytes as a whole: the block layouts of pack_b_int8 /
// pack_b_fp16 / pack_b_int4 (weight_index), the zero padding, and the planner's slice widths
// and padded sizes (plan.cpp slice_width, kp, np). Packed-weight blobs carry it; bump it
// whenever any of these changes the bytes for some (dtype, K, N).
// 2: int8 K-slices evened out up to 3072 (plan.h slice_width), where 1 had 2048 and a rest.
inline constexpr uint32_t kWeightLayoutVersion = 2;

// K x N (row k holds the N outputs of input k) or N x K (row n holds output n's K inputs:
// ggml's and PyTorch nn.Linear's layout), rows `row_stride` elements apart (int4: nibbles of
// the packed stream, element (row, col) = nibble row * stride + col, low nibble first).
struct WeightSource {
  const void* data = nullptr;
  bool n_by_k = false;
  int64_t row_stride = 0;  // 0 = dense (the row length)
};

// Elements of one row of the source layout: N for K x N, K for N x K.
inline int64_t source_row_length(int64_t k, int64_t n, const WeightSource& s) { return s.n_by_k ? k : n; }
// The stride in use: row_stride, or the row length when it is 0.
inline int64_t source_stride(int64_t k, int64_t n, const WeightSource& s) {
  return s.row_stride == 0 ? source_row_length(k, n, s) : s.row_stride;
}
// Elements (int4: nibbles) the source spans from its first: (rows - 1) * stride + row length.
inline int64_t source_span(int64_t k, int64_t n, const WeightSource& s) {
  const int64_t rows = s.n_by_k ? n : k;
  return (rows - 1) * source_stride(k, n, s) + source_row_length(k, n, s);
}

// Packs the source into `out` (plan.b_bytes() bytes), zero padding to kp and np: the same
// bytes pack_weights gives for the dense K x N matrix of the same values. No intermediate
// K x N copy: K x N int8 goes through the strided 32x32 transposes of pack_b_int8, N x K
// copies contiguous runs of 32 K values (the native block holds each kernel's K values
// contiguously), fp16 / int4 K x N gather per element.
Status pack_b_source(const Plan& plan, const WeightSource& src, std::span<uint8_t> out);

// The native weights of `plan` back to dense K x N row-major: int8_t[K*N], uint16_t[K*N]
// or the int4 nibble stream (ceil(K*N/2) bytes). `out` must hold exactly that many bytes.
Status unpack_b_native(const Plan& plan, std::span<const uint8_t> native, std::span<uint8_t> out);

}  // namespace ork::matmul
