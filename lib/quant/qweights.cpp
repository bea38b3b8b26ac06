#include "lib/quant/qweights.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include <fmt/format.h>

#include "lib/quant/arith.h"
#include "driver/common/int4.h"

namespace ork::quant {
namespace {

Status check_shape(int64_t k, int64_t n, const WeightScheme& s) {
  if (n < 1) return make_error(-EINVAL, fmt::format("N = {}: must be >= 1", n));
  return check_weight_scheme(s, k);
}

void store(std::vector<uint8_t>& codes, Bits bits, int64_t i, int8_t q) {
  if (bits == Bits::int8) codes[static_cast<size_t>(i)] = static_cast<uint8_t>(q);
  else int4::put(codes.data(), i, q);
}

}  // namespace

int64_t QuantWeights::code_bytes(Bits bits, int64_t k, int64_t n) {
  return bits == Bits::int8 ? k * n : (k * n + 1) / 2;
}

int64_t QuantWeights::group_rows(int64_t g) const {
  const int64_t w = group_width();
  return std::min(w, k_ - g * w);
}

int8_t QuantWeights::code(int64_t row, int64_t col) const {
  const int64_t i = row * n_ + col;
  if (scheme_.bits == Bits::int8) return static_cast<int8_t>(codes_[static_cast<size_t>(i)]);
  return int4::value_at(codes_.data(), i);
}

void QuantWeights::widen_rows(int64_t k0, int64_t rows, std::span<int8_t> out) const {
  if (scheme_.bits == Bits::int8) {
    std::memcpy(out.data(), codes_.data() + k0 * n_, static_cast<size_t>(rows * n_));
    return;
  }
  // Byte-wise: two codes per byte (driver/common/int4.h's order).
  int64_t i = 0, first = k0 * n_;
  const int64_t count = rows * n_;
  if (first % 2 == 1) out[static_cast<size_t>(i++)] = int4::value_at(codes_.data(), first);  // not for 32-aligned groups
  const uint8_t* src = codes_.data() + (first + i) / 2;
  for (; i + 1 < count; i += 2, ++src) {
    out[static_cast<size_t>(i)] = int4::low_value(*src);
    out[static_cast<size_t>(i + 1)] = int4::high_value(*src);
  }
  if (i < count) out[static_cast<size_t>(i)] = int4::value_at(codes_.data(), first + i);
}

Result<QuantWeights> QuantWeights::quantise(std::span<const float> w, int64_t k, int64_t n, const WeightScheme& s) {
  if (auto st = check_shape(k, n, s); !st) return st.error();
  if (w.size() != static_cast<size_t>(k * n))
    return make_error(-EINVAL, fmt::format("weights hold {} floats, K x N = {}", w.size(), k * n));
  if (auto st = check_finite(w, k, n, "W"); !st) return st.error();
  QuantWeights q;
  q.k_ = k;
  q.n_ = n;
  q.scheme_ = s;
  const int64_t groups = q.groups();
  q.scales_.assign(static_cast<size_t>(groups * n), 0.0f);
  q.codes_.assign(static_cast<size_t>(code_bytes(s.bits, k, n)), 0);
  std::vector<float> amax(static_cast<size_t>(n));
  for (int64_t g = 0; g < groups; ++g) {
    const int64_t k0 = g * q.group_width(), rows = q.group_rows(g);
    std::fill(amax.begin(), amax.end(), 0.0f);
    for (int64_t i = k0; i < k0 + rows; ++i)  // row-major walk: columns in the inner loop
      for (int64_t j = 0; j < n; ++j) amax[static_cast<size_t>(j)] = std::max(amax[static_cast<size_t>(j)], std::fabs(w[static_cast<size_t>(i * n + j)]));
    float* sc = q.scales_.data() + g * n;
    for (int64_t j = 0; j < n; ++j) sc[j] = scale_from_absmax(amax[static_cast<size_t>(j)], s.bits);
    for (int64_t i = k0; i < k0 + rows; ++i)
      for (int64_t j = 0; j < n; ++j) store(q.codes_, s.bits, i * n + j, quantise_value(w[static_cast<size_t>(i * n + j)], sc[j], s.bits));
  }
  return q;
}

Result<QuantWeights> QuantWeights::import(std::span<const uint8_t> codes, std::span<const float> scales, int64_t k,
                                          int64_t n, const WeightScheme& s) {
  return import(codes, scales, k, n, s, Affine{});
}

Result<QuantWeights> QuantWeights::import(std::span<const uint8_t> codes, std::span<const float> scales, int64_t k,
                                          int64_t n, const WeightScheme& s, const Affine& affine) {
  if (auto st = check_shape(k, n, s); !st) return st.error();
  QuantWeights q;
  q.k_ = k;
  q.n_ = n;
  q.scheme_ = s;
  const auto want_codes = static_cast<size_t>(code_bytes(s.bits, k, n));
  const auto want_scales = static_cast<size_t>(q.groups() * n);
  if (codes.size() != want_codes)
    return make_error(-EINVAL, fmt::format("codes hold {} bytes, {} x {} {} needs {}", codes.size(), k, n, bits_name(s.bits), want_codes));
  if (scales.size() != want_scales)
    return make_error(-EINVAL, fmt::format("scales hold {} floats, {} groups x N = {} needs {}", scales.size(), q.groups(), n, want_scales));
  if (!affine.mins.empty() && affine.mins.size() != want_scales)
    return make_error(-EINVAL, fmt::format("mins hold {} floats, {} groups x N = {} needs {}", affine.mins.size(), q.groups(), n, want_scales));
  if (affine.code_offset < 0 || affine.code_offset > qmax(s.bits) + 1)
    return make_error(-EINVAL, fmt::format("code offset {}: expected 0..{}", affine.code_offset, qmax(s.bits) + 1));
  const size_t cols = static_cast<size_t>(n);
  for (size_t i = 0; i < scales.size(); ++i)
    if (!std::isfinite(scales[i]) || (!s.signed_scales && scales[i] < 0.0f))
      return make_error(-EINVAL, fmt::format("scales[{}][{}] = {}: scales must be finite{}", i / cols, i % cols, scales[i],
                                             s.signed_scales ? "" : " and >= 0"));
  for (size_t i = 0; i < affine.mins.size(); ++i)
    if (!std::isfinite(affine.mins[i]))
      return make_error(-EINVAL, fmt::format("mins[{}][{}] = {}: mins must be finite", i / cols, i % cols, affine.mins[i]));
  q.codes_.assign(codes.begin(), codes.end());
  q.scales_.assign(scales.begin(), scales.end());
  q.mins_.assign(affine.mins.begin(), affine.mins.end());
  q.code_offset_ = affine.code_offset;
  if (s.bits == Bits::int4 && (k * n) % 2 == 1) int4::put(q.codes_.data(), k * n, 0);  // unused high nibble
  const int32_t hi = qmax(s.bits), lo = qmin(s);
  for (int64_t i = 0; i < k; ++i)
    for (int64_t j = 0; j < n; ++j)
      if (const int8_t c = q.code(i, j); c < lo || c > hi)
        return make_error(-EINVAL, fmt::format("codes[{}][{}] = {}: {} codes must lie in [{}, {}]", i, j, c, bits_name(s.bits), lo, hi));
  return q;
}

}  // namespace ork::quant
