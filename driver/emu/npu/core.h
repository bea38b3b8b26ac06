// The CORE's multiply on dense operands. Compiled with -ffp-contract=off (meson.build):
// the fp16 path's order and rounding are part of the model (docs/emulator.md "CORE").
#pragma once

#include <cstddef>
#include <cstdint>

namespace ork::emu {

// c[m * cols + n] = sum_k a[m * kt + k] * bt[n * kt + k], exactly in int32. Operands are
// int8/int4 values widened to int16: GCC turns int16 products summed in int32 into
// pmaddwd/smlal, about 4x the int8 loop's speed (measured: docs/emulator.md "Speed").
void matmul_i16(const int16_t* a, const int16_t* bt, int32_t* c, size_t mc, size_t kt, size_t cols);

// c (mc x cols) = a (mc x kt) x b (kt x cols), all row-major, exact in int32 (int32 wraps).
// A higher layer may lend the emulator a faster exact kernel for its integer multiply:
// libork lends its CPU reference's fast int8 path (lib/api/device.cpp), so everything that
// runs on the emulated NPU runs near the host's int8 speed. Results cannot differ: integer
// sums are exact whatever the order. Process-wide; nullptr restores the built-in loop.
using Int8Gemm = void (*)(const int8_t* a, const int8_t* b, int32_t* c, size_t mc, size_t kt,
                          size_t cols);
void lend_int8_gemm(Int8Gemm kernel);
Int8Gemm lent_int8_gemm();

// c[m * cols + n]: acc = 0.0f; for k = 0..kt-1 in order: acc = acc + a*b, each product
// exact in fp32 (two halves' significands are 11 bits), each add rounded to nearest even.
// One block of 16 columns: b[k * 16 + j]; writes c[m * c_stride + j] for j < width.
void matmul_f16_block16(const float* a, const float* b, float* c, size_t mc, size_t kt, size_t width,
                        size_t c_stride);

}  // namespace ork::emu
