// fp16_matmul.h. Built with -ffp-contract=off (meson.build): `acc + a*b` stays two roundings
// of which the product's is exact, as in the oracle.
#include "lib/ref/fp16_matmul.h"

#include <string>
#include <vector>

#include "driver/common/fp16.h"

namespace ork::ref {
namespace {

// Row m of C in fp32, the oracle's order per cell; `acc` and `total` are N-long scratch.
void row_fp32(std::span<const uint16_t> a, const std::vector<float>& bf, Dims d, int64_t m, int64_t slice_k,
              float* acc, float* total) {
  const int64_t n_len = d.n;
  for (int64_t k0 = 0; k0 < d.k; k0 += slice_k) {
    const int64_t k1 = k0 + slice_k < d.k ? k0 + slice_k : d.k;
    for (int64_t n = 0; n < n_len; ++n) acc[n] = 0.0f;
    for (int64_t k = k0; k < k1; ++k) {
      const float av = half_to_float(a[m * d.k + k]);
      const float* brow = bf.data() + k * n_len;
      for (int64_t n = 0; n < n_len; ++n) acc[n] = acc[n] + av * brow[n];
    }
    if (k0 == 0) {
      for (int64_t n = 0; n < n_len; ++n) total[n] = acc[n];
    } else {
      for (int64_t n = 0; n < n_len; ++n) total[n] = total[n] + acc[n];
    }
  }
}

template <class Out, class Store>
Status run(std::span<const uint16_t> a, std::span<const uint16_t> b, std::span<Out> c, Dims d, int64_t slice_k,
           Store store) {
  if (Status s = check_operands(d, a.size(), b.size(), c.size()); !s) return s;
  if (slice_k < 1) return make_error(-EINVAL, "slice_k = " + std::to_string(slice_k) + ": must be >= 1");
  std::vector<float> bf(b.size());
  for (size_t i = 0; i < b.size(); ++i) bf[i] = half_to_float(b[i]);
  std::vector<float> acc(static_cast<size_t>(d.n)), total(static_cast<size_t>(d.n));
  for (int64_t m = 0; m < d.m; ++m) {
    row_fp32(a, bf, d, m, slice_k, acc.data(), total.data());
    for (int64_t n = 0; n < d.n; ++n) store(c[m * d.n + n], total[n]);
  }
  return {};
}

}  // namespace

Status matmul_fp16_rows(std::span<const uint16_t> a, std::span<const uint16_t> b, std::span<float> c, Dims d,
                        int64_t slice_k) {
  return run(a, b, c, d, slice_k, [](float& o, float v) { o = v; });
}

Status matmul_fp16_rows_to_fp16(std::span<const uint16_t> a, std::span<const uint16_t> b,
                                std::span<uint16_t> c, Dims d, int64_t slice_k) {
  return run(a, b, c, d, slice_k, [](uint16_t& o, float v) { o = float_to_half(v); });
}

}  // namespace ork::ref
