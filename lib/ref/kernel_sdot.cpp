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

// A and B as int8 quads, no bias; K groups unpadded (group_align 1); 128 groups = 512 K
// bytes per chunk: the chunk of B (128 x 64 bytes = 8 KiB) and of A (4 x 512 bytes) stay in
// the Cortex-A76's 64 KiB L1D.
constexpr Kernel kSdot{Isa::sdot, kMr, kNr, AFormat::s8, 1, 0, 128, micro_sdot, nullptr, nullptr};

}  // namespace

const Kernel& sdot_kernel() { return kSdot; }

}  // namespace ork::ref::detail
