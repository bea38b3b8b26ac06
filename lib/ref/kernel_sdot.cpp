// The AArch64 micro-kernel of the fast int8 path (kernels.h): SDOT (Armv8.2-A dot product,
// FEAT_DotProd), 4 rows x 16 columns. This file alone is compiled with
// -march=armv8.2-a+dotprod (lib/ref/meson.build) and only called after isa_supported() saw
// HWCAP_ASIMDDP in the kernel's hwcaps (fast.cpp); the rest of lib/ref stays Armv8.0, so the
// generic kernel still runs on a CPU without dot product. It defines no inline or template
// code of its own that another file could pick up, so no dotprod instruction leaks out.
//
// Exactness: SDOT adds four s8 x s8 products to each int32 lane, modulo 2^32 and without
// saturation (Arm ARM, "SDOT (by element)" and "SDOT (vector)"), which is the oracle's
// arithmetic: A and B go in as plain int8 (AFormat::s8), no bias.
//
// Registers: 16 accumulators (4 rows x 4 vectors of 4 columns), 4 for the group's B columns,
// up to 4 for A (each row's 4 bytes of the group replicated): at most 24 of the 32 vector
// registers, so nothing spills. Per K group: 16 SDOT (vector form) against 8 loads (4 of B,
// 4 replicating loads of A); the Cortex-A76 issues 2 SDOT and 2 loads per cycle
// (docs/cpu-reference.md), so the loop is bound by the SDOTs.
#include <arm_neon.h>

#include <cstring>

#include "lib/ref/kernels.h"

namespace ork::ref::detail {

namespace {

constexpr int kMr = 4, kNr = 16, kVecs = kNr / 4;  // 4 int32 columns per vector
constexpr int64_t kGroupBytes = kNr * 4;            // one K group of a panel: 16 columns x 4 bytes

using Acc = int32x4_t[kMr][kVecs];

void micro_sdot(const uint8_t* a, int64_t lda, const uint8_t* bp, int64_t groups, int32_t* out,
                bool accumulate) {
  Acc acc;
#pragma GCC unroll 4
  for (int i = 0; i < kMr; ++i)
#pragma GCC unroll 4
    for (int v = 0; v < kVecs; ++v) acc[i][v] = accumulate ? vld1q_s32(out + i * kNr + 4 * v) : vdupq_n_s32(0);
  const auto* b = reinterpret_cast<const int8_t*>(bp);
  const auto* a8 = reinterpret_cast<const int8_t*>(a);
  for (int64_t g = 0; g < groups; ++g, b += kGroupBytes) {
    int8x16_t bv[kVecs];  // columns 4v..4v+3 of this group, 4 bytes each
#pragma GCC unroll 4
    for (int v = 0; v < kVecs; ++v) bv[v] = vld1q_s8(b + 16 * v);
#pragma GCC unroll 4
    for (int i = 0; i < kMr; ++i) {
      int32_t quad;  // the row's 4 bytes of this group in every lane (one LD1R)
      std::memcpy(&quad, a8 + i * lda + 4 * g, sizeof quad);
      const int8x16_t ad = vreinterpretq_s8_s32(vdupq_n_s32(quad));
#pragma GCC unroll 4
      for (int v = 0; v < kVecs; ++v) acc[i][v] = vdotq_s32(acc[i][v], bv[v], ad);
    }
  }
#pragma GCC unroll 4
  for (int i = 0; i < kMr; ++i)
#pragma GCC unroll 4
    for (int v = 0; v < kVecs; ++v) vst1q_s32(out + i * kNr + 4 * v, acc[i][v]);
}

// The short-M kernel (kernels.h micro_rows): R rows of s8 A (`lda` bytes apart) against one
// panel over all its groups, in S sets of accumulators taken in turn by consecutive groups.
// At M = 1 the 4-row tile would multiply three rows of padding; here each group of B (4
// loads) feeds R x 4 SDOTs, so one row is bound by reading B, not by the SDOTs. The sets
// keep 16 or more SDOT chains independent (its latency over its issue rate: docs/cpu-reference.md).
template <int R, int S>
void rows_sdot(const uint8_t* a, int64_t lda, const uint8_t* bp, int64_t groups, int32_t* out, bool accumulate) {
  int32x4_t acc[S][R][kVecs];
#pragma GCC unroll 32
  for (int s = 0; s < S; ++s)
    for (int i = 0; i < R; ++i)
      for (int v = 0; v < kVecs; ++v) acc[s][i][v] = vdupq_n_s32(0);
  const auto* b = reinterpret_cast<const int8_t*>(bp);
  const auto* a8 = reinterpret_cast<const int8_t*>(a);
  auto step = [&](int s, int64_t g) {
    int8x16_t bv[kVecs];
#pragma GCC unroll 4
    for (int v = 0; v < kVecs; ++v) bv[v] = vld1q_s8(b + g * kGroupBytes + 16 * v);
#pragma GCC unroll 8
    for (int i = 0; i < R; ++i) {
      int32_t quad;
      std::memcpy(&quad, a8 + i * lda + 4 * g, sizeof quad);
      const int8x16_t ad = vreinterpretq_s8_s32(vdupq_n_s32(quad));
#pragma GCC unroll 4
      for (int v = 0; v < kVecs; ++v) acc[s][i][v] = vdotq_s32(acc[s][i][v], bv[v], ad);
    }
  };
  int64_t g = 0;
  for (; g + S <= groups; g += S)
#pragma GCC unroll 4
    for (int s = 0; s < S; ++s) step(s, g + s);
  for (; g < groups; ++g) step(0, g);
#pragma GCC unroll 8
  for (int i = 0; i < R; ++i)
#pragma GCC unroll 4
    for (int v = 0; v < kVecs; ++v) {
      int32x4_t sum = acc[0][i][v];
      for (int s = 1; s < S; ++s) sum = vaddq_s32(sum, acc[s][i][v]);  // modulo 2^32, like the oracle
      int32_t* o = out + i * kNr + 4 * v;
      vst1q_s32(o, accumulate ? vaddq_s32(vld1q_s32(o), sum) : sum);
    }
}

void sdot_rows(int rows, const uint8_t* a, int64_t lda, const uint8_t* bp, int64_t groups, int32_t* out,
               bool accumulate) {
  switch (rows) {  // S x R x 4 accumulators: 16, 16, 12, 16, 20, 24 (of 32 vector registers)
    case 1: return rows_sdot<1, 4>(a, lda, bp, groups, out, accumulate);
    case 2: return rows_sdot<2, 2>(a, lda, bp, groups, out, accumulate);
    case 3: return rows_sdot<3, 1>(a, lda, bp, groups, out, accumulate);
    case 4: return rows_sdot<4, 1>(a, lda, bp, groups, out, accumulate);
    case 5: return rows_sdot<5, 1>(a, lda, bp, groups, out, accumulate);
    default: return rows_sdot<6, 1>(a, lda, bp, groups, out, accumulate);
  }
}

// A and B as int8 quads, no bias; K groups unpadded (group_align 1); 128 groups = 512 K
// bytes per chunk: the chunk of B (128 x 64 bytes = 8 KiB) and of A (4 x 512 bytes) stay in
// the Cortex-A76's 64 KiB L1D. Short M (1 .. kSdotShortM rows): sdot_rows on s8 rows.
constexpr Kernel kSdot{Isa::sdot, kMr,         kNr,       AFormat::s8, 1,       0,     128,        micro_sdot, nullptr,
                       nullptr,    sdot_rows,   kSdotShortM, Isa::sdot, nullptr, nullptr, false, AFormat::s8};

}  // namespace

const Kernel& sdot_kernel() { return kSdot; }

}  // namespace ork::ref::detail
