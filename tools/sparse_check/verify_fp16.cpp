// fp16 reference cells (verify_fp16.h). -ffp-contract=off (meson.build): the adds must not
// fuse with the products.
#include "tools/sparse_check/verify_fp16.h"

#include <cstring>

#include "driver/common/fp16.h"

namespace ork::tools {

uint32_t fp16_reference_bits(const Fp16Problem& p, int64_t m, int64_t n) {
  float total = 0.0f;
  for (int64_t k0 = 0; k0 < p.k; k0 += p.slice_k) {
    const int64_t k1 = std::min(p.k, k0 + p.slice_k);
    float acc = 0.0f;
    for (int64_t k = k0; k < k1; ++k) {
      const float prod = ork::half_to_float(p.a[m * p.k + k]) * ork::half_to_float(p.w[k * p.n + n]);
      acc = acc + prod;
    }
    total = k0 == 0 ? acc : total + acc;
  }
  if (p.fp16_out) return ork::float_to_half(total);
  uint32_t bits;
  std::memcpy(&bits, &total, 4);
  return bits;
}

void verify_fp16_cells(const Fp16Problem& p, const std::vector<Cell>& cells, std::span<const uint8_t> c,
                       Outcome& out) {
  const size_t eb = p.fp16_out ? 2 : 4;
  for (const Cell& cell : cells) {
    const uint32_t want = fp16_reference_bits(p, cell.m, cell.n);
    uint32_t got = 0;
    std::memcpy(&got, c.data() + static_cast<size_t>(cell.m * p.n + cell.n) * eb, eb);
    ++out.checked;
    if (got == want) continue;
    ++out.mismatches;
    if (out.first.size() < kMaxReportedMismatches)
      out.first.push_back({cell, static_cast<int64_t>(want), static_cast<int32_t>(got)});
  }
}

}  // namespace ork::tools
