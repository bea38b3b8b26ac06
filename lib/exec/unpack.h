// Native packed weights back to row-major K x N (the inverse of lib/matmul pack_weights),
// for the CPU reference and the cpu backend. Written from the index functions of
// lib/matmul/layout.h (the layout's specification), not from the packing loops, so a
// packing bug cannot hide in both directions at once.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "driver/common/result.h"
#include "lib/matmul/plan.h"

namespace ork::exec {

// `out`: int8_t[K*N], binary16 uint16_t[K*N] or int4 one value per int8_t (-8..7) — the
// operand formats of the lib/ref oracle. `slice_k`: int4's K-slice width the layout has
// (a packed tensor's PackedTensor::slice_k; 0 = the dtype's).
Status unpack_weights(matmul::DType dtype, int64_t k, int64_t n, std::span<const uint8_t> native,
                      std::vector<uint8_t>& out, int64_t slice_k = 0);

}  // namespace ork::exec
