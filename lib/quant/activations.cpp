#include "lib/quant/activations.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <vector>

#include <fmt/format.h>

#include "lib/quant/arith.h"
#include "lib/ref/split.h"

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
  QuantActivations q;
  if (auto st = quantise_activations(a, m, k, s, tier, q); !st) return st.error();
  return q;
}

Status quantise_activations(std::span<const float> a, int64_t m, int64_t k, const ActScheme& s, detail::ActTier tier,
                            QuantActivations& q, int threads) {
  if (auto st = check_call(a, m, k, s); !st) return st;
  q.m = m, q.k = k, q.scheme = s;
  q.codes.resize(static_cast<size_t>(m * k));  // every code is written below
  q.scales.assign(static_cast<size_t>(s.per_row ? m : 1), 0.0f);
  std::vector<uint32_t> row_max(static_cast<size_t>(m));
  const int threads_used = detail::a_pass_threads(m, k, threads);
  ref::detail::for_panel_chunks(threads_used, m, [&](int64_t r0, int64_t r1) {
    for (int64_t i = r0; i < r1; ++i) row_max[static_cast<size_t>(i)] = detail::absmax_bits(a.data() + i * k, k, tier);
  }, detail::kAPassRowsPerGrab);
  const uint32_t all = *std::max_element(row_max.begin(), row_max.end());
  if (all > detail::kMaxFiniteBits)
    if (auto st = check_finite(a, m, k, "A"); !st) return st;
  for (int64_t i = 0; i < m && s.per_row; ++i)
    q.scales[static_cast<size_t>(i)] = scale_from_absmax(std::bit_cast<float>(row_max[static_cast<size_t>(i)]), s.bits);
  if (!s.per_row) q.scales[0] = scale_from_absmax(std::bit_cast<float>(all), s.bits);
  ref::detail::for_panel_chunks(threads_used, m, [&](int64_t r0, int64_t r1) {
    for (int64_t i = r0; i < r1; ++i)
      detail::quantise_row(a.data() + i * k, k, q.scale(i), s.bits, q.codes.data() + i * k, tier);
  }, detail::kAPassRowsPerGrab);
  return Status::success();
}

// Both passes over A on the kept threads: alone, the calling thread took about 0.4 ms at
// M = 512, K = 2048 (4 MiB), where the int8 call that follows takes about 3 ms on two.
int detail::a_pass_threads(int64_t m, int64_t k, int most) {
  const int t = ref::detail::split_threads(0, 0, m * k * static_cast<int64_t>(sizeof(float)), true, m);
  return most > 0 ? std::min(t, most) : t;
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
