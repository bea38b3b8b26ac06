// The x86 tiers of the fused quantised matmul (group_kernel.h), each compiled with a target
// attribute and called only after group_tier_supported() said yes. Per group: the rows'
// exact int32 sums for the strip's columns, then u = float(acc) x scale and t = u (first
// group) or t + u, one IEEE operation per lane; after the last group C = t x sa. The rows
// are a template parameter so the accumulators and running sums stay in registers.
#if defined(__x86_64__)
#include <immintrin.h>

#include <cstring>

#include "driver/common/kernel_checks.h"
#include "lib/quant/group_kernel.h"
#include "lib/quant/nibbles_x86.h"

ORK_KERNEL_CHECKS_BEGIN  // driver/common/kernel_checks.h

namespace ork::quant::detail {
namespace {

// The zero-masked VCVTDQ2PS with an all-ones mask: GCC 12's expansion of the unmasked one
// reads an undefined vector and fails -Werror=maybe-uninitialized.
constexpr __mmask16 kGroupAll16 = 0xffff;

inline int32_t load32(const uint8_t* p) {
  int32_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// ---- vnni: 32 columns (two zmm), A as code + 128 (uint8), B as int8 quads. VPDPBUSD sums
// (a + 128) x b over a quad; the accumulator starts at -128 x the column's code sum, so it
// ends at sum a x b exactly (modulo 2^32, and the true sum fits: qmatmul.h's bound).
// A comes in blocks of the call's R rows (group_kernel.h StripCall): quad q of row r at
// a[(q R + r) 4], so a quad's R broadcasts read one run of 4R bytes and the tile reads A as one
// stream (lib/ref's VNNI tile reads A so: kernels_x86.cpp); with R row streams it ran 0.1-0.2x
// of int8's kernel time slower (docs/cpu-reference.md "Groups of 32: A in row blocks").
// B's bytes of one K quad of the strip: 128 (one code a byte) or 64 (Nib: two a byte,
// GroupPacked::nibbles, widened in registers by widen_run through `lut`, nibbles_x86.h):
// decode reads half the bytes from memory, for four operations per 8 VPDPBUSD-worth of B.
template <bool Nib>
constexpr int64_t kQuadBBytes = Nib ? 64 : 128;

// One K quad (4 values) of the rows into their accumulators.
template <int R, bool Nib>
__attribute__((target("avx512f,avx512bw,avx512vnni"), always_inline)) inline void vnni_quad(
    const uint8_t* a, const uint8_t* bg, int64_t q, __m512i (&acc)[R][2], __m512i lut) {
  __m512i w0, w1;
  if constexpr (Nib) {
    const WideRun run = widen_run(bg + q * 64, lut);
    w0 = run.first, w1 = run.last;
  } else {
    w0 = _mm512_loadu_si512(bg + q * 128), w1 = _mm512_loadu_si512(bg + q * 128 + 64);
  }
  #pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
    const __m512i av = _mm512_set1_epi32(load32(a + (q * R + r) * 4));
    acc[r][0] = _mm512_dpbusd_epi32(acc[r][0], av, w0);
    acc[r][1] = _mm512_dpbusd_epi32(acc[r][1], av, w1);
  }
}

// A group's quads, unrolled whole when their count is fixed (Quads > 0). GCC 12 turns a loop
// over a group's quads (or over chunks of 8 of them, as before) into register copies of every
// accumulator per pass (objdump of the kernel, M = 128): a full group of the common widths
// runs straight (Quads 8 and 16: widths 32 and 64); other widths in straight runs of 8.
template <int R, int Quads, bool Nib>
__attribute__((target("avx512f,avx512bw,avx512vnni"), always_inline)) inline void vnni_quads(
    const uint8_t* a, const uint8_t* bg, int64_t quads, __m512i (&acc)[R][2], __m512i lut) {
  if constexpr (Quads > 0) {
    #pragma GCC unroll 16
    for (int64_t q = 0; q < Quads; ++q) vnni_quad<R, Nib>(a, bg, q, acc, lut);
  } else {  // a short last group's rest: once per strip and row block
    for (int64_t q = 0; q < quads; ++q) vnni_quad<R, Nib>(a, bg, q, acc, lut);
  }
}

// Group g's integer sums and its term in the running sums t: Quads > 0 when the group is
// known to hold that many quads, else read from group_off (in straight runs of 8).
// Shift: the weights' code offset is not in the packed codes (group_kernel.cpp folded_offset);
// Mins: the m term of affine weights.
template <int R, int Quads, bool Shift, bool Mins, bool Nib>
__attribute__((target("avx512f,avx512bw,avx512vnni"), always_inline)) inline void vnni_group(
    const StripCall& x, int64_t g, __m512 (&t)[R][2], __m512i lut) {
  const uint8_t* bg = x.b + x.group_off[g] / (128 / kQuadBBytes<Nib>);
  const __m512i b0 = _mm512_loadu_si512(x.bias + g * 32), b1 = _mm512_loadu_si512(x.bias + g * 32 + 16);
  __m512i acc[R][2];
  #pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
    if constexpr (Shift) {  // the format's code: + code_offset x s_g, folded into the start
      const __m512i sh = _mm512_set1_epi32(static_cast<int32_t>(affine_shift(x, r, g)));
      acc[r][0] = _mm512_add_epi32(b0, sh), acc[r][1] = _mm512_add_epi32(b1, sh);
    } else {
      acc[r][0] = b0, acc[r][1] = b1;
    }
  }
  const uint8_t* a = x.a + g * x.width * R;  // the group's first quad in the row block
  if constexpr (Quads > 0) {
    vnni_quads<R, Quads, Nib>(a, bg, Quads, acc, lut);
  } else {
    const int64_t quads = (x.group_off[g + 1] - x.group_off[g]) / 128;
    int64_t q = 0;
    for (; q + 8 <= quads; q += 8) vnni_quads<R, 8, Nib>(a + q * R * 4, bg + q * kQuadBBytes<Nib>, 8, acc, lut);
    if (q < quads) vnni_quads<R, 0, Nib>(a + q * R * 4, bg + q * kQuadBBytes<Nib>, quads - q, acc, lut);
  }
  const __m512 s0 = _mm512_loadu_ps(x.scales + g * 32), s1 = _mm512_loadu_ps(x.scales + g * 32 + 16);
  #pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
    __m512 u0 = _mm512_mul_ps(_mm512_maskz_cvtepi32_ps(kGroupAll16, acc[r][0]), s0);
    __m512 u1 = _mm512_mul_ps(_mm512_maskz_cvtepi32_ps(kGroupAll16, acc[r][1]), s1);
    if constexpr (Mins) {  // u = u + float(s_g) x mn, two IEEE operations
      const __m512 sf = _mm512_set1_ps(x.gsum_f[r * x.groups + g]);
      u0 = _mm512_add_ps(u0, _mm512_mul_ps(sf, _mm512_loadu_ps(x.mins + g * 32)));
      u1 = _mm512_add_ps(u1, _mm512_mul_ps(sf, _mm512_loadu_ps(x.mins + g * 32 + 16)));
    }
    t[r][0] = g == 0 ? u0 : _mm512_add_ps(t[r][0], u0);
    t[r][1] = g == 0 ? u1 : _mm512_add_ps(t[r][1], u1);
  }
}

// Every group in increasing order (the order is the contract), the last one apart: it may be
// short (K off the width), so the full ones before it run straight and it takes the loop.
template <int R, int Quads, bool Shift, bool Mins, bool Nib>
__attribute__((target("avx512f,avx512bw,avx512vnni"))) void vnni_rows(const StripCall& x) {
  __m512 t[R][2];
  #pragma GCC unroll 8
  for (int r = 0; r < R; ++r) t[r][0] = t[r][1] = _mm512_setzero_ps();  // set at g = 0; quiets -Wmaybe-uninitialized
  const __m512i lut = Nib ? nibble_lut(x.nibble_base) : _mm512_setzero_si512();
  const int64_t last = x.groups - 1;
  for (int64_t g = 0; g < last; ++g) vnni_group<R, Quads, Shift, Mins, Nib>(x, g, t, lut);
  vnni_group<R, 0, Shift, Mins, Nib>(x, last, t, lut);
  const int lo = x.cols < 16 ? x.cols : 16, hi = x.cols - lo;
  const auto m0 = static_cast<__mmask16>((1u << lo) - 1), m1 = static_cast<__mmask16>((1u << hi) - 1);
  #pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
    const __m512 sa = _mm512_set1_ps(x.sa[r]);
    _mm512_mask_storeu_ps(x.c + r * x.ldc, m0, _mm512_mul_ps(t[r][0], sa));
    _mm512_mask_storeu_ps(x.c + r * x.ldc + 16, m1, _mm512_mul_ps(t[r][1], sa));
  }
}

// ---- avx2: 16 columns (two ymm), A as int16, B as int16 pairs. VPMADDWD sums a pair of
// products into int32 exactly (|a b| <= 128 x 128).
template <int R, bool Shift, bool Mins>
__attribute__((target("avx2"))) void avx2_rows(const StripCall& x) {
  __m256 t[R][2];
  #pragma GCC unroll 4
  for (int r = 0; r < R; ++r) t[r][0] = t[r][1] = _mm256_setzero_ps();  // set at g = 0
  for (int64_t g = 0; g < x.groups; ++g) {
    const uint8_t* bg = x.b + x.group_off[g];
    const int64_t pairs = (x.group_off[g + 1] - x.group_off[g]) / 64;
    __m256i acc[R][2];
    #pragma GCC unroll 4
    for (int r = 0; r < R; ++r)  // affine: + code_offset x s_g, the format's code
      acc[r][0] = acc[r][1] = Shift ? _mm256_set1_epi32(static_cast<int32_t>(affine_shift(x, r, g)))
                                     : _mm256_setzero_si256();
    const uint8_t* a = x.a + g * x.width * 2;
    for (int64_t p = 0; p < pairs; ++p) {
      const __m256i w0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(bg + p * 64));
      const __m256i w1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(bg + p * 64 + 32));
      #pragma GCC unroll 4
      for (int r = 0; r < R; ++r) {
        const __m256i av = _mm256_set1_epi32(load32(a + r * x.a_stride + 4 * p));
        acc[r][0] = _mm256_add_epi32(acc[r][0], _mm256_madd_epi16(av, w0));
        acc[r][1] = _mm256_add_epi32(acc[r][1], _mm256_madd_epi16(av, w1));
      }
    }
    const __m256 s0 = _mm256_loadu_ps(x.scales + g * 16), s1 = _mm256_loadu_ps(x.scales + g * 16 + 8);
    #pragma GCC unroll 4
    for (int r = 0; r < R; ++r) {
      __m256 u0 = _mm256_mul_ps(_mm256_cvtepi32_ps(acc[r][0]), s0);
      __m256 u1 = _mm256_mul_ps(_mm256_cvtepi32_ps(acc[r][1]), s1);
      if constexpr (Mins) {  // u = u + float(s_g) x mn
        const __m256 sf = _mm256_set1_ps(x.gsum_f[r * x.groups + g]);
        u0 = _mm256_add_ps(u0, _mm256_mul_ps(sf, _mm256_loadu_ps(x.mins + g * 16)));
        u1 = _mm256_add_ps(u1, _mm256_mul_ps(sf, _mm256_loadu_ps(x.mins + g * 16 + 8)));
      }
      t[r][0] = g == 0 ? u0 : _mm256_add_ps(t[r][0], u0);
      t[r][1] = g == 0 ? u1 : _mm256_add_ps(t[r][1], u1);
    }
  }
  for (int r = 0; r < R; ++r) {
    const __m256 sa = _mm256_set1_ps(x.sa[r]);
    alignas(32) float out[16];
    _mm256_store_ps(out, _mm256_mul_ps(t[r][0], sa));
    _mm256_store_ps(out + 8, _mm256_mul_ps(t[r][1], sa));
    std::memcpy(x.c + r * x.ldc, out, static_cast<size_t>(x.cols) * sizeof(float));
  }
}

// The group width's straight body: 8 quads for ggml's blocks of 32, 16 for 64 (1.13x
// lib/ref's int8 kernel against 1.19x in runs of 8 at M = 128, K = N = 2048; 128 ran the
// same either way: docs/cpu-reference.md "Groups of 32: A in row blocks").
template <int R, bool Shift, bool Mins, bool Nib>
void vnni_nib_width(const StripCall& x) {
  if (x.width == 32) return vnni_rows<R, 8, Shift, Mins, Nib>(x);
  if (x.width == 64) return vnni_rows<R, 16, Shift, Mins, Nib>(x);
  return vnni_rows<R, 0, Shift, Mins, Nib>(x);
}
template <int R, bool Shift, bool Mins>
void vnni_width(const StripCall& x) {
  return x.nibbles ? vnni_nib_width<R, Shift, Mins, true>(x) : vnni_nib_width<R, Shift, Mins, false>(x);
}

template <bool Shift, bool Mins>
void strip_vnni_as(const StripCall& x) {
  switch (x.rows) {
    case 1: return vnni_width<1, Shift, Mins>(x);
    case 2: return vnni_width<2, Shift, Mins>(x);
    case 3: return vnni_width<3, Shift, Mins>(x);
    case 4: return vnni_width<4, Shift, Mins>(x);
    case 5: return vnni_width<5, Shift, Mins>(x);
    case 6: return vnni_width<6, Shift, Mins>(x);
    case 7: return vnni_width<7, Shift, Mins>(x);  // a remainder joined to the last block (row_block_of)
    default: return vnni_width<8, Shift, Mins>(x);
  }
}

template <bool Shift, bool Mins>
void strip_avx2_as(const StripCall& x) {
  switch (x.rows) {
    case 1: return avx2_rows<1, Shift, Mins>(x);
    case 2: return avx2_rows<2, Shift, Mins>(x);
    case 3: return avx2_rows<3, Shift, Mins>(x);
    default: return avx2_rows<4, Shift, Mins>(x);
  }
}

}  // namespace

void strip_vnni(const StripCall& x) {
  const bool shift = x.gsum != nullptr && x.code_offset != 0;
  if (x.mins != nullptr) return shift ? strip_vnni_as<true, true>(x) : strip_vnni_as<false, true>(x);
  return shift ? strip_vnni_as<true, false>(x) : strip_vnni_as<false, false>(x);
}

void strip_avx2(const StripCall& x) {
  const bool shift = x.gsum != nullptr && x.code_offset != 0;
  if (x.mins != nullptr) return shift ? strip_avx2_as<true, true>(x) : strip_avx2_as<false, true>(x);
  return shift ? strip_avx2_as<true, false>(x) : strip_avx2_as<false, false>(x);
}

// A run (64 bytes of nibbles, 128 codes) a step.
__attribute__((target("avx512f,avx512bw"))) void unpack_nibbles_avx512(const uint8_t* src, int64_t bytes,
                                                                       int8_t base, uint8_t* dst) {
  const __m512i lut = nibble_lut(base);
  for (int64_t i = 0; i < bytes / 2; i += 64) {
    const WideRun run = widen_run(src + i, lut);
    _mm512_storeu_si512(dst + 2 * i, run.first);
    _mm512_storeu_si512(dst + 2 * i + 64, run.last);
  }
}

// (code + 128) is the byte XOR 0x80, unsigned, so PSADBW against zero sums 8 of them into
// each 64-bit lane exactly; 128 x the count comes off at the end.
int32_t code_sum_sse2(const int8_t* p, int64_t n) {
  const __m128i flip = _mm_set1_epi8(static_cast<char>(0x80)), zero = _mm_setzero_si128();
  __m128i acc = zero;
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m128i v = _mm_xor_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i)), flip);
    acc = _mm_add_epi64(acc, _mm_sad_epu8(v, zero));
  }
  int64_t s = _mm_cvtsi128_si64(acc) + _mm_cvtsi128_si64(_mm_unpackhi_epi64(acc, acc)) - 128 * i;
  for (; i < n; ++i) s += p[i];
  return static_cast<int32_t>(s);
}

}  // namespace ork::quant::detail
ORK_KERNEL_CHECKS_END
#endif
