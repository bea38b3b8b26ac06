// int4's slice sum on x86 (layout_host_i16.h). The output layout: docs/regcmd-contract.md
// section 2; every output atom is 16 bytes, 8 int16 (driver/common/npu_layout.h).
#include "lib/matmul/layout_host_i16.h"

#if defined(__x86_64__)
#include <immintrin.h>

#include <algorithm>

#include "driver/common/cpu_features.h"
#include "driver/common/kernel_checks.h"
#include "lib/matmul/layout_host_sum.h"

ORK_KERNEL_CHECKS_BEGIN  // driver/common/kernel_checks.h
namespace ork::matmul {
namespace {

// int4's int16 partials, 8 rows x 8 columns a block: AVX2 keeps each row's 8 int32 sums in one
// ymm (VPMOVSXWD widens a row's 16-byte atom); no accumulator leaves a register while the
// slices go by (the portable loop's 64 lanes spill). The row loops are unrolled whole: inlined
// into `rows_i16_avx2`'s loop, GCC 12 kept the 8 sums in a stack array, a load and a store
// per row per slice (perf annotate, 256 x 3584 x 18944 with AVX-512 hidden).
#define ORK_AVX2 __attribute__((target("avx2"), always_inline)) inline
#define ORK_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl"), always_inline)) inline

ORK_AVX2 void block_i16_avx2(const int16_t* const* s, int64_t count, int64_t at, int32_t* c, int64_t n_len, bool first) {
  __m256i v[kHostRowBlock];
#pragma GCC unroll 8
  for (int64_t r = 0; r < kHostRowBlock; ++r) {
    v[r] = _mm256_cvtepi16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(s[0] + at + r * 8)));
    if (!first) v[r] = _mm256_add_epi32(v[r], _mm256_loadu_si256(reinterpret_cast<const __m256i*>(c + r * n_len)));
  }
  for (int64_t j = 1; j < count; ++j) {
    const int16_t* sj = s[j] + at;
#pragma GCC unroll 8
    for (int64_t r = 0; r < kHostRowBlock; ++r)
      v[r] = _mm256_add_epi32(v[r], _mm256_cvtepi16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(sj + r * 8))));
  }
#pragma GCC unroll 8
  for (int64_t r = 0; r < kHostRowBlock; ++r) _mm256_storeu_si256(reinterpret_cast<__m256i*>(c + r * n_len), v[r]);
}

// Two surfaces at once (g and g + 1, `surface` elements apart): a row's 8 + 8 sums are one
// zmm, 64 contiguous bytes of C (one cache line when C is 64-byte aligned), 8 zmm for the
// block. (Rows paired in one zmm instead need 512-bit inserts and extracts, whose GCC 12
// forms pass an undefined vector that -Wmaybe-uninitialized rejects.)
ORK_AVX512 __m512i pair_i16(const int16_t* p, int64_t surface) {
  const __m256i two = _mm256_inserti128_si256(
      _mm256_castsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))),
      _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + surface)), 1);
  return _mm512_maskz_cvtepi16_epi32(0xffff, two);  // all lanes; the plain form's undefined pass-through warns
}

ORK_AVX512 void block2_i16_avx512(const int16_t* const* s, int64_t count, int64_t at, int64_t surface, int32_t* c,
                                  int64_t n_len, bool first) {
  __m512i v[kHostRowBlock];
  for (int64_t r = 0; r < kHostRowBlock; ++r) {
    v[r] = pair_i16(s[0] + at + r * 8, surface);
    if (!first) v[r] = _mm512_add_epi32(v[r], _mm512_loadu_si512(c + r * n_len));
  }
  for (int64_t j = 1; j < count; ++j) {
    const int16_t* sj = s[j] + at;
    for (int64_t r = 0; r < kHostRowBlock; ++r) v[r] = _mm512_add_epi32(v[r], pair_i16(sj + r * 8, surface));
  }
  for (int64_t r = 0; r < kHostRowBlock; ++r) _mm512_storeu_si512(c + r * n_len, v[r]);
}

// One row's atom (AVX2) or two surfaces' atoms (AVX-512) from every slice: the rows of a
// block past its last whole 8 (decode's one row).
ORK_AVX2 void atom_i16_avx2(const int16_t* const* s, int64_t count, int64_t at, int32_t* c, bool first) {
  __m256i v = _mm256_cvtepi16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(s[0] + at)));
  if (!first) v = _mm256_add_epi32(v, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(c)));
  for (int64_t j = 1; j < count; ++j)
    v = _mm256_add_epi32(v, _mm256_cvtepi16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(s[j] + at))));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(c), v);
}
ORK_AVX512 void atom2_i16_avx512(const int16_t* const* s, int64_t count, int64_t at, int64_t surface, int32_t* c,
                                 bool first) {
  __m512i v = pair_i16(s[0] + at, surface);
  if (!first) v = _mm512_add_epi32(v, _mm512_loadu_si512(c));
  for (int64_t j = 1; j < count; ++j) v = _mm512_add_epi32(v, pair_i16(s[j] + at, surface));
  _mm512_storeu_si512(c, v);
}

// A block of R < 8 rows (decode; a stacked plan's diagonal blocks at M < 8) of P surfaces
// (`at` is row m0 of the first, the next `surface` elements on): each slice's R atoms of a
// surface, R x 16 contiguous bytes, read together while the P x R sums stay in registers, and
// each row's P x 8 sums stored once (P = 2: one 64-byte line of C a row). The atoms one row
// at a time (`atom_i16_avx2`, `atom2_i16_avx512`) read each slice's same line R times over,
// with the slice loop's overhead per row. AVX-512 CPUs run it too: it measured faster there
// than their atoms (docs/matmul-schedule.md "Short blocks").
template <int R, int P>
ORK_AVX2 void short_block_i16_avx2(const int16_t* const* s, int64_t count, int64_t at, int64_t surface, int32_t* c,
                                   int64_t n_len, bool first) {
  __m256i v[P][R];
#pragma GCC unroll 8
  for (int p = 0; p < P; ++p)
#pragma GCC unroll 7
    for (int r = 0; r < R; ++r) {
      v[p][r] = _mm256_cvtepi16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(s[0] + at + p * surface + r * 8)));
      if (!first)
        v[p][r] = _mm256_add_epi32(v[p][r], _mm256_loadu_si256(reinterpret_cast<const __m256i*>(c + r * n_len + p * 8)));
    }
  for (int64_t j = 1; j < count; ++j) {
    const int16_t* sj = s[j] + at;
#pragma GCC unroll 8
    for (int p = 0; p < P; ++p)
#pragma GCC unroll 7
      for (int r = 0; r < R; ++r)
        v[p][r] = _mm256_add_epi32(
            v[p][r], _mm256_cvtepi16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(sj + p * surface + r * 8))));
  }
#pragma GCC unroll 8
  for (int p = 0; p < P; ++p)
#pragma GCC unroll 7
    for (int r = 0; r < R; ++r) _mm256_storeu_si256(reinterpret_cast<__m256i*>(c + r * n_len + p * 8), v[p][r]);
}

// Surfaces more than this many bytes apart (a stacked plan's, or rows after a whole block)
// are no stream the hardware follows (below, prefetch_rows_ahead; docs/matmul-schedule.md).
constexpr int64_t kSparseSurfaceBytes = 128;

// Rows [m0, m0 + R) of surfaces [0, full), R < 8: the surfaces in pairs, an odd last one
// alone; with P > 2 (kShortRowsSparse) P at a time first.
template <int R, int P>
__attribute__((target("avx2"))) void short_rows_i16_avx2(const int16_t* const* s, int64_t count, int64_t surface,
                                                         int32_t* c, int64_t n_len, bool first, int64_t m0,
                                                         int64_t full) {
  int32_t* row = c + m0 * n_len;
  int64_t g = 0;
  if constexpr (P > 2)
    for (; g + P <= full; g += P)
      short_block_i16_avx2<R, P>(s, count, g * surface + m0 * 8, surface, row + g * 8, n_len, first);
  for (; g + 2 <= full; g += 2)
    short_block_i16_avx2<R, 2>(s, count, g * surface + m0 * 8, surface, row + g * 8, n_len, first);
  if (g < full) short_block_i16_avx2<R, 1>(s, count, g * surface + m0 * 8, surface, row + g * 8, n_len, first);
}
using ShortRowsFn = void (*)(const int16_t* const*, int64_t, int64_t, int32_t*, int64_t, bool, int64_t, int64_t);
template <int R>
constexpr int kSparseP = std::max(2, short_block_surfaces(R));
constexpr ShortRowsFn kShortRows[kHostRowBlock] = {
    nullptr, short_rows_i16_avx2<1, 2>, short_rows_i16_avx2<2, 2>, short_rows_i16_avx2<3, 2>,
    short_rows_i16_avx2<4, 2>, short_rows_i16_avx2<5, 2>, short_rows_i16_avx2<6, 2>, short_rows_i16_avx2<7, 2>};
// Surfaces more than 32 bytes apart (a stacked plan's diagonal blocks at M < 8, 64 bytes at
// 1 x 18944 x 3584): P = short_block_surfaces(R) at least 2, 8 at one row and 4 at two, so a
// slice's pass reads 8 lines of C' at once and the slice loop runs a quarter as often. One or
// two atoms side by side (an unstacked plan's decode) keep the pairs: 4 a pass measured slower
// there (docs/matmul-schedule.md "int4 at one and two rows", "C' by task").
constexpr ShortRowsFn kShortRowsSparse[kHostRowBlock] = {
    nullptr, short_rows_i16_avx2<1, kSparseP<1>>, short_rows_i16_avx2<2, kSparseP<2>>,
    short_rows_i16_avx2<3, kSparseP<3>>, short_rows_i16_avx2<4, kSparseP<4>>, short_rows_i16_avx2<5, kSparseP<5>>,
    short_rows_i16_avx2<6, kSparseP<6>>, short_rows_i16_avx2<7, kSparseP<7>>};
const ShortRowsFn* short_rows_for(int64_t surface) { return surface * 2 > 32 ? kShortRowsSparse : kShortRows; }

// A band of C's columns: surfaces [g0, g1) over rows [r0, r1), rows in 8-row blocks and the
// band's surfaces inner, so each row of C gets one contiguous piece of the band (at
// kBandSurfaces, 2 KiB; 8 to 256 surfaces measured alike at K = N = 2048, 64 to 256 the best
// at the 7B FFN shape) and each slice is read in the band's surfaces' streams, front to back.
// Bands, not whole rows: rows outer across every surface read each slice at a stride of
// mp x 16 bytes (2 KiB at M = 128), a new page every other read, far past the TLB at the
// 7B FFN shape (2,368 surfaces a slice). Bands, not single surface pairs down all rows,
// where C's rows are a multiple of 4 KiB apart (8 KiB at N = 2048): a pair wrote one
// 64-byte line per row, a column of C's lines in a few cache sets, 2.5-3x slower there
// (a micro-benchmark of unpack_c_group, int4 at 2048 x 2048, M = 16..256); elsewhere
// AVX-512 keeps the pairs (sum_i16_surfaces_avx512).
// Called, not inlined, by the ISA's loop (a target function inlines only into its own ISA).
constexpr int64_t kBandSurfaces = 64;

__attribute__((target("avx2"))) void band_i16_avx2(const int16_t* const* s, int64_t count, int64_t surface,
                                                   int32_t* c, int64_t n_len, bool first, int64_t r0, int64_t r1,
                                                   int64_t g0, int64_t g1) {
  for (int64_t m0 = r0; m0 < r1; m0 += kHostRowBlock) {
    const int64_t rows = std::min(kHostRowBlock, r1 - m0);
    for (int64_t g = g0; g < g1; ++g) {
      if (rows == kHostRowBlock) {
        block_i16_avx2(s, count, g * surface + m0 * 8, c + m0 * n_len + g * 8, n_len, first);
        continue;
      }
      for (int64_t m = m0; m < m0 + rows; ++m) atom_i16_avx2(s, count, g * surface + m * 8, c + m * n_len + g * 8, first);
    }
  }
}
// AVX-512: the band's surfaces in pairs (a row's 16 sums of two surfaces in one zmm, one
// 64-byte line of C), an odd last surface as AVX2 does it.
__attribute__((target("avx512f,avx512bw,avx512vl"))) void band_i16_avx512(const int16_t* const* s, int64_t count,
                                                                          int64_t surface, int32_t* c,
                                                                          int64_t n_len, bool first, int64_t r0,
                                                                          int64_t r1, int64_t g0, int64_t g1) {
  const int64_t pairs_end = g0 + (g1 - g0) / 2 * 2;
  for (int64_t m0 = r0; m0 < r1; m0 += kHostRowBlock) {
    const int64_t rows = std::min(kHostRowBlock, r1 - m0);
    for (int64_t g = g0; g < pairs_end; g += 2) {
      if (rows == kHostRowBlock) {
        block2_i16_avx512(s, count, g * surface + m0 * 8, surface, c + m0 * n_len + g * 8, n_len, first);
        continue;
      }
      for (int64_t m = m0; m < m0 + rows; ++m)
        atom2_i16_avx512(s, count, g * surface + m * 8, surface, c + m * n_len + g * 8, first);
    }
    if (pairs_end == g1) continue;
    if (rows == kHostRowBlock) {
      block_i16_avx2(s, count, pairs_end * surface + m0 * 8, c + m0 * n_len + pairs_end * 8, n_len, first);
      continue;
    }
    for (int64_t m = m0; m < m0 + rows; ++m)
      atom_i16_avx2(s, count, pairs_end * surface + m * 8, c + m * n_len + pairs_end * 8, first);
  }
}
// AVX-512 where C's rows are not a multiple of 4 KiB apart: rows outer, each 8-row block
// across every surface pair, C written along its rows (8 streams, one 64-byte line a row a
// pair) and each slice read 128 bytes a surface, a new 4 KiB page every other read. Neither
// stream is one the hardware prefetchers follow here, so the loop prefetches the pair
// kSumPrefetchPairs ahead itself: its runs in every slice, and C's 8 lines for writing
// (PREFETCHW, where the CPU has it). A zmm holds two rows of one surface (VPMOVSXWD from one
// 32-byte load: rows r and r + 1 are adjacent in the native layout), and the pair's two zmm
// become the two rows' lines by one VSHUFI64X2 each: per slice two loads and two adds for
// two rows of a pair, where `block2_i16_avx512` takes four loads, two inserts, two widenings
// and two adds. Measured: docs/matmul-schedule.md "Host cost per dtype".
constexpr int64_t kSumPrefetchPairs = 8;  // 16 surfaces, 512 bytes of a row of C

ORK_AVX512 __m512i two_rows_i16(const int16_t* p) {
  // all lanes; the plain form's undefined pass-through warns (GCC 12)
  return _mm512_maskz_cvtepi16_epi32(0xffff, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
}
// Rows m .. m + 7 of surfaces g and g + 1 (`at` is row m of surface g), every slice.
ORK_AVX512 void rows8_pair_i16_avx512(const int16_t* const* s, int64_t count, int64_t at, int64_t surface, int32_t* c,
                                      int64_t n_len, bool first) {
  // Unrolled whole, so that the 8 sums stay in registers (GCC 12 kept them on the stack).
  __m512i lo[4], hi[4];  // lo[i]: rows 2i and 2i + 1 of surface g (8 + 8 sums); hi[i]: of g + 1
#pragma GCC unroll 4
  for (int64_t i = 0; i < 4; ++i) {
    lo[i] = two_rows_i16(s[0] + at + i * 16);
    hi[i] = two_rows_i16(s[0] + at + surface + i * 16);
  }
  for (int64_t j = 1; j < count; ++j) {
    const int16_t* sj = s[j] + at;
#pragma GCC unroll 4
    for (int64_t i = 0; i < 4; ++i) {
      lo[i] = _mm512_add_epi32(lo[i], two_rows_i16(sj + i * 16));
      hi[i] = _mm512_add_epi32(hi[i], two_rows_i16(sj + surface + i * 16));
    }
  }
#pragma GCC unroll 4
  for (int64_t i = 0; i < 4; ++i) {
    int32_t* even = c + 2 * i * n_len;
    int32_t* odd = even + n_len;
    __m512i e = _mm512_maskz_shuffle_i64x2(0xff, lo[i], hi[i], 0x44);  // row 2i: g's 8 sums, then g + 1's
    __m512i o = _mm512_maskz_shuffle_i64x2(0xff, lo[i], hi[i], 0xee);  // row 2i + 1
    if (!first) {
      e = _mm512_add_epi32(e, _mm512_loadu_si512(even));
      o = _mm512_add_epi32(o, _mm512_loadu_si512(odd));
    }
    _mm512_storeu_si512(even, e);
    _mm512_storeu_si512(odd, o);
  }
}

// The block's two 128-byte runs of the pair kSumPrefetchPairs ahead in every slice, and with
// PREFETCHW the 8 lines of C it will write (a prefetch past a buffer's end is dropped, never
// a fault).
__attribute__((target("avx512f,avx512bw,avx512vl,prfchw"), always_inline)) inline void prefetch_pair_ahead(
    const int16_t* const* s, int64_t count, int64_t at, int64_t surface, int32_t* c, int64_t n_len, bool for_write) {
  for (int64_t j = 0; j < count; ++j) {
    const char* ahead = reinterpret_cast<const char*>(s[j] + at + 2 * kSumPrefetchPairs * surface);
    const char* ahead2 = ahead + surface * static_cast<int64_t>(sizeof(int16_t));
    _mm_prefetch(ahead, _MM_HINT_T0);
    _mm_prefetch(ahead + 64, _MM_HINT_T0);
    _mm_prefetch(ahead2, _MM_HINT_T0);
    _mm_prefetch(ahead2 + 64, _MM_HINT_T0);
  }
  if (!for_write) return;
  // PREFETCHW: __builtin_prefetch for writing under the prfchw target (GCC and clang alike;
  // clang declares _m_prefetchw only in x86intrin.h)
  for (int64_t r = 0; r < kHostRowBlock; ++r) __builtin_prefetch(c + r * n_len + 2 * kSumPrefetchPairs * 8, 1, 3);
}

// A block of fewer than 8 rows inside a 32-row visit (M >= 256; a visit of fewer than 8 rows,
// decode and a stacked plan's diagonal blocks at M < 8, is `short_rows_i16_avx2`'s on both
// ISAs, which reads each slice's run once per surface pair without prefetches and measured
// faster, docs/matmul-schedule.md "Short blocks"): its `bytes`-long run (16 per row) of a
// surface ahead, in every slice. A stacked plan's
// surfaces are S x M rows deep (896 bytes at 4 x 18944 x 3584, fourteen slices), so each
// slice was read 16 to 112 bytes every few lines, no stream a prefetcher followed: int4 took
// 1.6-2.5x int8's CPU time at M = 1..4 there (docs/matmul-schedule.md). Only where surfaces
// are more than kSparseSurfaceBytes apart: closer, the reads are a stream the hardware
// follows, and the prefetches measured a cost (1 x 3584 x 18944, int4 0.82x int8's CPU time
// without, 0.98x with).
__attribute__((always_inline)) inline void prefetch_rows_ahead(const int16_t* const* s, int64_t count, int64_t at,
                                                               int64_t bytes) {
  for (int64_t j = 0; j < count; ++j) {
    const char* ahead = reinterpret_cast<const char*>(s[j] + at);
    __builtin_prefetch(ahead, 0, 3);
    __builtin_prefetch(ahead + bytes - 1, 0, 3);
  }
}

// One 8-row block (or the last, shorter one) of surfaces g and g + 1.
__attribute__((target("avx512f,avx512bw,avx512vl,prfchw"), always_inline)) inline void pair_block_i16_avx512(
    const int16_t* const* s, int64_t count, int64_t surface, int32_t* c, int64_t n_len, bool first, int64_t m0,
    int64_t rows, int64_t g, bool for_write, bool sparse) {
  const int64_t at = g * surface + m0 * 8;
  if (rows < kHostRowBlock) {
    if (sparse) {
      prefetch_rows_ahead(s, count, at + 2 * kSumPrefetchPairs * surface, rows * 16);
      prefetch_rows_ahead(s, count, at + (2 * kSumPrefetchPairs + 1) * surface, rows * 16);
    }
    for (int64_t m = m0; m < m0 + rows; ++m)
      atom2_i16_avx512(s, count, g * surface + m * 8, surface, c + m * n_len + g * 8, first);
    return;
  }
  prefetch_pair_ahead(s, count, at, surface, c + m0 * n_len + g * 8, n_len, for_write);
  rows8_pair_i16_avx512(s, count, at, surface, c + m0 * n_len + g * 8, n_len, first);
}

// Rows per visit of a surface where a surface is a 4 KiB page or more (M >= 256): the
// visit's 8-row blocks one after another, so each slice's page is read 512 bytes a visit,
// not 128. Rows outer one block at a time read a new page per surface in every slice
// (7,104 a block at 256 x 3584 x 18944, three slices, against int8's 4,736), none of them
// again until the next block, past the TLB. Measured (ork_bench --host-dtypes, M = 256 and
// 512 x 3584 x 18944, int4 over int8's CPU time, medians of three runs, 2026-12-05, load
// average 5.6-9.5): AVX-512 8 rows 1.46x / 1.45x, 16 rows 1.04x / 1.05x, 32 rows 1.03x / 0.92x; AVX2
// 1.55x / 1.66x, 1.64x / 1.73x, 1.45x / 1.38x. AVX2 writes half a line of C a row a surface,
// so its visit takes the surfaces in pairs, each block's two one after the other: a row's line
// is whole before the next block, where surface after surface its second half came 31 rows'
// writes later (a likely cause, not measured: at N = 18944 C's rows are 18.5 pages apart, so
// a column of 32 rows' lines sits in two L1 sets). AVX2, 2026-12-06, three runs interleaved,
// load average 8.5-9.0, min / median / max at M = 256 and 512: before 1.53 / 1.56 / 1.65x and
// 1.49 / 1.60 / 1.79x; sums kept in registers (block_i16_avx2) 1.19 / 1.52 / 1.56x and
// 1.21 / 1.25 / 1.48x; both 1.02 / 1.16 / 1.23x and 1.03 / 1.06 / 1.13x.
constexpr int64_t kVisitRows = 4 * kHostRowBlock;
constexpr int64_t kPageBytes = 4096;
int64_t visit_rows(int64_t surface) {
  return surface * static_cast<int64_t>(sizeof(int16_t)) >= kPageBytes ? kVisitRows : kHostRowBlock;
}

__attribute__((target("avx512f,avx512bw,avx512vl,prfchw"))) void rows_pairs_i16_avx512(
    const int16_t* const* s, int64_t count, int64_t surface, int32_t* c, int64_t n_len, bool first, int64_t r0,
    int64_t r1, int64_t pairs) {
  const bool for_write = cpu::has(cpu::kPrefetchw);
  const bool sparse = surface * static_cast<int64_t>(sizeof(int16_t)) > kSparseSurfaceBytes;
  const int64_t visit = visit_rows(surface);
  for (int64_t v0 = r0; v0 < r1; v0 += visit) {
    const int64_t v1 = std::min(r1, v0 + visit);
    if (v1 - v0 < kHostRowBlock) {  // below M = 8, or M's last rows: AVX2's kernel, whole pairs
      short_rows_for(surface)[v1 - v0](s, count, surface, c, n_len, first, v0, 2 * pairs);
      continue;
    }
    if (v1 - v0 <= kHostRowBlock) {  // one block (below M = 256): its rows fixed for the pass
      for (int64_t g = 0; g < 2 * pairs; g += 2)
        pair_block_i16_avx512(s, count, surface, c, n_len, first, v0, v1 - v0, g, for_write, sparse);
      continue;
    }
    for (int64_t g = 0; g < 2 * pairs; g += 2)
      for (int64_t m0 = v0; m0 < v1; m0 += kHostRowBlock)
        pair_block_i16_avx512(s, count, surface, c, n_len, first, m0, std::min(kHostRowBlock, v1 - m0), g, for_write,
                              sparse);
  }
}

// AVX2 where C's rows are not a multiple of 4 KiB apart: rows outer as AVX-512's loop above,
// each 8-row block across every surface, one surface at a time (a row's 8 sums are one ymm,
// half a line of C; 8 ymm for the block, `block_i16_avx2`), the surface kSumPrefetchSurfaces
// ahead prefetched in every slice, and with PREFETCHW C's lines it will write (one line per
// row every second surface); from M = 256 a visit of 32 rows takes the surfaces in pairs
// (visit_rows); a visit of fewer than 8 rows (M < 8, M's last rows) is `short_rows_i16_avx2`'s,
// surface pairs without prefetches. The bands it replaced there read each slice in 64 surfaces'
// streams per row block: 2.6-5x int8's time at 128 x 3584 x 18944 with AVX-512 hidden
// (docs/matmul-schedule.md "Host cost per dtype").
constexpr int64_t kSumPrefetchSurfaces = 2 * kSumPrefetchPairs;  // AVX-512's distance in surfaces

__attribute__((target("avx2,prfchw"), always_inline)) inline void prefetch_surface_ahead(
    const int16_t* const* s, int64_t count, int64_t at, int64_t surface, int32_t* c, int64_t n_len, bool for_write) {
  for (int64_t j = 0; j < count; ++j) {
    const char* ahead = reinterpret_cast<const char*>(s[j] + at + kSumPrefetchSurfaces * surface);
    _mm_prefetch(ahead, _MM_HINT_T0);
    _mm_prefetch(ahead + 64, _MM_HINT_T0);
  }
  if (!for_write) return;
  for (int64_t r = 0; r < kHostRowBlock; ++r) __builtin_prefetch(c + r * n_len + kSumPrefetchSurfaces * 8, 1, 3);
}

// One 8-row block (or the last, shorter one) of surface g.
__attribute__((target("avx2,prfchw"), always_inline)) inline void surface_block_i16_avx2(
    const int16_t* const* s, int64_t count, int64_t surface, int32_t* c, int64_t n_len, bool first, int64_t m0,
    int64_t rows, int64_t g, bool for_write, bool sparse) {
  const int64_t at = g * surface + m0 * 8;
  if (rows < kHostRowBlock) {
    if (sparse) prefetch_rows_ahead(s, count, at + kSumPrefetchSurfaces * surface, rows * 16);
    for (int64_t m = m0; m < m0 + rows; ++m) atom_i16_avx2(s, count, g * surface + m * 8, c + m * n_len + g * 8, first);
    return;
  }
  prefetch_surface_ahead(s, count, at, surface, c + m0 * n_len + g * 8, n_len, for_write && g % 2 == 0);
  block_i16_avx2(s, count, at, c + m0 * n_len + g * 8, n_len, first);
}

__attribute__((target("avx2,prfchw"))) void rows_i16_avx2(const int16_t* const* s, int64_t count, int64_t surface,
                                                          int32_t* c, int64_t n_len, bool first, int64_t r0,
                                                          int64_t r1, int64_t full) {
  const bool for_write = cpu::has(cpu::kPrefetchw);
  const bool sparse = surface * static_cast<int64_t>(sizeof(int16_t)) > kSparseSurfaceBytes;
  const int64_t visit = visit_rows(surface);
  for (int64_t v0 = r0; v0 < r1; v0 += visit) {
    const int64_t v1 = std::min(r1, v0 + visit);
    if (v1 - v0 < kHostRowBlock) {  // below M = 8, or M's last rows: each slice's atoms of a surface at once
      short_rows_for(surface)[v1 - v0](s, count, surface, c, n_len, first, v0, full);
      continue;
    }
    if (v1 - v0 <= kHostRowBlock) {  // one block (below M = 256): its rows fixed for the pass
      for (int64_t g = 0; g < full; ++g)
        surface_block_i16_avx2(s, count, surface, c, n_len, first, v0, v1 - v0, g, for_write, sparse);
      continue;
    }
    for (int64_t g = 0; g < full; g += 2)  // a pair's two surfaces block by block (visit_rows)
      for (int64_t m0 = v0; m0 < v1; m0 += kHostRowBlock)
        for (int64_t h = g; h < std::min(full, g + 2); ++h)
          surface_block_i16_avx2(s, count, surface, c, n_len, first, m0, std::min(kHostRowBlock, v1 - m0), h,
                                 for_write, sparse);
  }
}

// C's rows a multiple of 4 KiB apart (N a multiple of 1024): bands, measured best there (a
// pair down all rows, AVX-512's layout before, wrote a column of C's lines in a few cache
// sets: 2.4-2.6x int8's time at 128 x 2048 x 2048, bands 0.90-0.97x).
bool rows_4k_apart(int64_t n_len) { return (n_len * 4) % 4096 == 0; }

}  // namespace

void sum_i16_surfaces_avx2(const int16_t* const* s, int64_t count, int64_t surface, int32_t* c, int64_t n_len,
                           bool first, int64_t r0, int64_t r1, int64_t full) {
  if (!rows_4k_apart(n_len)) return rows_i16_avx2(s, count, surface, c, n_len, first, r0, r1, full);
  for (int64_t g0 = 0; g0 < full; g0 += kBandSurfaces)
    band_i16_avx2(s, count, surface, c, n_len, first, r0, r1, g0, std::min(full, g0 + kBandSurfaces));
}

void sum_i16_surfaces_avx512(const int16_t* const* s, int64_t count, int64_t surface, int32_t* c, int64_t n_len,
                             bool first, int64_t r0, int64_t r1, int64_t full) {
  int64_t g0 = 0;
  if (!rows_4k_apart(n_len)) {  // rows outer across the surface pairs, prefetching; an odd last surface in a band
    rows_pairs_i16_avx512(s, count, surface, c, n_len, first, r0, r1, full / 2);
    g0 = full / 2 * 2;
  }
  for (; g0 < full; g0 += kBandSurfaces)
    band_i16_avx512(s, count, surface, c, n_len, first, r0, r1, g0, std::min(full, g0 + kBandSurfaces));
}

}  // namespace ork::matmul
ORK_KERNEL_CHECKS_END
#undef ORK_AVX2
#undef ORK_AVX512
#endif
