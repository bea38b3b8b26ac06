// The NPU's native operand layouts, the one description the planner and packers
// (lib/matmul) lay data out by and the emulated CNA and DPU (driver/emu/npu) read and write
// by, so the two cannot disagree about where an element sits. The layouts, their index
// formulas and sources: docs/regcmd-contract.md section 2 and docs/hardware.md section 5
// (MTX feature_data, weight_fp16, weight_int8 and src/npu_matmul.c; RKT-M rkt_ml.c) and
// section 9 (the int4 captures). Keyed by element width in bits (8 int8, 16 fp16, 4 int4),
// since each side has its own name for the type.
#pragma once

#include <cstdint>

namespace ork::hw {

// Every feature and output atom is 16 bytes, and the DMA stride registers (LINE_STRIDE,
// SURF_STRIDE, DST_SURF_STRIDE) count in these atoms.
inline constexpr int64_t kAtomBytes = 16;

// A weight block holds each kernel's K values in runs of 32 (B is (N/wa, K/32, wa, 32) for
// every type), so K is padded to a multiple of 32 and a task's K (DATAIN_CHANNEL) is one.
inline constexpr int64_t kKBlock = 32;

// K elements per feature atom: 16 int8, 8 fp16, 32 int4 (A is (K/fa, M, fa)).
constexpr int64_t feature_atom(int64_t element_bits) { return kAtomBytes * 8 / element_bits; }

// Kernels per weight block, wa: 32 int8, 16 fp16, 64 int4 (a block is 1 KiB for each).
constexpr int64_t weight_atom(int64_t element_bits) {
  return element_bits == 16 ? 16 : element_bits == 4 ? 64 : 32;
}

// The width the DPU writes C in: int32 for int8, int16 partials for int4, fp32 for fp16 or,
// with OUT_CVT's FP32TOFP16_EN, fp16.
constexpr int64_t output_element_bits(int64_t element_bits, bool fp16_out) {
  return element_bits == 4 || (element_bits == 16 && fp16_out) ? 16 : 32;
}

// N elements per 16-byte output atom, C2: 4 for int32 / fp32, 8 for int16 / fp16 (C is
// (N/C2, M, C2)).
constexpr int64_t output_atom(int64_t output_bits) { return kAtomBytes * 8 / output_bits; }

static_assert(feature_atom(8) == 16 && feature_atom(16) == 8 && feature_atom(4) == 32);
static_assert(weight_atom(8) * kKBlock * 8 / 8 == 1024 && weight_atom(16) * kKBlock * 16 / 8 == 1024 &&
              weight_atom(4) * kKBlock * 4 / 8 == 1024);
static_assert(output_atom(output_element_bits(8, false)) == 4 && output_atom(output_element_bits(4, false)) == 8 &&
              output_atom(output_element_bits(16, false)) == 4 && output_atom(output_element_bits(16, true)) == 8);

}  // namespace ork::hw
