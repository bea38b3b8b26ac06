// One row of a symmetric group's int32 sums into the running sums t, in reference.h's order:
// u = fl(float(acc) x sw); t = u (first group) or fl(t + u); on the last group also
// C = fl(t x sa), in the same pass. Written once for both callers: the pass per group after
// an NPU's (or lib/ref's) group sums (qmatmul.cpp), and per-channel weights on the cpu device,
// dequantised chunk by chunk on the threads of lib/ref's int8 call (group_matmul.cpp). Four
// lanes at a time on x86-64 (SSE2 is its baseline; GCC's -O2 cost model leaves this loop
// scalar), each lane the scalar's IEEE operations: CVTDQ2PS rounds as CVTSI2SS does, under
// the same MXCSR. lib/quant is compiled with -ffp-contract=off, so nothing fuses into an FMA.
#pragma once

#include <cstdint>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace ork::quant::detail {

template <bool First, bool Last>
inline void dequantise_row(const int32_t* acc, const float* sw, float sa, float* t, int64_t n) {
  int64_t j = 0;
#if defined(__SSE2__)
  const __m128 vsa = _mm_set1_ps(sa);
  for (; j + 4 <= n; j += 4) {
    const __m128 u = _mm_mul_ps(_mm_cvtepi32_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(acc + j))),
                                _mm_loadu_ps(sw + j));
    const __m128 v = First ? u : _mm_add_ps(_mm_loadu_ps(t + j), u);
    _mm_storeu_ps(t + j, Last ? _mm_mul_ps(v, vsa) : v);
  }
#endif
  for (; j < n; ++j) {
    const float u = static_cast<float>(acc[j]) * sw[j];
    const float v = First ? u : t[j] + u;
    t[j] = Last ? v * sa : v;
  }
}

inline void dequantise_row(bool first, bool last, const int32_t* acc, const float* sw, float sa, float* t,
                           int64_t n) {
  if (first && last) return dequantise_row<true, true>(acc, sw, sa, t, n);
  if (first) return dequantise_row<true, false>(acc, sw, sa, t, n);
  if (last) return dequantise_row<false, true>(acc, sw, sa, t, n);
  dequantise_row<false, false>(acc, sw, sa, t, n);
}

}  // namespace ork::quant::detail
