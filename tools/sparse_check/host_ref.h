// The host reference sparse_check compares against: full-K dot products in int64, written
// independently of lib/ref so that a bug there cannot hide a bug in the NPU path.
#pragma once

#include <cstdint>
#include <span>

namespace ork::tools {

// sum_k a[m][k] * w[k][n] over the whole K, exactly (int64). a: M x K, w: K x N, row-major.
int64_t host_dot(std::span<const int8_t> a, std::span<const int8_t> w, int64_t k, int64_t n,
                 int64_t row, int64_t col);

// One full row of C: out[j] = host_dot(..., row, j) for every j in 0..N-1. Rows of W are
// read in order (cache-friendly); sums are exact in int64.
void host_row(std::span<const int8_t> a, std::span<const int8_t> w, int64_t k, int64_t n,
              int64_t row, std::span<int64_t> out);

}  // namespace ork::tools
