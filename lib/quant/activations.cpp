#include "lib/quant/activations.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>

#include <fmt/format.h>

#include "lib/quant/arith.h"

namespace ork::quant {
namespace {

Status check_call(std::span<const float> a, int64_t m, int64_t k, const ActScheme& s) {
  if (s.bits != Bits::int8 && s.bits != Bits::int4)
    return make_error(-EINVAL, fmt::format("activation bits = {}: expected 8 or 4", static_cast<int>(s.bits)));
  if (a.size() != static_cast<size_t>(m * k))
    return make_error(-EINVAL, fmt::format("A holds {} floats, M x K = {}", a.size(), m * k));
  return Status::success();
}

QuantActivations empty_result(int64_t m, int64_t k, const ActScheme& s) {
  return QuantActivations{.m = m, .k = k, .scheme = s, .codes = std::vector<int8_t>(static_cast<size_t>(m * k)),
                          .scales = std::vector<float>(static_cast<size_t>(s.per_row ? m : 1), 0.0f)};
}

}  // namespace

Result<QuantActivations> quantise_activations(std::span<const float> a, int64_t m, int64_t k, const ActScheme& s) {
  return quantise_activations(a, m, k, s, detail::best_act_tier());
}

// Two passes over A: each row's absmax, which also tells whether the row is finite (the
// scalar check only runs when one is not, to name the first bad element), then the codes.
Result<QuantActivations> quantise_activations(std::span<const float> a, int64_t m, int64_t k, const ActScheme& s,
                                              detail::ActTier tier) {
  if (auto st = check_call(a, m, k, s); !st) return st.error();
  QuantActivations q = empty_result(m, k, s);
  uint32_t all = 0;
  for (int64_t i = 0; i < m; ++i) {
    const uint32_t row = detail::absmax_bits(a.data() + i * k, k, tier);
    all = std::max(all, row);
    if (s.per_row) q.scales[static_cast<size_t>(i)] = scale_from_absmax(std::bit_cast<float>(row), s.bits);
  }
  if (all > detail::kMaxFiniteBits)
    if (auto st = check_finite(a, m, k, "A"); !st) return st.error();
  if (!s.per_row) q.scales[0] = scale_from_absmax(std::bit_cast<float>(all), s.bits);
  for (int64_t i = 0; i < m; ++i)
    detail::quantise_row(a.data() + i * k, k, q.scale(i), s.bits, q.codes.data() + i * k, tier);
  return q;
}

Result<QuantActivations> quantise_activations_scalar(std::span<const float> a, int64_t m, int64_t k,
                                                     const ActScheme& s) {
  if (auto st = check_call(a, m, k, s); !st) return st.error();
  if (auto st = check_finite(a, m, k, "A"); !st) return st.error();
  QuantActivations q = empty_result(m, k, s);
  for (int64_t i = 0; i < m; ++i) {
    float& amax = q.scales[s.per_row ? static_cast<size_t>(i) : 0];
    for (int64_t j = 0; j < k; ++j) amax = std::max(amax, std::fabs(a[static_cast<size_t>(i * k + j)]));
  }
  for (float& x : q.scales) x = scale_from_absmax(x, s.bits);
  for (int64_t i = 0; i < m; ++i) {
    const float sc = q.scale(i);
    for (int64_t j = 0; j < k; ++j)
      q.codes[static_cast<size_t>(i * k + j)] = quantise_value(a[static_cast<size_t>(i * k + j)], sc, s.bits);
  }
  return q;
}

void copy_columns(const QuantActivations& q, int64_t k0, int64_t cols, std::span<int8_t> out) {
  for (int64_t i = 0; i < q.m; ++i)
    std::memcpy(out.data() + i * cols, q.codes.data() + i * q.k + k0, static_cast<size_t>(cols));
}

}  // namespace ork::quant
