// int4 codes two a byte on AVX-512 lanes (group_kernel.h GroupPacked::nibbles): the one
// widening every reader of them uses (the vnni kernel in registers, the amx tier into L1
// blocks, unpack_nibbles into a kept buffer). x86-64 only; each function carries its target.
#pragma once

#if defined(__x86_64__)
#include <immintrin.h>

#include <cstdint>

namespace ork::quant::detail {

// VPSHUFB's table from a nibble to its code (nibble + base), the 16 entries in each of the
// four 128-bit lanes (the lookup stays within a lane).
__attribute__((target("avx512f,avx512bw"), always_inline)) inline __m512i nibble_lut(int8_t base) {
  int8_t table[64];
  for (int i = 0; i < 64; ++i) table[i] = static_cast<int8_t>(i % 16 + base);
  return _mm512_loadu_si512(table);
}

// One 128-byte run of the byte layout from its 64 bytes of nibbles: the low nibbles are the
// run's first 64 codes, the high ones its last 64 (a mask, a shift and two VPSHUFB).
struct WideRun {
  __m512i first, last;
};
__attribute__((target("avx512f,avx512bw"), always_inline)) inline WideRun widen_run(const uint8_t* nibbles,
                                                                                    __m512i lut) {
  const __m512i v = _mm512_loadu_si512(nibbles), low = _mm512_set1_epi8(0x0f);
  return {_mm512_shuffle_epi8(lut, _mm512_and_si512(v, low)),
          _mm512_shuffle_epi8(lut, _mm512_and_si512(_mm512_srli_epi16(v, 4), low))};
}

}  // namespace ork::quant::detail
#endif
