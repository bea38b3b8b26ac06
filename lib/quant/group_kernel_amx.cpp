// The amx tier of the fused quantised matmul (group_kernel.h): each group's integer sums on
// AMX tiles, its dequantisation on AVX-512 lanes, in the reference's order. Per group, for a
// block of up to 16 rows and the strip's 32 columns: TDPBSSD into two zeroed 16 x 16 int32
// tiles (signed A codes x signed B codes, exact: Intel SDM vol. 1 ch. 3.5), the tiles stored
// to a 2 KiB block, then per row and 16 columns u = fl(float(acc) x scale) and t = u (first
// group) or fl(t + u), t kept in a 2 KiB block beside it (16 x 32 floats are all 32 zmm
// registers). Two pairs of C tiles alternate from group to group, and the lanes take two
// groups a pass (t read and written once for both, g's term added before g + 1's) while the
// next two groups' TDPBSSD run (docs/cpu-reference.md "Groups on AMX"). The float work per
// cell and group is the VNNI tier's; what moves to the tiles is the 8 VPDPBUSD per 16 cells
// that bound it.
#if defined(__x86_64__)
#include <immintrin.h>

#include "lib/quant/group_kernel.h"
#include "lib/quant/nibbles_x86.h"
#include "lib/ref/amx_tiles.h"

namespace ork::quant::detail {
namespace {

using ref::detail::kAmxTileBytes;
using ref::detail::kAmxTileRows;

constexpr int kCols = 32;                 // the strip: two tiles of 16 int32 columns
constexpr int64_t kQuadBytes = kCols * 4;  // one K quad of the strip's packed B (vnni's layout)
constexpr __mmask16 kAmxAll16 = 0xffff;   // GCC 12's unmasked VCVTDQ2PS: see group_kernel_x86.cpp

// Bytes of A (and K values) per TDPBSSD: a whole group up to 64, else 64 (groups of 128 and
// per-channel: group_kernel.h amx_chunks).
int64_t chunk_bytes(int64_t width) { return width >= kAmxTileBytes ? kAmxTileBytes : (width + 3) / 4 * 4; }

// B two codes a byte (StripCall::nibbles, calls of up to kAmxNibbleRows rows): a chunk's
// quads widen into two L1 blocks, tile 6's rows (each quad's 64 low nibbles: its 128-byte
// run's first half) and tile 7's (the high ones), just before the tiles load them.
struct Widened {
  __m512i lut;  // nibble -> code (nibble_lut)
  uint8_t* t6;  // 16 rows of 64 bytes each, 64-byte aligned
  uint8_t* t7;
};
__attribute__((target("avx512f,avx512bw"), always_inline)) inline void widen_chunk(const uint8_t* b, int64_t quads,
                                                                                   const Widened& w) {
  for (int64_t q = 0; q < quads; ++q) {
    const WideRun run = widen_run(b + q * 64, w.lut);
    _mm512_store_si512(w.t6 + q * 64, run.first);
    _mm512_store_si512(w.t7 + q * 64, run.last);
  }
}

// Group g's sums of the block's 16 rows into the C tile pair (C0, C1), A through tile AT and
// B through tiles 6 and 7. A macro: GCC's tile intrinsics take the tile numbers as literals.
#define ORK_AMX_GROUP_SUMS(NAME, C0, C1, AT)                                                           \
  __attribute__((target("amx-tile,amx-int8,avx512f,avx512bw"), always_inline)) inline void NAME(       \
      const StripCall& x, int64_t g, int64_t chunks, const Widened& w) {                               \
    const int64_t cb = chunk_bytes(x.width), quads = cb / 4;                                           \
    const uint8_t* a = x.a + g * x.width;                                                              \
    const uint8_t* b = x.b + x.group_off[g] / (x.nibbles ? 2 : 1);                                     \
    _tile_zero(C0);                                                                                    \
    _tile_zero(C1);                                                                                    \
    for (int64_t c = 0; c < chunks; ++c, a += cb, b += quads * (x.nibbles ? 64 : kQuadBytes)) {        \
      _tile_loadd(AT, a, x.a_stride);                                                                  \
      if (x.nibbles) {                                                                                 \
        widen_chunk(b, quads, w);                                                                      \
        _tile_loadd(6, w.t6, kAmxTileBytes);                                                           \
        _tile_loadd(7, w.t7, kAmxTileBytes);                                                           \
      } else {                                                                                         \
        _tile_loadd(6, b, kQuadBytes);                                                                 \
        _tile_loadd(7, b + kAmxTileBytes, kQuadBytes);                                                 \
      }                                                                                                \
      _tile_dpbssd(C0, AT, 6);                                                                         \
      _tile_dpbssd(C1, AT, 7);                                                                         \
    }                                                                                                  \
  }
ORK_AMX_GROUP_SUMS(sums_into_pair0, 0, 1, 4)
ORK_AMX_GROUP_SUMS(sums_into_pair1, 2, 3, 5)
#undef ORK_AMX_GROUP_SUMS

// A C tile pair into acc[16][32].
__attribute__((target("amx-tile,amx-int8"), always_inline)) inline void store_pair0(int32_t* acc) {
  _tile_stored(0, acc, kCols * sizeof(int32_t));
  _tile_stored(1, acc + 16, kCols * sizeof(int32_t));
}
__attribute__((target("amx-tile,amx-int8"), always_inline)) inline void store_pair1(int32_t* acc) {
  _tile_stored(2, acc, kCols * sizeof(int32_t));
  _tile_stored(3, acc + 16, kCols * sizeof(int32_t));
}

// One group's term u of 16 columns of a row: fl(float(acc + shift) x s), Q4_1's
// fl(u + fl(float(s_g) x mn)) after it.
template <bool Shift, bool Mins>
__attribute__((target("avx512f,avx512bw"), always_inline)) inline __m512 group_term(__m512i a, __m512 s, __m512 mn,
                                                                                   int32_t shift, float sf) {
  if constexpr (Shift) a = _mm512_add_epi32(a, _mm512_set1_epi32(shift));  // modulo 2^32, as vnni's start
  __m512 u = _mm512_mul_ps(_mm512_maskz_cvtepi32_ps(kAmxAll16, a), s);
  if constexpr (Mins) u = _mm512_add_ps(u, _mm512_mul_ps(_mm512_set1_ps(sf), mn));
  return u;
}

// Group g's scales (and Q4_1's m terms) for the strip's two halves of 16 columns.
struct GroupScales {
  __m512 s[2], mn[2];
};
template <bool Mins>
__attribute__((target("avx512f"), always_inline)) inline GroupScales group_scales(const StripCall& x, int64_t g) {
  GroupScales q{{_mm512_loadu_ps(x.scales + g * kCols), _mm512_loadu_ps(x.scales + g * kCols + 16)},
                {_mm512_setzero_ps(), _mm512_setzero_ps()}};
  if constexpr (Mins) q.mn[0] = _mm512_loadu_ps(x.mins + g * kCols), q.mn[1] = _mm512_loadu_ps(x.mins + g * kCols + 16);
  return q;
}

// Groups g and g + 1 (Two) or g alone join the rows' running sums t, in that order, one
// IEEE operation per lane and step: t is read and written once for both groups.
template <bool Shift, bool Mins, bool Two>
__attribute__((target("avx512f,avx512bw"), always_inline)) inline void scale_groups(const StripCall& x, int64_t g,
                                                                                   const int32_t* acc0,
                                                                                   const int32_t* acc1, float* t) {
  // Loaded once: the stores to t below may alias them as far as the compiler knows.
  const GroupScales q0 = group_scales<Mins>(x, g);
  GroupScales q1 = q0;
  if constexpr (Two) q1 = group_scales<Mins>(x, g + 1);
  for (int r = 0; r < x.rows; ++r) {
    int32_t sh0 = 0, sh1 = 0;
    float sf0 = 0, sf1 = 0;
    if constexpr (Shift) sh0 = static_cast<int32_t>(affine_shift(x, r, g));
    if constexpr (Mins) sf0 = x.gsum_f[r * x.groups + g];
    if constexpr (Shift && Two) sh1 = static_cast<int32_t>(affine_shift(x, r, g + 1));
    if constexpr (Mins && Two) sf1 = x.gsum_f[r * x.groups + g + 1];
    float* tr = t + r * kCols;
    // Unrolled: as a loop over h, GCC 12 kept Q4_1's scales and m terms on the stack and
    // reloaded them per vector (Q4_1 9-10 % slower, docs/cpu-reference.md "Against the AMX peak").
#pragma GCC unroll 2
    for (int h = 0; h < 2; ++h) {
      __m512 u = group_term<Shift, Mins>(_mm512_load_si512(acc0 + r * kCols + h * 16), q0.s[h], q0.mn[h], sh0, sf0);
      if (g > 0) u = _mm512_add_ps(_mm512_load_ps(tr + h * 16), u);
      if constexpr (Two) {
        u = _mm512_add_ps(u, group_term<Shift, Mins>(_mm512_load_si512(acc1 + r * kCols + h * 16), q1.s[h],
                                                     q1.mn[h], sh1, sf1));
      }
      _mm512_store_ps(tr + h * 16, u);
    }
  }
}

template <bool Shift, bool Mins>
__attribute__((target("amx-tile,amx-int8,avx512f,avx512bw"))) void amx_block(const StripCall& x) {
  constexpr int kCells = kAmxTileRows * kCols;
  alignas(64) int32_t acc[2][kCells];  // groups g and g + 1's sums
  alignas(64) float t[kCells];
  alignas(64) uint8_t wide[2][kAmxTileRows * kAmxTileBytes];
  const Widened w{nibble_lut(x.nibble_base), wide[0], wide[1]};
  const int64_t chunks = amx_chunks(x.width);
  sums_into_pair0(x, 0, chunks, w);
  if (x.groups > 1) sums_into_pair1(x, 1, chunks, w);
  int64_t g = 0;
  for (; g + 1 < x.groups; g += 2) {  // increasing order: the order is the contract
    store_pair0(acc[0]);
    if (g + 2 < x.groups) sums_into_pair0(x, g + 2, chunks, w);
    store_pair1(acc[1]);
    if (g + 3 < x.groups) sums_into_pair1(x, g + 3, chunks, w);
    scale_groups<Shift, Mins, true>(x, g, acc[0], acc[1], t);
  }
  if (g < x.groups) {
    store_pair0(acc[0]);
    scale_groups<Shift, Mins, false>(x, g, acc[0], nullptr, t);
  }
  const int lo = x.cols < 16 ? x.cols : 16, hi = x.cols - lo;
  const auto m0 = static_cast<__mmask16>((1u << lo) - 1), m1 = static_cast<__mmask16>((1u << hi) - 1);
  for (int r = 0; r < x.rows; ++r) {
    const __m512 sa = _mm512_set1_ps(x.sa[r]);
    _mm512_mask_storeu_ps(x.c + r * x.ldc, m0, _mm512_mul_ps(_mm512_load_ps(t + r * kCols), sa));
    _mm512_mask_storeu_ps(x.c + r * x.ldc + 16, m1, _mm512_mul_ps(_mm512_load_ps(t + r * kCols + 16), sa));
  }
}

}  // namespace

// Tiles 0-3: two pairs of C, 16 rows x 16 int32; 4-5: A, 16 rows x one chunk of K bytes;
// 6-7: B, the chunk's K quads x 16 columns x 4 bytes.
void amx_group_begin(int64_t width) {
  ref::detail::TileConfig cfg;
  const auto cb = static_cast<uint16_t>(chunk_bytes(width));
  for (int i = 0; i < 4; ++i) cfg.rows[i] = kAmxTileRows, cfg.colsb[i] = kAmxTileBytes;
  for (int i = 4; i < 6; ++i) cfg.rows[i] = kAmxTileRows, cfg.colsb[i] = cb;
  for (int i = 6; i < 8; ++i) cfg.rows[i] = static_cast<uint8_t>(cb / 4), cfg.colsb[i] = kAmxTileBytes;
  ref::detail::load_tile_config(cfg);
}

void amx_group_end() { ref::detail::release_tiles(); }

void strip_amx(const StripCall& x) {
  const bool shift = x.gsum != nullptr && x.code_offset != 0;
  if (x.mins != nullptr) return shift ? amx_block<true, true>(x) : amx_block<false, true>(x);
  return shift ? amx_block<true, false>(x) : amx_block<false, false>(x);
}

}  // namespace ork::quant::detail
#endif
