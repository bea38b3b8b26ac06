// One NPU plan for all K-groups of a per-group matmul: each group is a K-slice of the group
// width, so one submit computes every group's int32 partial sums into its own output slot
// (the runner's K-slices are the same mechanism, but it adds the slices together; here the
// host keeps them apart and scales each). Pure arithmetic over lib/matmul's plan.
#pragma once

#include <cstdint>

#include "driver/common/result.h"
#include "lib/matmul/plan.h"

namespace ork::quant {

// The plan of A (m x k) x W (k x n) in slices of `group_width` (32, 64 or 128) along K;
// the last slice is shorter (padded to 32) when k % group_width != 0. Slice s = group s.
// Built from make_plan(m, group_width, n): its tasks (row tiles, column split per core, bank
// split for kt = group_width) repeated per slice with k0 = s * group_width. Weights are
// packed by this plan's slices (lib/matmul pack_b_int8); the layout depends on k, n and the
// group width only.
// `dtype`: int8 (w8a8, w4a8 widened) or int4 (w4a4: a group of at most 128 products of
// |q| <= 7 sums to <= 6272, far inside the NPU's int16 partials).
Result<matmul::Plan> group_plan(int64_t m, int64_t k, int64_t n, int64_t group_width, int cores,
                                matmul::DType dtype = matmul::DType::int8);

}  // namespace ork::quant
