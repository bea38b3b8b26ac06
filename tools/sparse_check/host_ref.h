// The host reference sparse_check compares against: full-K dot products in int64, written
// independently of lib/ref so that a bug there cannot hide a bug in the NPU path.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace ork::tools {

// sum_k a[m][k] * w[k][n] over the whole K, exactly (int64). a: M x K, w: K x N, row-major.
int64_t host_dot(std::span<const int8_t> a, std::span<const int8_t> w, int64_t k, int64_t n,
                 int64_t row, int64_t col);

// One full row of C: out[j] = host_dot(..., row, j) for every j in 0..N-1. Rows of W are
// read in order (cache-friendly); sums are exact in int64.
void host_row(std::span<const int8_t> a, std::span<const int8_t> w, int64_t k, int64_t n,
              int64_t row, std::span<int64_t> out);

// Selected columns of W, gathered once into contiguous K-long vectors: sampled cells then
// read W contiguously instead of with a stride of N bytes per term (which misses the cache
// on every term at N >= 64: ~100x slower at K = 18944, N = 2048).
class WColumns {
 public:
  // `cols` sorted, distinct, each < N.
  WColumns(std::span<const int8_t> w, int64_t k, int64_t n, std::vector<int64_t> cols);
  // host_dot(a, w, k, n, row, col) for a col in `cols`.
  int64_t dot(std::span<const int8_t> a, int64_t row, int64_t col) const;

 private:
  int64_t k_;
  std::vector<int64_t> cols_;
  std::vector<int8_t> block_;  // cols_.size() x K: column j of the selection at j * K
};

}  // namespace ork::tools
