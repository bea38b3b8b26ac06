// Quantised reference cells (verify_quant.h). -ffp-contract=off (meson.build): the
// dequantisation's multiplies and adds must not fuse.
#include "tools/sparse_check/verify_quant.h"

#include <cstring>

#include "lib/quant/reference.h"

namespace ork::tools {

void verify_quant_cells(const QuantProblem& p, const std::vector<Cell>& cells, std::span<const float> c,
                        Outcome& out) {
  namespace qr = quant::reference;
  const auto sw = qr::weight_scales(p.w, p.k, p.n, p.weights);
  const auto qw = qr::weight_codes(p.w, p.k, p.n, p.weights, sw);
  const auto sa = qr::activation_scales(p.a, p.m, p.k, p.activations);
  const auto qa = qr::activation_codes(p.a, p.m, p.k, p.activations, sa);
  const int64_t gw = quant::group_width(p.weights, p.k), groups = quant::group_count(p.weights, p.k);
  for (const Cell& cell : cells) {
    float t = 0.0f;
    for (int64_t g = 0; g < groups; ++g) {
      int32_t acc = 0;
      for (int64_t k = g * gw; k < std::min(p.k, (g + 1) * gw); ++k)
        acc += int32_t{qa[static_cast<size_t>(cell.m * p.k + k)]} * qw[static_cast<size_t>(k * p.n + cell.n)];
      const float part = static_cast<float>(acc) * sw[static_cast<size_t>(g * p.n + cell.n)];
      t = g == 0 ? part : t + part;
    }
    const float want = t * sa[p.activations.per_row ? static_cast<size_t>(cell.m) : 0];
    const float got = c[static_cast<size_t>(cell.m * p.n + cell.n)];
    ++out.checked;
    uint32_t wb, gb;
    std::memcpy(&wb, &want, 4);
    std::memcpy(&gb, &got, 4);
    if (wb == gb) continue;
    ++out.mismatches;
    if (out.first.size() < kMaxReportedMismatches)
      out.first.push_back({cell, static_cast<int64_t>(wb), static_cast<int32_t>(gb)});
  }
}

}  // namespace ork::tools
