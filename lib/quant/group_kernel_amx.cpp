// The amx tier of the fused quantised matmul (group_kernel.h): each group's integer sums on
// AMX tiles, its dequantisation on AVX-512 lanes, in the reference's order. Per group, for a
// block of up to 16 rows and the strip's 32 columns: TDPBSSD into two zeroed 16 x 16 int32
// tiles (signed A codes x signed B codes, exact: Intel SDM vol. 1 ch. 3.5), the tiles stored
// to a 2 KiB block, then per row and 16 columns u = fl(float(acc) x scale) and t = u (first
// group) or fl(t + u), t kept in a 2 KiB block beside it (16 x 32 floats are all 32 zmm
// registers). Two pairs of C tiles alternate from group to group, so group g + 1's TDPBSSD
// run while group g's pair is stored and its lanes work (docs/cpu-reference.md "Groups on
// AMX"). The float work per cell and group is the VNNI tier's; what moves to the tiles is
// the 8 VPDPBUSD per 16 cells that bound it.
#if defined(__x86_64__)
#include <immintrin.h>

#include "lib/quant/group_kernel.h"
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

// Group g's sums of the block's 16 rows into the C tile pair (C0, C1), A through tile AT and
// B through tiles 6 and 7. A macro: GCC's tile intrinsics take the tile numbers as literals.
#define ORK_AMX_GROUP_SUMS(NAME, C0, C1, AT)                                                           \
  __attribute__((target("amx-tile,amx-int8"), always_inline)) inline void NAME(const StripCall& x,     \
                                                                              int64_t g, int64_t chunks) { \
    const int64_t cb = chunk_bytes(x.width);                                                           \
    const uint8_t* a = x.a + g * x.width;                                                              \
    const uint8_t* b = x.b + x.group_off[g];                                                           \
    _tile_zero(C0);                                                                                    \
    _tile_zero(C1);                                                                                    \
    for (int64_t c = 0; c < chunks; ++c, a += cb, b += cb / 4 * kQuadBytes) {                          \
      _tile_loadd(AT, a, x.a_stride);                                                                  \
      _tile_loadd(6, b, kQuadBytes);                                                                   \
      _tile_loadd(7, b + kAmxTileBytes, kQuadBytes);                                                   \
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

// Group g's term joins the rows' running sums t: one IEEE operation per lane and step.
template <bool Shift, bool Mins>
__attribute__((target("avx512f,avx512bw"), always_inline)) inline void scale_group(const StripCall& x, int64_t g,
                                                                                  const int32_t* acc, float* t) {
  // Loaded once: the stores to t below may alias them as far as the compiler knows.
  const __m512 s0 = _mm512_loadu_ps(x.scales + g * kCols), s1 = _mm512_loadu_ps(x.scales + g * kCols + 16);
  __m512 mn0 = _mm512_setzero_ps(), mn1 = _mm512_setzero_ps();
  if constexpr (Mins) mn0 = _mm512_loadu_ps(x.mins + g * kCols), mn1 = _mm512_loadu_ps(x.mins + g * kCols + 16);
  for (int r = 0; r < x.rows; ++r) {
    __m512i a0 = _mm512_load_si512(acc + r * kCols), a1 = _mm512_load_si512(acc + r * kCols + 16);
    if constexpr (Shift) {  // the format's code: + code_offset x s_g (modulo 2^32, as vnni's start)
      const __m512i sh = _mm512_set1_epi32(static_cast<int32_t>(affine_shift(x, r, g)));
      a0 = _mm512_add_epi32(a0, sh), a1 = _mm512_add_epi32(a1, sh);
    }
    __m512 u0 = _mm512_mul_ps(_mm512_maskz_cvtepi32_ps(kAmxAll16, a0), s0);
    __m512 u1 = _mm512_mul_ps(_mm512_maskz_cvtepi32_ps(kAmxAll16, a1), s1);
    if constexpr (Mins) {  // u = u + float(s_g) x mn
      const __m512 sf = _mm512_set1_ps(x.gsum_f[r * x.groups + g]);
      u0 = _mm512_add_ps(u0, _mm512_mul_ps(sf, mn0));
      u1 = _mm512_add_ps(u1, _mm512_mul_ps(sf, mn1));
    }
    float* tr = t + r * kCols;
    if (g > 0) u0 = _mm512_add_ps(_mm512_load_ps(tr), u0), u1 = _mm512_add_ps(_mm512_load_ps(tr + 16), u1);
    _mm512_store_ps(tr, u0);
    _mm512_store_ps(tr + 16, u1);
  }
}

template <bool Shift, bool Mins>
__attribute__((target("amx-tile,amx-int8,avx512f,avx512bw"))) void amx_block(const StripCall& x) {
  constexpr int kCells = kAmxTileRows * kCols;
  alignas(64) int32_t acc[2][kCells];  // group g's sums in acc[g & 1]
  alignas(64) float t[kCells];
  const int64_t chunks = amx_chunks(x.width);
  sums_into_pair0(x, 0, chunks);
  for (int64_t g = 0; g < x.groups; ++g) {  // increasing order: the order is the contract
    if ((g & 1) == 0) {
      if (g + 1 < x.groups) sums_into_pair1(x, g + 1, chunks);
      store_pair0(acc[0]);
    } else {
      if (g + 1 < x.groups) sums_into_pair0(x, g + 1, chunks);
      store_pair1(acc[1]);
    }
    scale_group<Shift, Mins>(x, g, acc[g & 1], t);
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
