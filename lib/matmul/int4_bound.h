// The int4 K-slice width chosen from the weights (docs/dtypes.md "int4 slices from the
// weights"): an int4 x int4 task writes int16 sums that saturate (docs/hardware.md section
// 9), so a task's K range must keep every possible sum of its products inside int16. The
// weights are known when they are packed and the activations are int4 (-8..7) whatever the
// caller passes, so the bound can use the weights: for one column, with P = the sum of its
// positive weights and Q = the sum of the magnitudes of its negative ones over the task's K
// rows, the largest sum is 7P + 8Q (a = 7 on positive weights, -8 on negative ones) and the
// smallest -(8P + 7Q). Every sum over a subset of those rows, in any order, is inside the same
// range, so a task within the bound never saturates, not even in a partial sum of its own.
#pragma once

#include <cstdint>
#include <span>

#include "lib/matmul/plan.h"

namespace ork::matmul {

// The bound for one column over a K range: P and Q as above.
struct Int4ColumnSums {
  int64_t pos = 0;  // P: sum of the positive weights
  int64_t neg = 0;  // Q: sum of |w| of the negative weights
};
// True when no int4 activation makes the int16 sum leave [-32768, 32767]:
// 7P + 8Q <= 32767 and 8P + 7Q <= 32768.
bool int4_sums_fit_int16(const Int4ColumnSums& s);

// The widest int4 K-slice (a multiple of kKAlign in [kInt4SliceK, kInt4MaxSliceK]) such that
// every window of that many rows starting at a multiple of kKAlign is within the bound for
// every column, so every narrower slice width at any aligned offset is too. `packed` is the
// dense K x N nibble stream (element k*N + n, low nibble first, ceil(K*N/2) bytes); a width
// at or past K means one full-K task. Work: one pass over the weights, then
// O(K/32 x N x log) for the search; memory 2 x (K/32 + 1) x N int32.
Result<int64_t> int4_safe_slice_k(std::span<const uint8_t> packed, int64_t k, int64_t n);

// Checks int4 weights already in the native layout of `layout` (an int4 plan: its K-slices,
// [slice][np/64][kt/32][64][32]) against the bound, slice by slice: every task of any plan of
// these weights has one slice's K range, so no task can saturate when this passes. The error
// names the first slice and column over the bound, its sums and the width. For weights read
// from a file whose width was chosen elsewhere (lib/exec's packed model): one pass over the
// bytes, O(np) int32 of memory.
Status int4_native_slices_fit(const Plan& layout, std::span<const uint8_t> native);

}  // namespace ork::matmul
