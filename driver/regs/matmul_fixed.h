// The registers of a matmul task that do not depend on its shape or buffers, with the one
// value every public capture of a plain matmul (a 1x1 convolution with every DPU stage
// bypassed) writes there; and the per-output-type facts of the few that do. The emitter
// (lib/matmul/emit.cpp) writes each of them in every task, and the emulator
// (driver/emu/npu/task_config.cpp) refuses a task whose register file holds anything else:
// a real core keeps whatever the previous job left in a register (another process's
// convolution, a previous libork job), so a task that relies on a register it did not write
// computes with someone else's setting. docs/regcmd-contract.md section 3a lists them with
// the reason for each; the adversarial register mode (ORK_EMU_REGS) tests it.
//
// Sources (both write exactly these 71 registers with these values, besides the shape and
// address registers): MTX = mtx512/rk3588-npu src/npu_matmul.c gen_matmul_task (commit
// 4723947), the open driver's int8/fp16 matmul; VND = the vendor runtime's own task, captured
// from librknnrt 2.3.2 (oRKLLM/ork-driver src/regcmd_i4.h, commit e5fff08, int4 M=4 K=64
// N=64). Where the two agree the value is a fact; the meaning of most bits is not public.
#pragma once

#include <cstdint>

#include "driver/regs/npu_regs.h"

namespace ork::regs {

struct FixedWrite {
  Block block;
  uint16_t offset;
  uint32_t value;
};

inline constexpr FixedWrite kMatmulFixed[] = {
    // CNA input converter bypassed, signed data, scales 1 (MTX cvt_bypass/type/sign = 1,
    // cvt_scale0..3 = 1 << 16; VND 0xb, 0x10000).
    {Block::cna, CNA_CVT_CON0, 0x0000000b},
    {Block::cna, CNA_CVT_CON1, 0x00010000},
    {Block::cna, CNA_CVT_CON2, 0x00010000},
    {Block::cna, CNA_CVT_CON3, 0x00010000},
    {Block::cna, CNA_CVT_CON4, 0x00010000},
    {Block::cna, CNA_CVT_CON5, 0},
    // Not a fully-connected skip, no data/weight offsets, no padding, pad value 0.
    {Block::cna, CNA_FC_CON0, 0},
    {Block::cna, CNA_FC_CON1, 0},
    {Block::cna, CNA_FC_CON2, 0},
    {Block::cna, CNA_PAD_CON0, 0},
    {Block::cna, CNA_PAD_CON1, 0},
    // AXI burst lengths 15/15 (MTX weight/data_burst_len = 0xf; VND 0x000f000f).
    {Block::cna, CNA_DMA_CON0, 0x000f000f},
    // Weight decompression off: uncompressed weights at DCOMP_ADDR0.
    {Block::cna, CNA_DCOMP_CTRL, 0},
    {Block::cna, CNA_DCOMP_REGNUM, 0},
    {Block::cna, CNA_DCOMP_AMOUNT0, 0},
    {Block::cna, CNA_DCOMP_AMOUNT1, 0},
    {Block::cna, CNA_DCOMP_AMOUNT2, 0},
    {Block::cna, CNA_DCOMP_AMOUNT3, 0},
    {Block::cna, CNA_DCOMP_AMOUNT4, 0},
    {Block::cna, CNA_DCOMP_AMOUNT5, 0},
    {Block::cna, CNA_DCOMP_AMOUNT6, 0},
    {Block::cna, CNA_DCOMP_AMOUNT7, 0},
    {Block::cna, CNA_DCOMP_AMOUNT8, 0},
    {Block::cna, CNA_DCOMP_AMOUNT9, 0},
    {Block::cna, CNA_DCOMP_AMOUNT10, 0},
    {Block::cna, CNA_DCOMP_AMOUNT11, 0},
    {Block::cna, CNA_DCOMP_AMOUNT12, 0},
    {Block::cna, CNA_DCOMP_AMOUNT13, 0},
    {Block::cna, CNA_DCOMP_AMOUNT14, 0},
    {Block::cna, CNA_DCOMP_AMOUNT15, 0},
    // CORE: no clip/truncate shift of the accumulators; 0x3030 undocumented, written 0.
    {Block::core, CORE_CLIP_TRUNCATE, 0},
    {Block::core, CORE_UNKNOWN_3030, 0},
    // DPU: output mode 2 (to memory), direct convolution, burst 15 (MTX; VND 0x1e4).
    {Block::dpu, DPU_FEATURE_MODE_CFG, 0x000001e4},
    {Block::dpu, DPU_OFFSET_PEND, 0},
    {Block::dpu, DPU_DATA_CUBE_NOTCH_ADDR, 0},
    // Bias (BS) and batch-norm (BN) stages bypassed: BYPASS, ALU_BYPASS, MUL_BYPASS,
    // RELU_BYPASS = bits 0, 1, 4, 6 (MTX), 0x53 (VND); their operands 0.
    {Block::dpu, DPU_BS_CFG, 0x00000053},
    {Block::dpu, DPU_BS_ALU_CFG, 0},
    {Block::dpu, DPU_BS_MUL_CFG, 0},
    {Block::dpu, DPU_BS_RELUX_CMP_VALUE, 0},
    {Block::dpu, DPU_BS_OW_OP, 0},
    {Block::dpu, DPU_BN_CFG, 0x00000053},
    {Block::dpu, DPU_BN_ALU_CFG, 0},
    {Block::dpu, DPU_BN_MUL_CFG, 0},
    {Block::dpu, DPU_BN_RELUX_CMP_VALUE, 0},
    // Element-wise stage bypassed: BYPASS, OP_BYPASS, LUT_BYPASS, OP_CVT_BYPASS,
    // RELU_BYPASS = bits 0, 1, 7, 8, 9 (MTX), 0x383 (VND); its converter identity.
    {Block::dpu, DPU_EW_CFG, 0x00000383},
    {Block::dpu, DPU_EW_CVT_OFFSET_VALUE, 0},
    {Block::dpu, DPU_EW_CVT_SCALE_VALUE, 1},
    {Block::dpu, DPU_EW_RELUX_CMP_VALUE, 0},
    {Block::dpu, DPU_EW_OP_VALUE_0, 0},
    {Block::dpu, DPU_EW_OP_VALUE_1, 0},
    {Block::dpu, DPU_EW_OP_VALUE_2, 0},
    {Block::dpu, DPU_EW_OP_VALUE_3, 0},
    {Block::dpu, DPU_EW_OP_VALUE_4, 0},
    {Block::dpu, DPU_EW_OP_VALUE_5, 0},
    {Block::dpu, DPU_EW_OP_VALUE_6, 0},
    {Block::dpu, DPU_EW_OP_VALUE_7, 0},
    // Output converter: offset 0, shift 0 (its scale, with FP32TOFP16_EN, depends on the
    // output type and is written with the shape registers).
    {Block::dpu, DPU_OUT_CVT_OFFSET, 0},
    {Block::dpu, DPU_OUT_CVT_SHIFT, 0},
    {Block::dpu, DPU_UNKNOWN_40C4, 0},
    // No lookup table.
    {Block::dpu, DPU_LUT_ACCESS_CFG, 0},
    {Block::dpu, DPU_LUT_ACCESS_DATA, 0},
    {Block::dpu, DPU_LUT_CFG, 0},
    {Block::dpu, DPU_LUT_INFO, 0},
    {Block::dpu, DPU_LUT_LE_START, 0},
    {Block::dpu, DPU_LUT_LE_END, 0},
    {Block::dpu, DPU_LUT_LO_START, 0},
    {Block::dpu, DPU_LUT_LO_END, 0},
    {Block::dpu, DPU_LUT_LE_SLOPE_SCALE, 0},
    {Block::dpu, DPU_LUT_LE_SLOPE_SHIFT, 0},
    {Block::dpu, DPU_LUT_LO_SLOPE_SCALE, 0},
    {Block::dpu, DPU_LUT_LO_SLOPE_SHIFT, 0},
};

// CNA / CORE precision codes (IN_PRECISION, PROC_PRECISION; docs/regcmd-contract.md section 2): int8 0,
// fp16 2 (MTX npu_hw.h); int4 6 (ORK regcmd_i4.h capture: 0x100c = 0x360, i.e. IN = PROC =
// 6; rocket-userspace npu_hw.h).
inline constexpr uint32_t kPrecisionInt8 = 0, kPrecisionFp16 = 2, kPrecisionInt4 = 6;

// DPU OUT_PRECISION codes (MTX npu_hw.h; int16 = 1 from the VND capture's 0x4010).
inline constexpr uint32_t kOutPrecisionInt16 = 1, kOutPrecisionFp16 = 2, kOutPrecisionInt32 = 4,
                          kOutPrecisionFp32 = 5;

// The OUT_PRECISION a matmul task of CNA precision `precision` writes, the one mapping the
// emitter writes and the emulator demands: int8 -> int32 (MTX gen_matmul_int8); fp16 -> fp32
// (MTX gen_matmul_fp16), or fp16 with FP32TOFP16_EN (`fp16_out`; MTX fp32tofp16); int4 ->
// int16 partials (VND capture 0x4010 = 0x38000006: OUT 31:29 = 1). 0 for an unknown code.
constexpr uint32_t out_precision_for(uint32_t precision, bool fp16_out) {
  switch (precision) {
    case kPrecisionInt8: return kOutPrecisionInt32;
    case kPrecisionFp16: return fp16_out ? kOutPrecisionFp16 : kOutPrecisionFp32;
    case kPrecisionInt4: return kOutPrecisionInt16;
    default: return 0;
  }
}

// BS_OW_CFG per output type: OD_BYPASS (bit 1) and the three SIZE_E fields (4:2, 7:5, 10:8)
// = 7 for int32 (MTX gen_matmul_int8: 0x7fe), 3 for fp32 (MTX gen_matmul_fp16: 0x36e),
// 1 for fp16 (MTX fp32tofp16: 0x126), 7 for int16 (VND: 0x7fe). 0 for an unknown type.
constexpr uint32_t dpu_bs_ow_cfg(uint32_t out_precision) {
  auto cfg = [](uint32_t e) { return (e << 8) | (e << 5) | (e << 2) | (1u << 1); };
  switch (out_precision) {
    case kOutPrecisionInt32: return cfg(7);
    case kOutPrecisionFp32: return cfg(3);
    case kOutPrecisionFp16: return cfg(1);
    case kOutPrecisionInt16: return cfg(7);
    default: return 0;
  }
}

// SURFACE_ADD.SURF_ADD = DST_SURF_STRIDE x this factor: 8 for int32, 4 for fp32, 2 for fp16
// (MTX surf_add), 8 for int16 (VND: stride 1, SURF_ADD 8; one sample). 0 for an unknown type.
constexpr uint32_t dpu_surface_add_factor(uint32_t out_precision) {
  switch (out_precision) {
    case kOutPrecisionInt32: return 8;
    case kOutPrecisionFp32: return 4;
    case kOutPrecisionFp16: return 2;
    case kOutPrecisionInt16: return 8;
    default: return 0;
  }
}

}  // namespace ork::regs
