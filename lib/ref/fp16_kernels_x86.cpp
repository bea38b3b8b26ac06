// The x86 fp16 tiles (fp16_kernels.h): AVX-512F (4 rows x 64 columns, 16 zmm accumulators)
// and AVX2 + FMA + F16C (4 rows x 16 columns per pass, 8 ymm accumulators, four passes per
// strip). Each is compiled with a target attribute and chosen only when CPUID has it.
//
// FMA is exact here: a product of two halves has at most 22 significant bits and lies in
// [2^-48, 2^32], so a*b is exactly representable in fp32 and fma(a, b, acc) = round(acc +
// a*b) = acc + fl(a*b), the oracle's two operations (one rounding each, the first exact).
// The one thing an FMA could choose differently is which NaN comes out when several operands
// are NaN; RefFp16Packed.NaNPayloadsAreTheOracles checks every tier against the oracle there.
#if defined(__x86_64__)
#include <immintrin.h>

#include <cstring>

#include "driver/common/fp16.h"
#include "lib/ref/fp16_kernels.h"

namespace ork::ref::detail {
namespace {

constexpr int64_t kAvxStrip = PackedFp16::kStrip;

// VCVTPH2PS zmm, 16 halves -> 16 floats (the zero-masked form: GCC 12's expansion of the
// unmasked one reads an undefined vector and fails -Werror=maybe-uninitialized).
__attribute__((target("avx512f"), always_inline)) inline __m512 widen16(__m256i h) {
  return _mm512_maskz_cvtph_ps(__mmask16(0xffff), h);
}

// ---- AVX-512F: one zmm is 16 columns, four cover the strip. Every loop over rows and vectors
// is unrolled (the pragmas): GCC 12 at -O2 kept them as loops, with the accumulators in
// memory, at a sixth of the unrolled kernel's rate (M = 512, one thread, CPU time).
template <int R, bool Halves>
__attribute__((target("avx512f"))) void tile512(const Fp16Tile& t) {
  __m512 acc[R][4];
  #pragma GCC unroll 16
  for (auto& row : acc)
    #pragma GCC unroll 16
    for (auto& v : row) v = _mm512_setzero_ps();
  for (int64_t k = 0; k < t.kn; ++k) {
    __m512 b[4];
    #pragma GCC unroll 16
    for (int v = 0; v < 4; ++v) {
      if constexpr (Halves) {
        b[v] = widen16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(t.bh + k * kAvxStrip + 16 * v)));
      } else {
        b[v] = _mm512_loadu_ps(t.bf + k * kAvxStrip + 16 * v);
      }
    }
    #pragma GCC unroll 16
    for (int r = 0; r < R; ++r) {
      const __m512 x = _mm512_set1_ps(t.a[r * t.lda + k]);
      #pragma GCC unroll 16
      for (int v = 0; v < 4; ++v) acc[r][v] = _mm512_fmadd_ps(x, b[v], acc[r][v]);
    }
  }
  #pragma GCC unroll 16
  for (int v = 0; v < 4; ++v) {
    const int64_t left = t.cols - 16 * v;
    if (left <= 0) break;
    const __mmask16 mask = left >= 16 ? __mmask16(0xffff) : __mmask16((1u << left) - 1);
    #pragma GCC unroll 16
    for (int r = 0; r < R; ++r) {
      float* c = t.c + r * t.ldc + 16 * v;
      const __m512 out = t.first ? acc[r][v] : _mm512_add_ps(_mm512_maskz_loadu_ps(mask, c), acc[r][v]);
      _mm512_mask_storeu_ps(c, mask, out);
    }
  }
}

template <bool Halves>
__attribute__((target("avx512f"))) void rows512(const Fp16Tile& t) {
  switch (t.rows) {
    case 1: return tile512<1, Halves>(t);
    case 2: return tile512<2, Halves>(t);
    case 3: return tile512<3, Halves>(t);
    default: return tile512<4, Halves>(t);
  }
}

__attribute__((target("avx512f"))) void tile_avx512(const Fp16Tile& t) {
  return t.bh != nullptr ? rows512<true>(t) : rows512<false>(t);
}

// VCVTPH2PS converts every half exactly as driver/common/fp16.h does (NaN payloads included:
// tests/driver/common/fp16_test.cpp compares all 65536 against this instruction).
__attribute__((target("avx512f"))) void widen_avx512(const uint16_t* in, float* out, int64_t count) {
  int64_t i = 0;
  for (; i + 16 <= count; i += 16)
    _mm512_storeu_ps(out + i, widen16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + i))));
  for (; i < count; ++i) out[i] = half_to_float(in[i]);
}

// ---- AVX2: one ymm is 8 columns; a pass takes 16 columns (2 ymm) of up to 4 rows.
template <int R, bool Halves>
__attribute__((target("avx2,fma,f16c"))) void pass256(const Fp16Tile& t, int64_t j0) {
  __m256 acc[R][2];
  #pragma GCC unroll 16
  for (auto& row : acc)
    #pragma GCC unroll 16
    for (auto& v : row) v = _mm256_setzero_ps();
  for (int64_t k = 0; k < t.kn; ++k) {
    __m256 b[2];
    #pragma GCC unroll 16
    for (int v = 0; v < 2; ++v) {
      const int64_t at = k * kAvxStrip + j0 + 8 * v;
      if constexpr (Halves) {
        b[v] = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(t.bh + at)));
      } else {
        b[v] = _mm256_loadu_ps(t.bf + at);
      }
    }
    #pragma GCC unroll 16
    for (int r = 0; r < R; ++r) {
      const __m256 x = _mm256_broadcast_ss(t.a + r * t.lda + k);
      #pragma GCC unroll 16
      for (int v = 0; v < 2; ++v) acc[r][v] = _mm256_fmadd_ps(x, b[v], acc[r][v]);
    }
  }
  const int64_t len = t.cols - j0 < 16 ? t.cols - j0 : 16;
  #pragma GCC unroll 16
  for (int r = 0; r < R; ++r) {
    float sum[16];
    _mm256_storeu_ps(sum, acc[r][0]);
    _mm256_storeu_ps(sum + 8, acc[r][1]);
    float* c = t.c + r * t.ldc + j0;
    for (int64_t j = 0; j < len; ++j) c[j] = t.first ? sum[j] : c[j] + sum[j];
  }
}

template <bool Halves>
__attribute__((target("avx2,fma,f16c"))) void rows256(const Fp16Tile& t) {
  for (int64_t j0 = 0; j0 < t.cols; j0 += 16) {
    switch (t.rows) {
      case 1: pass256<1, Halves>(t, j0); break;
      case 2: pass256<2, Halves>(t, j0); break;
      case 3: pass256<3, Halves>(t, j0); break;
      default: pass256<4, Halves>(t, j0); break;
    }
  }
}

__attribute__((target("avx2,fma,f16c"))) void tile_avx2(const Fp16Tile& t) {
  return t.bh != nullptr ? rows256<true>(t) : rows256<false>(t);
}

__attribute__((target("avx2,f16c"))) void widen_avx2(const uint16_t* in, float* out, int64_t count) {
  int64_t i = 0;
  for (; i + 8 <= count; i += 8)
    _mm256_storeu_ps(out + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i))));
  for (; i < count; ++i) out[i] = half_to_float(in[i]);
}

}  // namespace

const Fp16Kernel& fp16_avx2_kernel() {
  static const Fp16Kernel k{Fp16Isa::avx2, tile_avx2, widen_avx2, true};
  return k;
}

const Fp16Kernel& fp16_avx512_kernel() {
  static const Fp16Kernel k{Fp16Isa::avx512, tile_avx512, widen_avx512, true};
  return k;
}

}  // namespace ork::ref::detail
#endif
