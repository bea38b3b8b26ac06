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

}  // namespace ork::tools
