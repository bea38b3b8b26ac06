// The quantised-matmul reference: plain loops over row-major float inputs that DEFINE the
// result every backend must return bit for bit (docs/quantisation.md). No layouts, no packing,
// no groups-as-separate-matmuls: just the formulas.
//
//   sw[g][n] = scale_from_absmax(max_{k in g} |W[k][n]|, wbits)      (per-channel: one g = K)
//   qw[k][n] = quantise_value(W[k][n], sw[g(k)][n], wbits)
//   sa[m]    = scale_from_absmax(max |A[m][:]| (per-row) or max |A| (per-tensor), abits)
//   qa[m][k] = quantise_value(A[m][k], sa[m], abits)
//   acc_g    = sum_{k in g} qa[m][k] * qw[k][n]                       (exact, int32)
//   t        = (float)acc_0 * sw[0][n];  t = t + (float)acc_g * sw[g][n] for g = 1, 2, ...
//   C[m][n]  = t * sa[m]
// Every float operation is one IEEE fp32 operation rounded to nearest even (no FMA).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "driver/common/result.h"
#include "lib/quant/scheme.h"

namespace ork::quant::reference {

// Weight scales, [groups][n] row-major.
std::vector<float> weight_scales(std::span<const float> w, int64_t k, int64_t n, const WeightScheme& s);
// Weight codes, K x N row-major, one per int8.
std::vector<int8_t> weight_codes(std::span<const float> w, int64_t k, int64_t n, const WeightScheme& s,
                                 std::span<const float> scales);
// Activation scales: 1 (per-tensor) or M (per-row).
std::vector<float> activation_scales(std::span<const float> a, int64_t m, int64_t k, const ActScheme& s);
std::vector<int8_t> activation_codes(std::span<const float> a, int64_t m, int64_t k, const ActScheme& s,
                                     std::span<const float> scales);
// The integer partial sums, [groups][M][N]: acc_g[m][n].
std::vector<int32_t> group_sums(std::span<const int8_t> qa, std::span<const int8_t> qw, int64_t m, int64_t k,
                                int64_t n, int64_t group_width);
// The quantised matmul of weights given as codes (imported formats, e.g. ggml blocks;
// docs/quantisation.md "ggml blocks"), the one formula every path ends in:
//   q[k][n]  the format's integer code (Q4_1: 0..15), d[g][n] its scale (any sign),
//   mn[g][n] its m term (empty: none), groups of `group_width` along K (the last may be short)
//   acc_g = sum_{k in g} qa[m][k] * q[k][n],   s_g = sum_{k in g} qa[m][k]     (exact, int32)
//   u_g   = fl(float(acc_g) * d[g][n]);  with mins: u_g = fl(u_g + fl(float(s_g) * mn[g][n]))
//   t = u_0;  t = fl(t + u_g) for g = 1, 2, ...;   C[m][n] = fl(t * sa[m])
// Without mins this is exactly qmatmul() below (which calls it).
Result<std::vector<float>> qmatmul_codes(std::span<const float> a, int64_t m, std::span<const int32_t> q,
                                         std::span<const float> d, std::span<const float> mins, int64_t k,
                                         int64_t n, int64_t group_width, const ActScheme& as);
// The whole quantised matmul from float inputs (inputs must be finite; schemes valid).
Result<std::vector<float>> qmatmul(std::span<const float> a, std::span<const float> w, int64_t m, int64_t k,
                                   int64_t n, const WeightScheme& ws, const ActScheme& as);

}  // namespace ork::quant::reference
