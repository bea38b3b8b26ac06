// The portable micro-kernel (kernels.h): plain C++ over int16 pairs, 4 rows x 8 columns, for
// CPUs without an x86 tier (the RK3588's Cortex-A76 when the reference runs on the board).
// GCC vectorises the inner loops (NEON SMLAL-style widening multiply-adds on AArch64).
#include <cstring>

#include "lib/ref/kernels.h"

namespace ork::ref::detail {

namespace {

constexpr int kMr = 4, kNr = 8;

void micro_generic(const uint8_t* a, int64_t lda, const uint8_t* bp, int64_t groups,
                   int32_t* out, bool accumulate) {
  uint32_t acc[kMr][kNr];  // modulo 2^32 like every tier (K may exceed 2^17), no signed UB
  for (int i = 0; i < kMr; ++i) {
    for (int j = 0; j < kNr; ++j) acc[i][j] = accumulate ? static_cast<uint32_t>(out[i * kNr + j]) : 0;
  }
  for (int64_t g = 0; g < groups; ++g, bp += kNr * 4) {
    int16_t b[kNr][2];
    std::memcpy(b, bp, sizeof b);
    for (int i = 0; i < kMr; ++i) {
      int16_t av[2];
      std::memcpy(av, a + i * lda + 4 * g, sizeof av);
      for (int j = 0; j < kNr; ++j) acc[i][j] += static_cast<uint32_t>(av[0] * b[j][0] + av[1] * b[j][1]);
    }
  }
  std::memcpy(out, acc, sizeof acc);
}

constexpr Kernel kGeneric{Isa::generic, kMr, kNr, AFormat::int16_pairs, 1, 0, 128,
                          micro_generic, nullptr, nullptr};

}  // namespace

const Kernel& generic_kernel() { return kGeneric; }

}  // namespace ork::ref::detail
