// The CORE's multiply on dense operands. Compiled with -ffp-contract=off (meson.build):
// the fp16 path's order and rounding are part of the model (docs/emulator.md "CORE").
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

namespace ork::emu {

// c[m * cols + n] = sum_k a[m * kt + k] * bt[n * kt + k], exactly in int32. Operands are
// int8/int4 values widened to int16: GCC turns int16 products summed in int32 into
// pmaddwd/smlal, about 4x the int8 loop's speed (measured: docs/emulator.md "Speed").
void matmul_i16(const int16_t* a, const int16_t* bt, int32_t* c, size_t mc, size_t kt, size_t cols);

// The CORE's integer multiply as an engine: a weight block is prepared once (gathered out
// of the NPU layout, packed for the multiply) and then multiplied by many feature tiles.
// Operands are int8 values; int4 operands arrive widened to int8 (-8..7). Integer sums are
// exact whatever the order, so an engine can only change the emulator's speed, never a
// result: tests/driver/emu/npu runs the built-in engine and tests/e2e the lent one, both against
// plain loops.
class PreparedInt8 {
 public:
  virtual ~PreparedInt8() = default;
  virtual size_t bytes() const = 0;  // memory it holds (the weight cache's budget)
};

// Where a multiply writes C, in int32 elements: (m, n) at
//   base[(n / group) * group_stride + m * row_stride + n % group].
// Row-major C is {c, cols, cols, 0}; the DPU's int32 output cube is {cube, 4, 4, surface
// stride}, so a task can be written in place (dpu.h output_cube_i32).
struct Int32Out {
  int32_t* base = nullptr;
  size_t row_stride = 0, group = 0, group_stride = 0;
};

class Int8Engine {
 public:
  virtual ~Int8Engine() = default;
  // bt: cols x kt, row n = column n of B (its kt values contiguous).
  virtual std::shared_ptr<const PreparedInt8> prepare(const int8_t* bt, size_t kt, size_t cols) const = 0;
  // C (mc x cols, written where `c` says) = a (mc x kt, row-major) x B, exact modulo 2^32.
  virtual void multiply(const int8_t* a, size_t mc, const PreparedInt8& b, const Int32Out& c) const = 0;
};

// The built-in engine: matmul_i16 on operands widened to int16 (plain C++, any host).
const Int8Engine& builtin_int8_engine();
// A higher layer may give a device a faster exact engine (FakeKernelConfig::int8_engine):
// libork gives its emulated devices the CPU reference's fast int8 path (lib/api/device.cpp),
// so everything that runs on the emulated NPU runs near the host's int8 speed. Per device,
// through its DeviceMemory (memory.h); the engine must outlive the device.

// c[m * cols + n]: acc = 0.0f; for k = 0..kt-1 in order: acc = acc + a*b, each product
// exact in fp32 (two halves' significands are 11 bits), each add rounded to nearest even.
// One block of 16 columns: b[k * 16 + j]; writes c[m * c_stride + j] for j < width.
void matmul_f16_block16(const float* a, const float* b, float* c, size_t mc, size_t kt, size_t width,
                        size_t c_stride);

}  // namespace ork::emu
