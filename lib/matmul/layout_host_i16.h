// int4's slice sum on x86 (layout_host_sum.h): the K-slices' int16 partials of the NPU,
// widened to int32 and added into C, with AVX2 or AVX-512 intrinsics. Split from the loop
// every dtype shares (layout_host_sum.cpp) because the int16 partials are the one output
// whose layout the compiler does not vectorise well alone (its 64 int32 lanes spill) and
// whose access order was measured per ISA (docs/matmul-schedule.md "Host cost per dtype").
#pragma once

#include <cstdint>

namespace ork::matmul {

#if defined(__x86_64__)
// Surfaces [0, full) of rows [r0, r1) of C (row stride n_len; a surface is `surface`
// elements of each slice, (mp, 8) int16): C = s0 + s1 + ... when `first`, else C + s0 + ...,
// int32 modulo 2^32, the portable loop's adds. The caller does N's tail (n_len % 8 columns).
// The CPU must have AVX2 (and AVX-512F, BW, VL for the second).
void sum_i16_surfaces_avx2(const int16_t* const* s, int64_t count, int64_t surface, int32_t* c, int64_t n_len,
                           bool first, int64_t r0, int64_t r1, int64_t full);
void sum_i16_surfaces_avx512(const int16_t* const* s, int64_t count, int64_t surface, int32_t* c, int64_t n_len,
                             bool first, int64_t r0, int64_t r1, int64_t full);
#endif

}  // namespace ork::matmul
