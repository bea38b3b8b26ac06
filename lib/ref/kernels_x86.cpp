// x86 micro-kernels of the fast int8 path (kernels.h). Each is compiled for its own ISA with
// a target attribute and only called after isa_supported() said yes (fast.cpp).
//
// Exactness: pmaddwd multiplies int16 pairs into int32 without saturation; vpdpbusd adds
// four u8 x s8 products into int32 without saturation (the "s" variant would saturate). The
// VNNI path feeds a + 128 as u8 and the caller subtracts 128 * column sum of B afterwards.
#include <immintrin.h>

#include <cstring>

#include "lib/ref/kernels.h"

namespace ork::ref::detail {

namespace {

inline int32_t group_at(const uint8_t* row, int64_t g) {  // 4 bytes of K as one lane
  int32_t v;
  std::memcpy(&v, row + 4 * g, sizeof v);
  return v;
}

// 8 rows x 32 columns: 16 zmm accumulators, 2 for B, 1 broadcast. A is in 8-row blocks
// (kernels.h a_unit = 4): group g of row i at a[32 g + 4 i], so the 8 broadcasts of a group
// read 32 contiguous bytes and a tile's A is one sequential stream.
constexpr int kVnniMr = 8;
using VnniTile = __m512i[kVnniMr][2];

__attribute__((target("avx512f,avx512bw,avx512vnni")))
inline void vnni_tile(const uint8_t* a, const uint8_t* bp, int64_t groups, VnniTile& acc) {
  for (int64_t g = 0; g < groups; ++g, bp += 128, a += 4 * kVnniMr) {
    const __m512i b0 = _mm512_loadu_si512(bp);
    const __m512i b1 = _mm512_loadu_si512(bp + 64);
#pragma GCC unroll 8
    for (int i = 0; i < kVnniMr; ++i) {
      const __m512i av = _mm512_set1_epi32(group_at(a, i));
      acc[i][0] = _mm512_dpbusd_epi32(acc[i][0], av, b0);
      acc[i][1] = _mm512_dpbusd_epi32(acc[i][1], av, b1);
    }
  }
}

// The tile's accumulators from a partial tile (rows of 32 int32), or zero when there is none.
__attribute__((target("avx512f,avx512bw,avx512vnni"), always_inline))
inline void vnni_start(const int32_t* partial, VnniTile& acc) {
#pragma GCC unroll 8
  for (int i = 0; i < kVnniMr; ++i) {
    acc[i][0] = partial ? _mm512_loadu_si512(partial + i * 32) : _mm512_setzero_si512();
    acc[i][1] = partial ? _mm512_loadu_si512(partial + i * 32 + 16) : _mm512_setzero_si512();
  }
}

__attribute__((target("avx512f,avx512bw,avx512vnni")))
void micro_vnni(const uint8_t* a, int64_t lda, const uint8_t* bp, int64_t groups, int32_t* out,
                bool accumulate) {
  (void)lda;  // A is blocked, see vnni_tile
  VnniTile acc;
  vnni_start(accumulate ? out : nullptr, acc);
  vnni_tile(a, bp, groups, acc);
#pragma GCC unroll 8
  for (int i = 0; i < kVnniMr; ++i) {
    _mm512_storeu_si512(out + i * 32, acc[i][0]);
    _mm512_storeu_si512(out + i * 32 + 16, acc[i][1]);
  }
}

// kernels.h micro_to_c: the tile's last chunk, partial tile and bias added in registers and
// stored to C, with no pass through the panel buffer (and no second pass for the bias).
__attribute__((target("avx512f,avx512bw,avx512vnni")))
void micro_vnni_to_c(const uint8_t* a, const uint8_t* bp, int64_t groups, const int32_t* partial, int32_t* c,
                     int64_t c_stride, const int32_t* bias) {
  VnniTile acc;
  vnni_start(partial, acc);
  vnni_tile(a, bp, groups, acc);
  const __m512i bias0 = _mm512_loadu_si512(bias), bias1 = _mm512_loadu_si512(bias + 16);
#pragma GCC unroll 8
  for (int i = 0; i < kVnniMr; ++i) {
    _mm512_storeu_si512(c + i * c_stride, _mm512_add_epi32(acc[i][0], bias0));
    _mm512_storeu_si512(c + i * c_stride + 16, _mm512_add_epi32(acc[i][1], bias1));
  }
}

// R rows x 32 columns for short M (kernels.h micro_rows), K split S ways: group g feeds
// accumulator set g % S, so R x 2 x S registers are in flight. VPDPBUSD zmm has a latency of
// about 5 cycles and two issue per cycle on cores with two 512-bit FMA ports (Intel's
// optimization manual, Sapphire Rapids / Golden Cove), so one row's two accumulators alone
// would run at a fifth of the peak: R x 2 x S is kept >= 12. The split is exact (integer
// sums modulo 2^32, added at the end). Per group: 2 loads of B, R broadcasts, 2R VPDPBUSD.
__attribute__((target("avx512f,avx512bw,avx512vnni")))
inline __m512i dpbusd(__m512i acc, __m512i a, __m512i b) { return _mm512_dpbusd_epi32(acc, a, b); }

template <int R, int S>
__attribute__((target("avx512f,avx512bw,avx512vnni")))
void rows_vnni(const uint8_t* a, int64_t lda, const uint8_t* bp, int64_t groups, int32_t* out, bool accumulate) {
  __m512i acc[S * R * 2];  // [set][row][half]
#pragma GCC unroll 32
  for (int i = 0; i < S * R * 2; ++i) {
    acc[i] = _mm512_setzero_si512();
    // Each a value of its own: from one shared zero, GCC 12 copies every accumulator to a
    // new register on each trip around the loop (as many moves as VPDPBUSDs, seen in objdump).
    __asm__("" : "+v"(acc[i]));
  }
  int64_t g = 0;
  for (; g + S <= groups; g += S, bp += S * 128) {
#pragma GCC unroll 8
    for (int s = 0; s < S; ++s) {
      __m512i b0 = _mm512_loadu_si512(bp + s * 128), b1 = _mm512_loadu_si512(bp + s * 128 + 64);
      // Loaded once into registers, not folded into each row's VPDPBUSD as a memory operand.
      __asm__("" : "+v"(b0), "+v"(b1));
#pragma GCC unroll 8
      for (int i = 0; i < R; ++i) {
        const __m512i av = _mm512_set1_epi32(group_at(a + i * lda, g + s));
        acc[(s * R + i) * 2] = dpbusd(acc[(s * R + i) * 2], av, b0);
        acc[(s * R + i) * 2 + 1] = dpbusd(acc[(s * R + i) * 2 + 1], av, b1);
      }
    }
  }
  for (; g < groups; ++g, bp += 128) {  // the last groups % S, into set 0
    const __m512i b0 = _mm512_loadu_si512(bp), b1 = _mm512_loadu_si512(bp + 64);
#pragma GCC unroll 8
    for (int i = 0; i < R; ++i) {
      const __m512i av = _mm512_set1_epi32(group_at(a + i * lda, g));
      acc[i * 2] = dpbusd(acc[i * 2], av, b0);
      acc[i * 2 + 1] = dpbusd(acc[i * 2 + 1], av, b1);
    }
  }
#pragma GCC unroll 8
  for (int i = 0; i < R; ++i) {
    __m512i lo = acc[i * 2], hi = acc[i * 2 + 1];
#pragma GCC unroll 8
    for (int s = 1; s < S; ++s) {
      lo = _mm512_add_epi32(lo, acc[(s * R + i) * 2]);
      hi = _mm512_add_epi32(hi, acc[(s * R + i) * 2 + 1]);
    }
    if (accumulate) {
      lo = _mm512_add_epi32(lo, _mm512_loadu_si512(out + i * 32));
      hi = _mm512_add_epi32(hi, _mm512_loadu_si512(out + i * 32 + 16));
    }
    _mm512_storeu_si512(out + i * 32, lo);
    _mm512_storeu_si512(out + i * 32 + 16, hi);
  }
}

// 6 rows x 16 columns: 12 ymm accumulators, 2 for B, 1 broadcast (15 of 16 registers).
__attribute__((target("avx2")))
void micro_avx2(const uint8_t* a, int64_t lda, const uint8_t* bp, int64_t groups, int32_t* out,
                bool accumulate) {
  constexpr int kMr = 6;
  __m256i acc[kMr][2];
#pragma GCC unroll 6
  for (int i = 0; i < kMr; ++i) {
    const auto* o = reinterpret_cast<const __m256i*>(out + i * 16);
    acc[i][0] = accumulate ? _mm256_loadu_si256(o) : _mm256_setzero_si256();
    acc[i][1] = accumulate ? _mm256_loadu_si256(o + 1) : _mm256_setzero_si256();
  }
  for (int64_t g = 0; g < groups; ++g, bp += 64) {
    const __m256i b0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(bp));
    const __m256i b1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(bp + 32));
#pragma GCC unroll 6
    for (int i = 0; i < kMr; ++i) {
      const __m256i av = _mm256_set1_epi32(group_at(a + i * lda, g));
      acc[i][0] = _mm256_add_epi32(acc[i][0], _mm256_madd_epi16(av, b0));
      acc[i][1] = _mm256_add_epi32(acc[i][1], _mm256_madd_epi16(av, b1));
    }
  }
#pragma GCC unroll 6
  for (int i = 0; i < kMr; ++i) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i * 16), acc[i][0]);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i * 16 + 8), acc[i][1]);
  }
}

// 4 rows x 8 columns: 8 xmm accumulators (SSE2 has 16 registers on x86-64).
void micro_sse2(const uint8_t* a, int64_t lda, const uint8_t* bp, int64_t groups, int32_t* out,
                bool accumulate) {
  constexpr int kMr = 4;
  __m128i acc[kMr][2];
#pragma GCC unroll 4
  for (int i = 0; i < kMr; ++i) {
    const auto* o = reinterpret_cast<const __m128i*>(out + i * 8);
    acc[i][0] = accumulate ? _mm_loadu_si128(o) : _mm_setzero_si128();
    acc[i][1] = accumulate ? _mm_loadu_si128(o + 1) : _mm_setzero_si128();
  }
  for (int64_t g = 0; g < groups; ++g, bp += 32) {
    const __m128i b0 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(bp));
    const __m128i b1 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(bp + 16));
#pragma GCC unroll 4
    for (int i = 0; i < kMr; ++i) {
      const __m128i av = _mm_set1_epi32(group_at(a + i * lda, g));
      acc[i][0] = _mm_add_epi32(acc[i][0], _mm_madd_epi16(av, b0));
      acc[i][1] = _mm_add_epi32(acc[i][1], _mm_madd_epi16(av, b1));
    }
  }
#pragma GCC unroll 4
  for (int i = 0; i < kMr; ++i) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i * 8), acc[i][0]);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i * 8 + 4), acc[i][1]);
  }
}

// K chunk of 256 groups (1 KiB of K): the panel's B chunk (32 KiB) and one tile's A chunk
// (8 KiB) fit a 48 KiB L1d, and K = 2048 takes 2 chunks instead of 4, so half the partial
// tiles go through the panel buffer. 128 and 256 ran the kernel loop alike with no C (a
// throwaway loop over micro_vnni); the whole M = 512 call was about 3 % faster with 256.
constexpr Kernel kVnni{Isa::avx512_vnni, 8, 32, AFormat::u8_biased, 1, 4, 256, micro_vnni, nullptr, nullptr,
                       vnni_rows, kVnniShortM, Isa::avx512_vnni, add_bias_avx512, micro_vnni_to_c, true};
constexpr Kernel kAvx2{Isa::avx2, 6, 16, AFormat::int16_pairs, 1, 0, 128, micro_avx2, nullptr, nullptr};
constexpr Kernel kSse2{Isa::sse2, 4, 8, AFormat::int16_pairs, 1, 0, 128, micro_sse2, nullptr, nullptr};

}  // namespace

void vnni_rows(int rows, const uint8_t* a, int64_t lda, const uint8_t* bp, int64_t groups, int32_t* out,
               bool accumulate) {
  switch (rows) {  // S: 16, 16, 12, 16, 20, 24, 14, 16 accumulators (of 32 zmm registers)
    case 1: return rows_vnni<1, 8>(a, lda, bp, groups, out, accumulate);
    case 2: return rows_vnni<2, 4>(a, lda, bp, groups, out, accumulate);
    case 3: return rows_vnni<3, 2>(a, lda, bp, groups, out, accumulate);
    case 4: return rows_vnni<4, 2>(a, lda, bp, groups, out, accumulate);
    case 5: return rows_vnni<5, 2>(a, lda, bp, groups, out, accumulate);
    case 6: return rows_vnni<6, 2>(a, lda, bp, groups, out, accumulate);
    case 7: return rows_vnni<7, 1>(a, lda, bp, groups, out, accumulate);
    default: return rows_vnni<8, 1>(a, lda, bp, groups, out, accumulate);  // micro_vnni's tile, all of K
  }
}

__attribute__((target("avx512f")))
void add_bias_avx512(int32_t* dst, const int32_t* t, const int32_t* bias, int64_t len) {
  int64_t i = 0;
  for (; i + 16 <= len; i += 16) {
    _mm512_storeu_si512(dst + i, _mm512_add_epi32(_mm512_loadu_si512(t + i), _mm512_loadu_si512(bias + i)));
  }
  if (i < len) {  // the last 1..15 columns under a mask
    const __mmask16 k = static_cast<__mmask16>((1u << (len - i)) - 1);
    _mm512_mask_storeu_epi32(dst + i, k, _mm512_add_epi32(_mm512_maskz_loadu_epi32(k, t + i), _mm512_maskz_loadu_epi32(k, bias + i)));
  }
}

const Kernel& sse2_kernel() { return kSse2; }
const Kernel& avx2_kernel() { return kAvx2; }
const Kernel& vnni_kernel() { return kVnni; }

}  // namespace ork::ref::detail
