// Register file -> TaskConfig, with the contract's checks (docs/regcmd-contract.md
// section 3; docs/emulator.md "Checks"). Values are read as the registers keep them: every
// field already truncated to its width.
#include "driver/emu/npu/task_config.h"

#include <fmt/format.h>

#include "driver/common/cbuf_limits.h"
#include "driver/regs/matmul_fixed.h"
#include "driver/regs/npu_regs.h"

namespace ork::emu {
namespace {

namespace R = ork::regs;

// Precision codes (driver/regs/matmul_fixed.h; docs/regcmd-contract.md section 2).
constexpr uint32_t kPrecInt8 = R::kPrecisionInt8, kPrecFp16 = R::kPrecisionFp16, kPrecInt4 = R::kPrecisionInt4;

TaskOutcome bad(std::string message) {
  return {CoreStatus::config_error, kIntDmaReadError, std::move(message)};
}

TaskOutcome read_type(const RegisterFile& regs, TaskConfig& c) {
  const auto con1 = regs.view<R::CnaConvCon1>();
  if (con1.conv_mode != 0)
    return bad(fmt::format("CNA_CONV_CON1.CONV_MODE = {}: only 0 (direct convolution) is modelled", con1.conv_mode));
  if (con1.in_precision != con1.proc_precision)
    return bad(fmt::format("CNA_CONV_CON1: IN_PRECISION {} != PROC_PRECISION {}", con1.in_precision, con1.proc_precision));
  c.precision = con1.in_precision;
  switch (c.precision) {
    case kPrecInt8: c.type = NpuType::int8; c.elem_bits = 8; break;
    case kPrecFp16: c.type = NpuType::fp16; c.elem_bits = 16; break;
    case kPrecInt4: c.type = NpuType::int4; c.elem_bits = 4; break;
    default:
      return bad(fmt::format("CNA_CONV_CON1.IN_PRECISION = {}: modelled are 0 (int8), 2 (fp16), 6 (int4)", c.precision));
  }
  return {};
}

TaskOutcome read_cna(const RegisterFile& regs, TaskConfig& c) {
  const auto con3 = regs.view<R::CnaConvCon3>();
  if (con3.conv_x_stride != 1 || con3.conv_y_stride != 1)
    return bad(fmt::format("CNA_CONV_CON3: strides {}/{}, a matmul needs 1/1", con3.conv_x_stride, con3.conv_y_stride));
  const auto s0 = regs.view<R::CnaDataSize0>();
  const auto s1 = regs.view<R::CnaDataSize1>();
  c.mc = s0.datain_height;
  c.kt = s1.datain_channel;
  if (c.mc == 0) return bad("CNA_DATA_SIZE0.DATAIN_HEIGHT = 0: no rows");
  if (s0.datain_width != 1) return bad(fmt::format("CNA_DATA_SIZE0.DATAIN_WIDTH = {}: the matmul form has W = 1", s0.datain_width));
  if (c.kt == 0 || c.kt % hw::kKBlock != 0)
    return bad(fmt::format("CNA_DATA_SIZE1.DATAIN_CHANNEL = {}: must be a positive multiple of {} (weight blocks of {} K)", c.kt,
                           hw::kKBlock, hw::kKBlock));
  if (s1.datain_channel_real != ((c.kt - 1) & 0x3fffu))
    return bad(fmt::format("CNA_DATA_SIZE1.DATAIN_CHANNEL_REAL = {}, expected DATAIN_CHANNEL-1 = {}", s1.datain_channel_real, c.kt - 1));
  if (auto v = regs.view<R::CnaDataSize2>().dataout_width; v != 1)
    return bad(fmt::format("CNA_DATA_SIZE2.DATAOUT_WIDTH = {}, expected 1", v));
  if (auto v = regs.view<R::CnaDataSize3>().dataout_atomics; v != c.mc)
    return bad(fmt::format("CNA_DATA_SIZE3.DATAOUT_ATOMICS = {}, expected DATAIN_HEIGHT = {}", v, c.mc));
  const uint32_t kernel_bytes = c.row_bytes();
  if (auto v = regs.view<R::CnaWeightSize1>().weight_bytes_per_kernel; v != (kernel_bytes & 0x7ffffu))
    return bad(fmt::format("CNA_WEIGHT_SIZE1.WEIGHT_BYTES_PER_KERNEL = {}, expected {} (K x element size)", v, kernel_bytes));
  const auto w2 = regs.view<R::CnaWeightSize2>();
  if (w2.weight_height != 1 || w2.weight_width != 1)
    return bad(fmt::format("CNA_WEIGHT_SIZE2: kernel {}x{}, a matmul uses 1x1", w2.weight_width, w2.weight_height));
  c.b_bytes = regs.view<R::CnaWeightSize0>().weight_bytes;
  c.a_iova = regs.view<R::CnaFeatureDataAddr>().feature_base_addr;
  c.a_line_atoms = regs.view<R::CnaDmaCon1>().line_stride;
  c.a_surf_atoms = regs.view<R::CnaDmaCon2>().surf_stride;
  c.b_iova = regs.view<R::CnaDcompAddr0>().dcomp_addr0;
  return {};
}

TaskOutcome read_cbuf(const RegisterFile& regs, TaskConfig& c) {
  const auto cb = regs.view<R::CnaCbufCon0>();
  c.data_banks = cb.data_bank;
  c.weight_banks = cb.weight_bank;
  if (cb.data_bank + cb.weight_bank > hw::kCbufBanks)
    return bad(fmt::format("CNA_CBUF_CON0: DATA_BANK {} + WEIGHT_BANK {} > {} banks", cb.data_bank, cb.weight_bank,
                           hw::kCbufBanks));
  if (cb.data_bank == 0 && cb.weight_bank == 0) {
    c.schedule = CbufSchedule::resident_rows;
  } else if (cb.data_bank >= 1 && cb.weight_bank >= 1) {
    c.schedule = CbufSchedule::k_reduction;
  } else {
    return bad(fmt::format("CNA_CBUF_CON0: DATA_BANK {} / WEIGHT_BANK {}: the K-reduction schedule needs >= 1 of each",
                           cb.data_bank, cb.weight_bank));
  }
  return {};
}

TaskOutcome read_core(const RegisterFile& regs, const TaskConfig& c, uint32_t dpu_channel) {
  const auto misc = regs.view<R::CoreMiscCfg>();
  if (misc.proc_precision != c.precision)
    return bad(fmt::format("CORE_MISC_CFG.PROC_PRECISION = {}, CNA says {}", misc.proc_precision, c.precision));
  const uint32_t want_qd = c.type == NpuType::fp16 ? 1 : 0;  // MTX: QD_EN 1 for fp16, 0 for int8
  if (misc.qd_en != want_qd) return bad(fmt::format("CORE_MISC_CFG.QD_EN = {}, expected {}", misc.qd_en, want_qd));
  const auto o0 = regs.view<R::CoreDataoutSize0>();
  if (o0.dataout_width != 0 || o0.dataout_height != c.mc - 1)
    return bad(fmt::format("CORE_DATAOUT_SIZE_0: WIDTH-1 {} HEIGHT-1 {}, expected 0 and {}", o0.dataout_width, o0.dataout_height, c.mc - 1));
  // The DPU keeps 13 bits of the channel count: it must agree with the CORE's in those bits
  // (a raw N = 16384 task keeps 16383 in the CORE and 8191 in the DPU: docs/regcmd-contract.md section 3).
  const uint32_t core_channel = regs.view<R::CoreDataoutSize1>().dataout_channel;
  if ((core_channel & 0x1fffu) != dpu_channel)
    return bad(fmt::format("CORE_DATAOUT_SIZE_1.DATAOUT_CHANNEL = {} disagrees with DPU_DATA_CUBE_CHANNEL = {}", core_channel, dpu_channel));
  return {};
}

// The one mapping the emitter writes (driver/regs/matmul_fixed.h).
uint32_t expected_out_precision(const TaskConfig& c) { return R::out_precision_for(c.precision, c.fp16_out); }

TaskOutcome read_dpu(const RegisterFile& regs, TaskConfig& c) {
  c.fp16_out = regs.view<R::DpuOutCvtScale>().fp32tofp16_en != 0;
  if (c.fp16_out && c.type != NpuType::fp16)
    return bad("DPU_OUT_CVT_SCALE.FP32TOFP16_EN = 1 on a task that is not fp16");
  const auto fmt_reg = regs.view<R::DpuDataFormat>();
  if (fmt_reg.proc_precision != c.precision || fmt_reg.in_precision != c.precision)
    return bad(fmt::format("DPU_DATA_FORMAT: PROC {} / IN {} precision, CNA says {}", fmt_reg.proc_precision, fmt_reg.in_precision, c.precision));
  if (fmt_reg.out_precision != expected_out_precision(c))
    return bad(fmt::format("DPU_DATA_FORMAT.OUT_PRECISION = {}, expected {}", fmt_reg.out_precision, expected_out_precision(c)));
  if (auto w = regs.view<R::DpuDataCubeWidth>().width; w != 0)
    return bad(fmt::format("DPU_DATA_CUBE_WIDTH.WIDTH = {}, expected 0 (W = 1)", w));
  if (auto h = regs.view<R::DpuDataCubeHeight>().height; h != c.mc - 1)
    return bad(fmt::format("DPU_DATA_CUBE_HEIGHT.HEIGHT = {}, expected DATAIN_HEIGHT-1 = {}", h, c.mc - 1));
  // ORIG_CHANNEL: N-1 like CHANNEL in every public matmul; another value's effect (fewer
  // real channels than aligned ones) is not modelled, so it is refused (docs/regcmd-contract.md section 3).
  const auto cube = regs.view<R::DpuDataCubeChannel>();
  if (cube.orig_channel != cube.channel)
    return bad(fmt::format("DPU_DATA_CUBE_CHANNEL.ORIG_CHANNEL = {}, a matmul needs CHANNEL = {}", cube.orig_channel, cube.channel));
  c.cols = cube.channel + 1;
  c.c_iova = regs.view<R::DpuDstBaseAddr>().dst_base_addr;
  c.c_surf_atoms = regs.view<R::DpuDstSurfStride>().dst_surf_stride;
  // The weight DMA must cover every column the DPU writes (whole weight atoms).
  const uint64_t wa = c.weight_atom();
  const uint64_t need = (c.cols + wa - 1) / wa * wa * c.kt * c.elem_bits / 8;
  if (c.b_bytes < need)
    return bad(fmt::format("CNA_WEIGHT_SIZE0 = {} bytes, but {} columns of K = {} need {}", c.b_bytes, c.cols, c.kt, need));
  return {};
}

// The registers a matmul depends on beyond those above (driver/regs/matmul_fixed.h,
// docs/regcmd-contract.md section 3a). The core keeps what the previous job left in them, and their effect
// on other values is not modelled: a task runs only with the captures' matmul values.
TaskOutcome check_fixed(const RegisterFile& regs, const TaskConfig& c) {
  for (const R::FixedWrite& f : R::kMatmulFixed) {
    if (const uint32_t v = regs.get(f.offset); v != f.value) {
      const R::RegInfo* info = R::find_reg(f.block, f.offset);
      return bad(fmt::format("{} = 0x{:x}: a matmul needs 0x{:x} (left by an earlier job? libork writes it "
                             "in every task)", info ? info->name : "register", v, f.value));
    }
  }
  const uint32_t out = expected_out_precision(c);
  const struct {
    uint16_t offset;
    const char* name;
    uint32_t want;
  } follow[] = {
      {R::CNA_FC_DATA_SIZE0, "CNA_FC_DATA_SIZE0", (1u << 16) | (c.mc & 0x7ffu)},
      {R::CNA_FC_DATA_SIZE1, "CNA_FC_DATA_SIZE1", c.kt & 0xffffu},
      {R::DPU_BS_OW_CFG, "DPU_BS_OW_CFG", R::dpu_bs_ow_cfg(out)},
      {R::DPU_WDMA_SIZE_0, "DPU_WDMA_SIZE_0", (c.cols - 1) & 0x1fffu},
      {R::DPU_WDMA_SIZE_1, "DPU_WDMA_SIZE_1", ((c.mc - 1) & 0x1fffu) << 16},
      {R::DPU_SURFACE_ADD, "DPU_SURFACE_ADD",
       R::DpuSurfaceAdd{.surf_add = static_cast<uint32_t>(c.c_surf_atoms) * R::dpu_surface_add_factor(out)}.pack_truncating()},
      {R::DPU_OUT_CVT_SCALE, "DPU_OUT_CVT_SCALE", R::DpuOutCvtScale{.out_cvt_scale = 1, .fp32tofp16_en = c.fp16_out ? 1u : 0u}.pack_truncating()},
  };
  for (const auto& f : follow)
    if (const uint32_t v = regs.get(f.offset); v != f.want)
      return bad(fmt::format("{} = 0x{:x}, expected 0x{:x} for this task's shape and output type", f.name, v, f.want));
  return {};
}

}  // namespace

TaskOutcome read_task_config(const RegisterFile& regs, TaskConfig& cfg) {
  cfg = TaskConfig{};
  if (auto o = read_type(regs, cfg); o.status != CoreStatus::ok) return o;
  if (auto o = read_cna(regs, cfg); o.status != CoreStatus::ok) return o;
  if (auto o = read_cbuf(regs, cfg); o.status != CoreStatus::ok) return o;
  if (auto o = read_dpu(regs, cfg); o.status != CoreStatus::ok) return o;
  if (auto o = read_core(regs, cfg, cfg.cols - 1); o.status != CoreStatus::ok) return o;
  return check_fixed(regs, cfg);
}

timing::TaskDemand task_demand(const TaskConfig& cfg) {
  double mpc = timing::kInt8MacsPerCycle;
  switch (cfg.type) {
    case NpuType::int8: mpc = timing::kInt8MacsPerCycle; break;
    case NpuType::fp16: mpc = timing::kFp16MacsPerCycle; break;
    case NpuType::int4: mpc = timing::kInt4MacsPerCycle; break;
  }
  // The weight DMA reads WEIGHT_SIZE0 bytes (the columns the DPU writes, whole atoms).
  return timing::make_demand({.mc = cfg.mc, .kt = cfg.kt, .cols = cfg.cols,
                              .weight_bytes = static_cast<double>(cfg.b_bytes),
                              .row_bytes = static_cast<double>(cfg.row_bytes()),
                              .out_elem_bytes = static_cast<double>(cfg.out_bytes()), .macs_per_cycle = mpc});
}

}  // namespace ork::emu
