// The fp16 matmul of the CPU backend: the oracle's order exactly (oracle.h
// matmul_fp16_sliced: per slice acc = 0.0f, k increasing, acc + a*b without FMA; slices added
// in order), computed in tiles of 4 rows x 64 columns vectorised over n (AVX-512F with the
// accumulators in registers / AVX2 / baseline, chosen at run time) without reordering any
// cell's sum, the
// tiles shared out over threads like the int8 fast path's panels. Cells are independent, so
// the tiling, the ISA and the thread count never change a byte. A and B are converted to
// fp32 once per call into buffers kept per calling thread.
#pragma once

#include <cstdint>
#include <span>

#include "driver/common/result.h"
#include "lib/ref/oracle.h"

namespace ork::ref {

struct Fp16Options {
  int threads = 1;             // 0 = up to the online CPUs (each given 2^22 MACs or more)
  int* threads_used = nullptr;  // when set: the threads the call ran on
};

Status matmul_fp16_rows(std::span<const uint16_t> a, std::span<const uint16_t> b, std::span<float> c, Dims d,
                        int64_t slice_k, const Fp16Options& options = {});
// The same, each cell rounded once to fp16 (nearest even).
Status matmul_fp16_rows_to_fp16(std::span<const uint16_t> a, std::span<const uint16_t> b,
                                std::span<uint16_t> c, Dims d, int64_t slice_k, const Fp16Options& options = {});

}  // namespace ork::ref
