#include "lib/quant/reference.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "lib/quant/arith.h"

namespace ork::quant::reference {
namespace {
size_t at(int64_t row, int64_t cols, int64_t col) { return static_cast<size_t>(row * cols + col); }
}  // namespace

std::vector<float> weight_scales(std::span<const float> w, int64_t k, int64_t n, const WeightScheme& s) {
  const int64_t gw = group_width(s, k), groups = group_count(s, k);
  std::vector<float> scales(static_cast<size_t>(groups * n));
  for (int64_t g = 0; g < groups; ++g)
    for (int64_t j = 0; j < n; ++j) {
      float amax = 0.0f;
      for (int64_t i = g * gw; i < std::min(k, (g + 1) * gw); ++i) amax = std::max(amax, std::fabs(w[at(i, n, j)]));
      scales[at(g, n, j)] = scale_from_absmax(amax, s.bits);
    }
  return scales;
}

std::vector<int8_t> weight_codes(std::span<const float> w, int64_t k, int64_t n, const WeightScheme& s,
                                 std::span<const float> scales) {
  const int64_t gw = group_width(s, k);
  std::vector<int8_t> q(static_cast<size_t>(k * n));
  for (int64_t i = 0; i < k; ++i)
    for (int64_t j = 0; j < n; ++j) q[at(i, n, j)] = quantise_value(w[at(i, n, j)], scales[at(i / gw, n, j)], s.bits);
  return q;
}

std::vector<float> activation_scales(std::span<const float> a, int64_t m, int64_t k, const ActScheme& s) {
  std::vector<float> amax(static_cast<size_t>(s.per_row ? m : 1), 0.0f);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < k; ++j) {
      float& x = amax[s.per_row ? static_cast<size_t>(i) : 0];
      x = std::max(x, std::fabs(a[at(i, k, j)]));
    }
  for (float& x : amax) x = scale_from_absmax(x, s.bits);
  return amax;
}

std::vector<int8_t> activation_codes(std::span<const float> a, int64_t m, int64_t k, const ActScheme& s,
                                     std::span<const float> scales) {
  std::vector<int8_t> q(static_cast<size_t>(m * k));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < k; ++j)
      q[at(i, k, j)] = quantise_value(a[at(i, k, j)], scales[s.per_row ? static_cast<size_t>(i) : 0], s.bits);
  return q;
}

std::vector<int32_t> group_sums(std::span<const int8_t> qa, std::span<const int8_t> qw, int64_t m, int64_t k,
                                int64_t n, int64_t gw) {
  const int64_t groups = (k + gw - 1) / gw;
  std::vector<int32_t> acc(static_cast<size_t>(groups * m * n), 0);
  for (int64_t g = 0; g < groups; ++g)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        int32_t sum = 0;  // exact: |sum| <= 127 * 127 * kMaxPerChannelK < 2^31
        for (int64_t x = g * gw; x < std::min(k, (g + 1) * gw); ++x)
          sum += int32_t{qa[at(i, k, x)]} * int32_t{qw[at(x, n, j)]};
        acc[static_cast<size_t>((g * m + i) * n + j)] = sum;
      }
  return acc;
}

Result<std::vector<float>> qmatmul_codes(std::span<const float> a, int64_t m, std::span<const int32_t> q,
                                         std::span<const float> d, std::span<const float> mins, int64_t k,
                                         int64_t n, int64_t gw, const ActScheme& as) {
  if (m < 1 || k < 1 || n < 1 || gw < 1) return make_error(-EINVAL, "reference qmatmul_codes: M, K, N, group must be >= 1");
  const int64_t groups = (k + gw - 1) / gw;
  if (a.size() != static_cast<size_t>(m * k) || q.size() != static_cast<size_t>(k * n) ||
      d.size() != static_cast<size_t>(groups * n) || (!mins.empty() && mins.size() != d.size()))
    return make_error(-EINVAL, "reference qmatmul_codes: span sizes do not match M x K, K x N and groups x N");
  const auto sa = activation_scales(a, m, k, as);
  const auto qa = activation_codes(a, m, k, as, sa);
  std::vector<float> c(static_cast<size_t>(m * n));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      float t = 0.0f;
      for (int64_t g = 0; g < groups; ++g) {
        int32_t acc = 0, sum = 0;  // exact: |acc| <= 128 * 127 * kMaxPerChannelK < 2^31
        for (int64_t x = g * gw; x < std::min(k, (g + 1) * gw); ++x) {
          acc += int32_t{qa[at(i, k, x)]} * q[at(x, n, j)];
          sum += qa[at(i, k, x)];
        }
        float u = static_cast<float>(acc) * d[at(g, n, j)];
        if (!mins.empty()) u = u + static_cast<float>(sum) * mins[at(g, n, j)];
        t = g == 0 ? u : t + u;
      }
      c[at(i, n, j)] = t * sa[as.per_row ? static_cast<size_t>(i) : 0];
    }
  return c;
}

Result<std::vector<float>> qmatmul(std::span<const float> a, std::span<const float> w, int64_t m, int64_t k,
                                   int64_t n, const WeightScheme& ws, const ActScheme& as) {
  if (auto s = check_weight_scheme(ws, k); !s) return s.error();
  if (m < 1 || n < 1) return make_error(-EINVAL, fmt::format("M = {}, N = {}: must be >= 1", m, n));
  if (a.size() != static_cast<size_t>(m * k) || w.size() != static_cast<size_t>(k * n))
    return make_error(-EINVAL, "reference qmatmul: span sizes do not match M x K and K x N");
  const auto sw = weight_scales(w, k, n, ws);
  const auto qw = weight_codes(w, k, n, ws, sw);
  const std::vector<int32_t> q(qw.begin(), qw.end());
  return qmatmul_codes(a, m, q, sw, {}, k, n, group_width(ws, k), as);
}

}  // namespace ork::quant::reference
