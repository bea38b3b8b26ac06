// The x86 tiers of activation quantisation (act_kernels.h): AVX2 and AVX-512F, each compiled
// with a target attribute and called only after act_tier_supported() said yes.
//
// Why each step gives the scalar definition's bits (arith.h):
// - absmax: std::fabs clears the sign bit, and non-negative floats order as their bit
//   patterns do, so an unsigned integer max of the masked patterns is the float max; NaN and
//   infinity patterns lie above FLT_MAX's, which is how the one pass also finds them.
// - x / scale: the same IEEE division per lane as divss (not a multiply by the reciprocal),
//   under the same MXCSR.
// - clamp before rounding: for |q| <= qmax rounding commutes with the clamp, above it both
//   orders give +-qmax; a NaN quotient (only possible with DAZ and a denormal scale) goes to
//   -qmax as the scalar INT_MIN saturation does: VMAXPS returns its second operand when the
//   first is NaN (Intel SDM vol. 2, MAXPS), and the second is -qmax.
// - rounding: round to nearest even named in the instruction (AVX-512 embedded rounding
//   {rn-sae}; ROUNDPS imm 0x08), so the current MXCSR rounding mode plays no part.
#if defined(__x86_64__)
#include <immintrin.h>

#include "lib/quant/act_kernels.h"

namespace ork::quant::detail {
namespace {

// The zero-masked forms with an all-ones mask: GCC 12's expansions of the unmasked
// VPMAXUD, VMAXPS, VMINPS, VCVTPS2DQ and VPMOVDB read an undefined vector and fail -Werror=maybe-uninitialized.
constexpr __mmask16 kAll16 = 0xffff;

__attribute__((target("avx512f"), always_inline)) inline __m512i max_u32(__m512i a, __m512i b) {
  return _mm512_maskz_max_epu32(kAll16, a, b);
}

}  // namespace

__attribute__((target("avx512f"))) uint32_t absmax_bits_avx512(const float* x, int64_t n) {
  const __m512i mask = _mm512_set1_epi32(0x7fffffff);
  __m512i m0 = _mm512_setzero_si512(), m1 = m0, m2 = m0, m3 = m0;  // four chains hide latency
  int64_t i = 0;
  for (; i + 64 <= n; i += 64) {
    m0 = max_u32(m0, _mm512_and_si512(_mm512_loadu_si512(x + i), mask));
    m1 = max_u32(m1, _mm512_and_si512(_mm512_loadu_si512(x + i + 16), mask));
    m2 = max_u32(m2, _mm512_and_si512(_mm512_loadu_si512(x + i + 32), mask));
    m3 = max_u32(m3, _mm512_and_si512(_mm512_loadu_si512(x + i + 48), mask));
  }
  for (; i + 16 <= n; i += 16) m0 = max_u32(m0, _mm512_and_si512(_mm512_loadu_si512(x + i), mask));
  m0 = max_u32(max_u32(m0, m1), max_u32(m2, m3));
  alignas(64) uint32_t lanes[16];  // once per row: a store and a scalar max (the reduce
  _mm512_store_si512(lanes, m0);    // intrinsic expands through an undefined vector too)
  uint32_t v = 0;
  for (uint32_t l : lanes) v = l > v ? l : v;
  const uint32_t t = absmax_bits_portable(x + i, n - i);
  return v > t ? v : t;
}

__attribute__((target("avx512f"))) void quantise_row_avx512(const float* x, int64_t n, float scale, Bits bits,
                                                            int8_t* out) {
  const auto lim = static_cast<float>(qmax(bits));
  const __m512 s = _mm512_set1_ps(scale), hi = _mm512_set1_ps(lim), lo = _mm512_set1_ps(-lim);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m512 v = _mm512_div_ps(_mm512_loadu_ps(x + i), s);
    v = _mm512_maskz_min_ps(kAll16, _mm512_maskz_max_ps(kAll16, v, lo), hi);
    const __m512i q = _mm512_maskz_cvt_roundps_epi32(kAll16, v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), _mm512_maskz_cvtepi32_epi8(kAll16, q));
  }
  quantise_row_portable(x + i, n - i, scale, bits, out + i);
}

namespace {

// Eight |x| bit patterns (a lambda would not inherit the target attribute).
__attribute__((target("avx2"), always_inline)) inline __m256i abs_bits8(const float* x) {
  return _mm256_and_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(x)), _mm256_set1_epi32(0x7fffffff));
}

// Eight codes as int32: exact integers in [-qmax, qmax].
__attribute__((target("avx2"), always_inline)) inline __m256i codes8(const float* x, __m256 s, __m256 lo, __m256 hi) {
  __m256 v = _mm256_div_ps(_mm256_loadu_ps(x), s);
  v = _mm256_min_ps(_mm256_max_ps(v, lo), hi);
  return _mm256_cvttps_epi32(_mm256_round_ps(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}

}  // namespace

__attribute__((target("avx2"))) uint32_t absmax_bits_avx2(const float* x, int64_t n) {
  __m256i m0 = _mm256_setzero_si256(), m1 = m0, m2 = m0, m3 = m0;
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    m0 = _mm256_max_epu32(m0, abs_bits8(x + i));
    m1 = _mm256_max_epu32(m1, abs_bits8(x + i + 8));
    m2 = _mm256_max_epu32(m2, abs_bits8(x + i + 16));
    m3 = _mm256_max_epu32(m3, abs_bits8(x + i + 24));
  }
  for (; i + 8 <= n; i += 8) m0 = _mm256_max_epu32(m0, abs_bits8(x + i));
  m0 = _mm256_max_epu32(_mm256_max_epu32(m0, m1), _mm256_max_epu32(m2, m3));
  __m128i h = _mm_max_epu32(_mm256_castsi256_si128(m0), _mm256_extracti128_si256(m0, 1));
  h = _mm_max_epu32(h, _mm_shuffle_epi32(h, 0x4e));  // lanes 2 3 0 1
  h = _mm_max_epu32(h, _mm_shuffle_epi32(h, 0xb1));  // lanes 1 0 3 2
  const auto v = static_cast<uint32_t>(_mm_cvtsi128_si32(h));
  const uint32_t t = absmax_bits_portable(x + i, n - i);
  return v > t ? v : t;
}

__attribute__((target("avx2"))) void quantise_row_avx2(const float* x, int64_t n, float scale, Bits bits,
                                                       int8_t* out) {
  const auto lim = static_cast<float>(qmax(bits));
  const __m256 s = _mm256_set1_ps(scale), hi = _mm256_set1_ps(lim), lo = _mm256_set1_ps(-lim);
  // The packs work within 128-bit lanes: after them the dwords hold, in order, the low
  // halves of vectors 0..3 then their high halves; the permute puts each vector's back together.
  const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    const __m256i ab = _mm256_packs_epi32(codes8(x + i, s, lo, hi), codes8(x + i + 8, s, lo, hi));
    const __m256i cd = _mm256_packs_epi32(codes8(x + i + 16, s, lo, hi), codes8(x + i + 24, s, lo, hi));
    const __m256i q = _mm256_permutevar8x32_epi32(_mm256_packs_epi16(ab, cd), order);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i), q);
  }
  quantise_row_portable(x + i, n - i, scale, bits, out + i);
}

}  // namespace ork::quant::detail
#endif
