// CORE multiply kernels. Speed matters (every test runs on the emulator), so the int8 dot
// product is a plain loop GCC vectorises at -O3 without -march flags, blocked so a column
// of B stays in L1 while a block of rows uses it.
//
// Flags for this file only, by pragma because driver/ builds one library from one source
// list: O3 so GCC vectorises the int8 dot product at any buildtype (no -march: the build
// must run anywhere), and fp-contract=off so no fused multiply-add changes the fp16 path's
// defined rounding (docs/emulator.md "CORE"; GNU C++ defaults to fp-contract=fast).
#pragma GCC optimize("O3", "fp-contract=off")

#include "driver/emu/npu/core.h"

#include <algorithm>

namespace ork::emu {
namespace {

constexpr size_t kRowBlock = 8;     // rows sharing one B column from L1 (8 x K bytes of A)
constexpr size_t kColBlock = 256;   // fp16: accumulators per row kept in L1 (1 KiB)

inline int32_t dot_i8(const int8_t* a, const int8_t* b, size_t n) {
  int32_t s = 0;
  for (size_t k = 0; k < n; ++k) s += int32_t{a[k]} * int32_t{b[k]};
  return s;
}

}  // namespace

void matmul_i8(const int8_t* a, const int8_t* bt, int32_t* c, size_t mc, size_t kt, size_t cols) {
  for (size_t m0 = 0; m0 < mc; m0 += kRowBlock) {
    const size_t m1 = std::min(mc, m0 + kRowBlock);
    for (size_t n = 0; n < cols; ++n) {
      const int8_t* col = bt + n * kt;
      for (size_t m = m0; m < m1; ++m) c[m * cols + n] = dot_i8(a + m * kt, col, kt);
    }
  }
}

void matmul_f16(const float* a, const float* b, float* c, size_t mc, size_t kt, size_t cols) {
  float acc[kColBlock];
  for (size_t m = 0; m < mc; ++m) {
    const float* row = a + m * kt;
    for (size_t n0 = 0; n0 < cols; n0 += kColBlock) {
      const size_t w = std::min(kColBlock, cols - n0);
      std::fill(acc, acc + w, 0.0f);
      // k outermost: every acc[j] sees its adds in increasing k, whatever the vector width.
      for (size_t k = 0; k < kt; ++k) {
        const float av = row[k];
        const float* brow = b + k * cols + n0;
        for (size_t j = 0; j < w; ++j) acc[j] = acc[j] + av * brow[j];
      }
      std::copy(acc, acc + w, c + m * cols + n0);
    }
  }
}

}  // namespace ork::emu
