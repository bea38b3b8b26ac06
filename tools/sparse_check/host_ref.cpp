#include "tools/sparse_check/host_ref.h"

#include <algorithm>
#include <vector>

namespace ork::tools {

namespace {
// |a*w| <= 128*128 = 2^14, so an int32 partial sum over 2^16 terms stays below 2^30: sums
// are accumulated in int32 over chunks of this many K (fast, vectorisable) and added to the
// int64 total between chunks (exact for any K).
constexpr int64_t kInt32SafeK = int64_t{1} << 16;
}  // namespace

int64_t host_dot(std::span<const int8_t> a, std::span<const int8_t> w, int64_t k, int64_t n,
                 int64_t row, int64_t col) {
  const int8_t* a_row = a.data() + row * k;
  int64_t sum = 0;
  for (int64_t i = 0; i < k; ++i)
    sum += int64_t{a_row[i]} * int64_t{w[static_cast<size_t>(i * n + col)]};
  return sum;
}

void host_row(std::span<const int8_t> a, std::span<const int8_t> w, int64_t k, int64_t n,
              int64_t row, std::span<int64_t> out) {
  std::fill(out.begin(), out.end(), 0);
  std::vector<int32_t> partial(static_cast<size_t>(n));
  const int8_t* a_row = a.data() + row * k;
  for (int64_t k0 = 0; k0 < k; k0 += kInt32SafeK) {
    std::fill(partial.begin(), partial.end(), 0);
    const int64_t k1 = std::min(k, k0 + kInt32SafeK);
    for (int64_t i = k0; i < k1; ++i) {
      const int32_t av = a_row[i];
      const int8_t* w_row = w.data() + i * n;
      for (int64_t j = 0; j < n; ++j) partial[j] += av * int32_t{w_row[j]};
    }
    for (int64_t j = 0; j < n; ++j) out[j] += partial[j];
  }
}

WColumns::WColumns(std::span<const int8_t> w, int64_t k, int64_t n, std::vector<int64_t> cols)
    : k_(k), cols_(std::move(cols)), block_(cols_.size() * static_cast<size_t>(k)) {
  // Row by row through W (sequential), scattering into the selected columns.
  for (int64_t i = 0; i < k; ++i) {
    const int8_t* w_row = w.data() + i * n;
    for (size_t j = 0; j < cols_.size(); ++j) block_[j * k + i] = w_row[cols_[j]];
  }
}

int64_t WColumns::dot(std::span<const int8_t> a, int64_t row, int64_t col) const {
  const auto j = std::lower_bound(cols_.begin(), cols_.end(), col) - cols_.begin();
  const int8_t* a_row = a.data() + row * k_;
  const int8_t* w_col = block_.data() + j * k_;
  int64_t sum = 0;
  for (int64_t i0 = 0; i0 < k_; i0 += kInt32SafeK) {
    const int64_t i1 = std::min(k_, i0 + kInt32SafeK);
    int32_t partial = 0;
    for (int64_t i = i0; i < i1; ++i) partial += int32_t{a_row[i]} * int32_t{w_col[i]};
    sum += partial;
  }
  return sum;
}

}  // namespace ork::tools
