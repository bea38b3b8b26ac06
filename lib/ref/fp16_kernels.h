// The fp16 kernels' contract (fp16_matmul.h): one tile of C, up to kTileRows rows x one
// 64-column strip, over one K-slice. Per cell, exactly the oracle's order: acc = 0; for k
// increasing acc = acc + a*b; then C = acc (the first slice) or C = C + acc.
#pragma once

#include <cstdint>

#include "lib/ref/fp16_matmul.h"

namespace ork::ref::detail {

constexpr int64_t kTileRows = 4;

struct Fp16Tile {
  const float* a = nullptr;  // the tile's first row of A in fp32, at the slice's first k
  int64_t lda = 0;           // floats from one row of A to the next
  int64_t rows = 0;          // 1 .. kTileRows
  // The slice's rows of the strip: element (k, j) at [k * 64 + j]. Exactly one is set:
  // halves (widened in the kernel: the direct form, short M) or a buffer already in fp32.
  const uint16_t* bh = nullptr;
  const float* bf = nullptr;
  int64_t kn = 0;      // k of the slice
  float* c = nullptr;  // the tile's first cell
  int64_t ldc = 0;
  int64_t cols = 0;    // 1 .. 64: the strip's columns inside N
  bool first = true;   // the first slice: C = acc; else C = C + acc
};

struct Fp16Kernel {
  Fp16Isa isa;
  void (*tile)(const Fp16Tile&);
  // out[i] = the half in[i] as fp32, i < count: exact (every half is a float).
  void (*widen)(const uint16_t* in, float* out, int64_t count);
  bool direct;  // the tile takes `bh` (halves) as well as `bf`
};

const Fp16Kernel& fp16_generic_kernel();
#if defined(__x86_64__)
const Fp16Kernel& fp16_avx2_kernel();
const Fp16Kernel& fp16_avx512_kernel();
#endif

}  // namespace ork::ref::detail
