// The slice-sum loop of the output unpacker per instruction set (layout_host_sum.h). The
// output layout: docs/regcmd-contract.md section 2 (output_index in layout.cpp is the same
// fact per element); every output atom is 16 bytes (driver/common/npu_layout.h).
#include "lib/matmul/layout_host_sum.h"

#include <algorithm>
#include <cerrno>
#include <string>
#include <type_traits>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "driver/common/cpu_features.h"
#include "driver/common/fp16.h"
#include "driver/common/npu_layout.h"

namespace ork::matmul {
namespace {

constexpr int64_t kSumAtom = hw::kAtomBytes;
static_assert(kSumAtom == 16);

// int32 addition modulo 2^32 (the oracle's result past 2^31); fp32 one rounded add.
inline int32_t add(int32_t x, int32_t y) { return static_cast<int32_t>(static_cast<uint32_t>(x) + static_cast<uint32_t>(y)); }
inline float add(float x, float y) { return x + y; }
inline uint16_t add(uint16_t, uint16_t y) { return y; }  // fp16 C is one slice: never added

// One atom of C's row (c2 elements, or fewer at N's tail) from `count` slices, at element
// `at` of each slice; a whole atom is a fixed-length loop the compiler vectorises.
template <int64_t kC2, class Native, class Out>
__attribute__((always_inline)) inline void atom(const Native* const* s, int64_t count, int64_t at, Out* row, bool first,
                                                int64_t len = kC2) {
  if (len == kC2) {
    Out v[kC2];
    if (first) {
      for (int64_t i = 0; i < kC2; ++i) v[i] = static_cast<Out>(s[0][at + i]);
    } else {
      for (int64_t i = 0; i < kC2; ++i) v[i] = add(row[i], static_cast<Out>(s[0][at + i]));
    }
    for (int64_t j = 1; j < count; ++j)
      for (int64_t i = 0; i < kC2; ++i) v[i] = add(v[i], static_cast<Out>(s[j][at + i]));
    for (int64_t i = 0; i < kC2; ++i) row[i] = v[i];
    return;
  }
  for (int64_t i = 0; i < len; ++i) {
    Out x = first ? static_cast<Out>(s[0][at + i]) : add(row[i], static_cast<Out>(s[0][at + i]));
    for (int64_t j = 1; j < count; ++j) x = add(x, static_cast<Out>(s[j][at + i]));
    row[i] = x;
  }
}

// A whole 8-row block of one surface: its atoms are one contiguous run of 8 x c2 elements in
// every slice, summed as one fixed-length run (the compiler vectorises it for the caller's
// ISA), then stored as 8 row pieces of C (row stride n_len).
template <int64_t kC2, class Native, class Out>
__attribute__((always_inline)) inline void block_run(const Native* const* s, int64_t count, int64_t at, Out* c,
                                                     int64_t n_len, bool first) {
  constexpr int64_t kRun = kHostRowBlock * kC2;
  Out v[kRun];
  if (first) {
    for (int64_t e = 0; e < kRun; ++e) v[e] = static_cast<Out>(s[0][at + e]);
  } else {
    for (int64_t r = 0; r < kHostRowBlock; ++r)
      for (int64_t i = 0; i < kC2; ++i) v[r * kC2 + i] = add(c[r * n_len + i], static_cast<Out>(s[0][at + r * kC2 + i]));
  }
  for (int64_t j = 1; j < count; ++j) {
    const Native* sj = s[j] + at;
    for (int64_t e = 0; e < kRun; ++e) v[e] = add(v[e], static_cast<Out>(sj[e]));
  }
  for (int64_t r = 0; r < kHostRowBlock; ++r)
    for (int64_t i = 0; i < kC2; ++i) c[r * n_len + i] = v[r * kC2 + i];
}

#if defined(__x86_64__)
// int4's int16 partials, 8 rows x 8 columns a block: AVX2 keeps each row's 8 int32 sums in one
// ymm (VPMOVSXWD widens a row's 16-byte atom); no accumulator leaves a register while the
// slices go by (the portable loop's 64 lanes spill).
#define ORK_AVX2 __attribute__((target("avx2"), always_inline)) inline
#define ORK_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl"), always_inline)) inline

ORK_AVX2 void block_i16_avx2(const int16_t* const* s, int64_t count, int64_t at, int32_t* c, int64_t n_len, bool first) {
  __m256i v[kHostRowBlock];
  for (int64_t r = 0; r < kHostRowBlock; ++r) {
    v[r] = _mm256_cvtepi16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(s[0] + at + r * 8)));
    if (!first) v[r] = _mm256_add_epi32(v[r], _mm256_loadu_si256(reinterpret_cast<const __m256i*>(c + r * n_len)));
  }
  for (int64_t j = 1; j < count; ++j) {
    const int16_t* sj = s[j] + at;
    for (int64_t r = 0; r < kHostRowBlock; ++r)
      v[r] = _mm256_add_epi32(v[r], _mm256_cvtepi16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(sj + r * 8))));
  }
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
// AVX-512 keeps the pairs (unpack_impl).
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

__attribute__((target("avx512f,avx512bw,avx512vl,prfchw"))) void rows_pairs_i16_avx512(
    const int16_t* const* s, int64_t count, int64_t surface, int32_t* c, int64_t n_len, bool first, int64_t r0,
    int64_t r1, int64_t pairs) {
  const bool for_write = cpu::has(cpu::kPrefetchw);
  for (int64_t m0 = r0; m0 < r1; m0 += kHostRowBlock) {
    const int64_t rows = std::min(kHostRowBlock, r1 - m0);
    for (int64_t g = 0; g < 2 * pairs; g += 2) {
      const int64_t at = g * surface + m0 * 8;
      if (rows < kHostRowBlock) {
        for (int64_t m = m0; m < m0 + rows; ++m)
          atom2_i16_avx512(s, count, g * surface + m * 8, surface, c + m * n_len + g * 8, first);
        continue;
      }
      prefetch_pair_ahead(s, count, at, surface, c + m0 * n_len + g * 8, n_len, for_write);
      rows8_pair_i16_avx512(s, count, at, surface, c + m0 * n_len + g * 8, n_len, first);
    }
  }
}
#endif

// Rows in 8-row blocks, each block across every surface: C is written row piece after row
// piece along its rows (8 write streams), every slice read 128 bytes (two lines) a surface.
// (Surfaces outer and rows inner, which reads each slice front to back, measured slower:
// C's rows are 4 N bytes apart, a power of two at the usual N, so the lines of a column of C
// fall in the same few cache sets and are evicted before the next surfaces fill them.)
template <SumIsa kIsa, class Native, class Out>
__attribute__((always_inline)) inline void unpack_impl(const Native* const* s, int64_t count, const Plan& p, Out* c,
                                                       bool first, int64_t r0, int64_t r1) {
  constexpr int64_t kC2 = kSumAtom / static_cast<int64_t>(sizeof(Native));
  const int64_t n_len = p.shape.n, full = n_len / kC2, tail = n_len % kC2;
  const int64_t surface = p.mp * kC2;  // elements per (mp, c2) surface
  int64_t g0 = 0;  // whole surfaces done in bands (int4's int16 partials on x86)
#if defined(__x86_64__)
  if constexpr (std::is_same_v<Native, int16_t> && kIsa != SumIsa::portable) {
    // AVX-512 takes rows outer across the surface pairs, prefetching (rows_pairs_i16_avx512),
    // unless C's rows are a multiple of 4 KiB apart, where bands were measured best (a pair
    // down all rows, the layout before, wrote a column of C's lines in a few cache sets:
    // 2.4-2.6x int8's time at 128 x 2048 x 2048, bands 0.90-0.97x).
    if (kIsa == SumIsa::avx512 && (n_len * 4) % 4096 != 0) {
      rows_pairs_i16_avx512(s, count, surface, c, n_len, first, r0, r1, full / 2);
      g0 = full / 2 * 2;
    }
    for (; g0 < full; g0 += kBandSurfaces) {
      const int64_t g1 = std::min(full, g0 + kBandSurfaces);
      if constexpr (kIsa == SumIsa::avx512) band_i16_avx512(s, count, surface, c, n_len, first, r0, r1, g0, g1);
      else band_i16_avx2(s, count, surface, c, n_len, first, r0, r1, g0, g1);
    }
    g0 = full;
  }
#endif
  for (int64_t m0 = r0; m0 < r1; m0 += kHostRowBlock) {
    const int64_t m1 = std::min(r1, m0 + kHostRowBlock);
    Out* row = c + m0 * n_len;
    if (m1 - m0 == kHostRowBlock) {
      for (int64_t g = g0; g < full; ++g) block_run<kC2>(s, count, g * surface + m0 * kC2, row + g * kC2, n_len, first);
    } else {
      for (int64_t g = g0; g < full; ++g)
        for (int64_t m = m0; m < m1; ++m) atom<kC2>(s, count, g * surface + m * kC2, c + m * n_len + g * kC2, first);
    }
    for (int64_t m = m0; m < m1 && tail > 0; ++m)
      atom<kC2>(s, count, full * surface + m * kC2, c + m * n_len + full * kC2, first, tail);
  }
}

}  // namespace

const char* sum_isa_name(SumIsa isa) {
  switch (isa) {
    case SumIsa::portable: return "portable";
    case SumIsa::avx2: return "avx2";
    case SumIsa::avx512: return "avx512";
  }
  return "unknown";
}

constexpr uint32_t kSumAvx512Features = cpu::kAvx512f | cpu::kAvx512bw | cpu::kAvx512vl;

bool sum_isa_supported(SumIsa isa) {
#if defined(__x86_64__)
  if (isa == SumIsa::avx2) return cpu::has(cpu::kAvx2);
  if (isa == SumIsa::avx512) return cpu::has(kSumAvx512Features);
#endif
  return isa == SumIsa::portable;
}

SumIsa sum_isa() {  // per call, from the features: a forced tier is features hidden
  return sum_isa_supported(SumIsa::avx512) ? SumIsa::avx512
         : sum_isa_supported(SumIsa::avx2) ? SumIsa::avx2
                                           : SumIsa::portable;
}

// Forcing a tier is the one override of cpu_features.h: the features of the tiers above it
// hidden (for every kernel family, as a CPU without them would be).
Status force_sum_isa(SumIsa isa) {
  if (!sum_isa_supported(isa))
    return make_error(-ENOTSUP, std::string("the ") + sum_isa_name(isa) + " slice sum: this CPU does not have it");
  cpu::hide_cpu_features(isa == SumIsa::avx512 ? 0u
                         : isa == SumIsa::avx2 ? kSumAvx512Features
                                               : kSumAvx512Features | cpu::kAvx2);
  return {};
}

void unforce_sum_isa() { cpu::hide_cpu_features(0); }

// Each element type's loop compiled once per ISA; the x86 clones carry their target.
#if defined(__x86_64__)
#define ORK_SUM_ROWS(Native, Out)                                                                                      \
  __attribute__((target("avx2"))) static void sum_avx2(const Native* const* s, int64_t count, const Plan& p, Out* c, \
                                                       bool first, int64_t r0, int64_t r1) {                         \
    unpack_impl<SumIsa::avx2>(s, count, p, c, first, r0, r1);                                                         \
  }                                                                                                                   \
  __attribute__((target("avx512f,avx512bw,avx512vl"))) static void sum_avx512(                                        \
      const Native* const* s, int64_t count, const Plan& p, Out* c, bool first, int64_t r0, int64_t r1) {             \
    unpack_impl<SumIsa::avx512>(s, count, p, c, first, r0, r1);                                                       \
  }                                                                                                                   \
  void unpack_rows_on(SumIsa isa, const Native* const* s, int64_t count, const Plan& p, Out* c, bool first,          \
                      int64_t r0, int64_t r1) {                                                                      \
    if (isa == SumIsa::avx512) return sum_avx512(s, count, p, c, first, r0, r1);                                     \
    if (isa == SumIsa::avx2) return sum_avx2(s, count, p, c, first, r0, r1);                                         \
    unpack_impl<SumIsa::portable>(s, count, p, c, first, r0, r1);                                                    \
  }
#else
#define ORK_SUM_ROWS(Native, Out)                                                                                      \
  void unpack_rows_on(SumIsa, const Native* const* s, int64_t count, const Plan& p, Out* c, bool first, int64_t r0,  \
                      int64_t r1) {                                                                                  \
    unpack_impl<SumIsa::portable>(s, count, p, c, first, r0, r1);                                                    \
  }
#endif

// fp16 rounding. VCVTPS2PH rounds as float_to_half does (nearest even from the immediate,
// NaN quieted with its payload's top bits: docs/dtypes.md "fp16 conversion", checked against
// the host's converter in tests/driver/common/fp16_test.cpp); an fp32 subnormal becomes a
// signed zero whether or not MXCSR.DAZ is set, and tests/lib/matmul/layout_host_test.cpp
// runs every path under FTZ and DAZ too.
#if defined(__x86_64__)
namespace {
__attribute__((target("avx2,f16c"))) int64_t round_f16c(const float* in, uint16_t* out, int64_t count) {
  int64_t i = 0;
  for (; i + 8 <= count; i += 8)
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i),
                     _mm256_cvtps_ph(_mm256_loadu_ps(in + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  return i;
}
__attribute__((target("avx512f"))) int64_t round_avx512(const float* in, uint16_t* out, int64_t count) {
  int64_t i = 0;
  for (; i + 16 <= count; i += 16)
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i),
                        // all lanes; the plain form's undefined pass-through warns (GCC 12)
                        _mm512_maskz_cvtps_ph(0xffff, _mm512_loadu_ps(in + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  return i;
}
}  // namespace
#endif

void round_to_fp16_on(SumIsa isa, const float* in, uint16_t* out, int64_t count) {
  int64_t i = 0;
#if defined(__x86_64__)
  if (isa == SumIsa::avx512) i = round_avx512(in, out, count);
  if (isa != SumIsa::portable && cpu::has(cpu::kF16c)) i += round_f16c(in + i, out + i, count - i);
#else
  (void)isa;
#endif
  for (; i < count; ++i) out[i] = ork::float_to_half(in[i]);
}

ORK_SUM_ROWS(int32_t, int32_t)
ORK_SUM_ROWS(int16_t, int32_t)
ORK_SUM_ROWS(float, float)
ORK_SUM_ROWS(uint16_t, uint16_t)
#undef ORK_SUM_ROWS

}  // namespace ork::matmul
