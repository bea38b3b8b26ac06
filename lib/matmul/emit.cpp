// Plan -> register writes, by docs/regcmd-contract.md section 3 (one row of its table per
// emit below). Values come from the task and the buffer addresses only.
#include "lib/matmul/emit.h"

#include <fmt/format.h>

#include "driver/regcmd/regcmd.h"
#include "driver/regs/matmul_fixed.h"
#include "driver/regs/npu_regs.h"

namespace ork::matmul {
namespace {

namespace R = ork::regs;

// Precision codes: the dtype table's (dtype.h; driver/regs/matmul_fixed.h).
uint32_t precision(DType d) { return dtype_info(d).precision; }
// DPU OUT_PRECISION (driver/regs/matmul_fixed.h: int32, fp32 or fp16, int16 partials).
uint32_t out_precision(const Plan& p) { return R::out_precision_for(precision(p.dtype), p.npu_fp16_out()); }
// Bytes of `elements` operands (int4: two per byte; kt and nt are multiples of 32).
int64_t op_bytes(const Plan& p, int64_t elements) { return elements * element_bits(p.dtype) / 8; }

uint32_t u32(int64_t v) { return static_cast<uint32_t>(v); }

// One register write: checked (the library), or truncated as the hardware would keep it.
template <class Reg>
void put(regcmd::Builder& rc, const EmitOptions& opt, const Reg& reg) {
  if (opt.truncate_fields)
    rc.emit_raw(Reg::block, Reg::offset, reg.pack_truncating());
  else
    rc.emit(reg);
}

// The registers that repeat the task's shape for the DMA engines, as MTX gen_matmul_task
// writes them (field widths there): FC_DATA_SIZE0/1 = the feature DMA's width/height and
// channels, WDMA_SIZE_0/1 = the output DMA's channels-1 and height-1/width-1; and the two
// per-output-type settings (matmul_fixed.h).
void emit_shape_followers(const Plan& plan, const Task& t, regcmd::Builder& rc, const EmitOptions& opt) {
  const uint32_t out = out_precision(plan);
  put(rc, opt, R::CnaFcDataSize0{.value = (1u << 16) | (u32(t.mc) & 0x7ffu)});
  put(rc, opt, R::CnaFcDataSize1{.value = u32(t.kt) & 0xffffu});
  put(rc, opt, R::DpuBsOwCfg{.value = R::dpu_bs_ow_cfg(out)});
  put(rc, opt, R::DpuWdmaSize0{.value = u32(t.nt - 1) & 0x1fffu});
  put(rc, opt, R::DpuWdmaSize1{.value = (u32(t.mc - 1) & 0x1fffu) << 16});
  put(rc, opt, R::DpuSurfaceAdd{.surf_add = u32(plan.c_rows()) * R::dpu_surface_add_factor(out)});
}

Status check_addr(uint64_t iova, const char* what) {
  if (iova >> 32) return make_error(-EINVAL, fmt::format("{} address {:#x} is not below 4 GiB", what, iova));
  return Status::success();
}

}  // namespace

Status emit_task_body(const Plan& plan, const Task& t, const BufferIovas& io, regcmd::Builder& rc,
                      const EmitOptions& opt) {
  // A stacked plan writes every slice into its one output C' (plan.h).
  const int64_t slot = plan.stacked ? 0 : t.slice - io.first_slice;
  if (slot < 0 || slot >= static_cast<int64_t>(io.c.size()))
    return make_error(-EINVAL, fmt::format("emitter: slice {} has no output buffer", t.slice));
  const uint64_t a = io.a + static_cast<uint64_t>(plan.a_offset(t));
  const uint64_t b = io.b + static_cast<uint64_t>(plan.b_offset(t));
  const uint64_t c = io.c[static_cast<size_t>(slot)] + static_cast<uint64_t>(plan.c_offset(t));
  for (auto [addr, what] : {std::pair{a, "feature"}, {b, "weight"}, {c, "output"}})
    if (auto s = check_addr(addr, what); !s) return s;

  // The DPU (and its RDMA) pointer registers: producer/consumer ping-pong as every capture
  // writes first (docs/hardware.md section 3); the kernel writes CNA/CORE S_POINTER itself.
  put(rc, opt, R::DpuSPointer{.pointer_pp_en = 1, .executer_pp_en = 1, .pointer_pp_mode = 1});
  const uint32_t prec = precision(plan.dtype);
  put(rc, opt, R::CnaConvCon1{.conv_mode = 0, .in_precision = prec, .proc_precision = prec});
  put(rc, opt, R::CnaConvCon2{.feature_grains = t.feature_grains});
  put(rc, opt, R::CnaConvCon3{.conv_x_stride = 1, .conv_y_stride = 1});
  put(rc, opt, R::CnaDataSize0{.datain_height = u32(t.mc), .datain_width = 1});
  put(rc, opt, R::CnaDataSize1{.datain_channel = u32(t.kt), .datain_channel_real = u32(t.kt - 1)});
  put(rc, opt, R::CnaDataSize2{.dataout_width = 1});
  put(rc, opt, R::CnaDataSize3{.dataout_atomics = u32(t.mc)});
  put(rc, opt, R::CnaWeightSize0{.weight_bytes = u32(op_bytes(plan, t.kt * t.nt))});  // int4: K*N/2 (capture)
  put(rc, opt, R::CnaWeightSize1{.weight_bytes_per_kernel = u32(op_bytes(plan, t.kt))});  // int4: K/2
  put(rc, opt, R::CnaWeightSize2{.weight_kernels = u32(t.nt), .weight_height = 1, .weight_width = 1});
  put(rc, opt, R::CnaCbufCon0{.data_bank = t.data_banks, .weight_bank = t.weight_banks});
  // 128-byte CBUF entries of one feature row pair: ceil(kt*bits/512) = ceil(kt/64) int8,
  // ceil(kt/32) fp16 (MTX), ceil(kt/128) int4 (ORK int4 capture). A hint (contract 3).
  put(rc, opt, R::CnaCbufCon1{.data_entries = u32((t.kt * element_bits(plan.dtype) + 511) / 512)});
  put(rc, opt, R::CnaFeatureDataAddr{.feature_base_addr = u32(a)});
  put(rc, opt, R::CnaDmaCon1{.line_stride = 1});
  put(rc, opt, R::CnaDmaCon2{.surf_stride = u32(plan.a_rows())});
  put(rc, opt, R::CnaDcompAddr0{.dcomp_addr0 = u32(b)});
  put(rc, opt, R::CoreMiscCfg{.qd_en = plan.dtype == DType::fp16 ? 1u : 0u, .proc_precision = prec});  // MTX
  put(rc, opt, R::CoreDataoutSize0{.dataout_width = 0, .dataout_height = u32(t.mc - 1)});
  put(rc, opt, R::CoreDataoutSize1{.dataout_channel = u32(t.nt - 1)});
  put(rc, opt, R::DpuDataFormat{.proc_precision = prec, .in_precision = prec, .out_precision = out_precision(plan)});
  put(rc, opt, R::DpuDstBaseAddr{.dst_base_addr = u32(c)});
  put(rc, opt, R::DpuDstSurfStride{.dst_surf_stride = u32(plan.c_rows())});
  put(rc, opt, R::DpuDataCubeWidth{.width = 0});
  put(rc, opt, R::DpuDataCubeHeight{.height = u32(t.mc - 1)});
  // ORIG_CHANNEL (the channels before alignment) = CHANNEL: every public writer's value for
  // a matmul (MTX, the vendor runtime, Mesa; docs/regcmd-contract.md section 8).
  put(rc, opt, R::DpuDataCubeChannel{.channel = u32(t.nt - 1), .orig_channel = u32(t.nt - 1)});
  // fp16 C: the DPU's fp32 -> fp16 conversion (MTX gen_matmul_fp16); scale 1 = identity as
  // the CVT registers' matmul setting (docs/hardware.md section 4). Only on one-slice plans:
  // partials of several slices stay fp32 and the host rounds once (docs/dtypes.md). Written in
  // every task, enable bit 0 or 1: the register keeps the previous job's FP32TOFP16_EN otherwise.
  put(rc, opt, R::DpuOutCvtScale{.out_cvt_scale = 1, .fp32tofp16_en = plan.npu_fp16_out() ? 1u : 0u});
  emit_shape_followers(plan, t, rc, opt);
  // Every other register a matmul depends on, with the captures' value (matmul_fixed.h):
  // the core keeps whatever the previous job wrote there (docs/regcmd-contract.md section 3a).
  for (const R::FixedWrite& f : R::kMatmulFixed) rc.emit_raw(f.block, f.offset, f.value);
  if (!rc.ok()) return make_error(-EINVAL, fmt::format("emitter: {}", rc.error()));
  return Status::success();
}

Result<CoreCommands> emit_core(const Plan& plan, std::span<const Task> tasks, const BufferIovas& io,
                               uint64_t regcmd_iova, const EmitOptions& opt) {
  // Lengths first: every task's length is needed before its predecessor's trailer. Bodies
  // are emitted twice (once to measure, once to chain); this runs once per context.
  std::vector<size_t> bodies(tasks.size());
  for (size_t i = 0; i < tasks.size(); ++i) {
    regcmd::Builder probe;
    if (auto s = emit_task_body(plan, tasks[i], io, probe, opt); !s) return s.error();
    bodies[i] = probe.size_entries();
  }

  auto padded = [](size_t n) { return (n + regcmd::kTrailerEntries + 1) / 2 * 2; };
  CoreCommands cc;
  uint32_t offset = 0;
  for (size_t i = 0; i < tasks.size(); ++i) {
    cc.task_offsets.push_back(offset);
    cc.task_entries.push_back(static_cast<uint32_t>(padded(bodies[i])));
    offset += (cc.task_entries.back() + 7) / 8 * 8;  // 64-byte aligned task starts
  }
  cc.entries.assign(offset, 0);
  for (size_t i = 0; i < tasks.size(); ++i) {
    const bool last = i + 1 == tasks.size();
    const uint64_t next_iova = last ? 0 : regcmd_iova + uint64_t{cc.task_offsets[i + 1]} * 8;
    const uint32_t next_entries = last ? 0 : cc.task_entries[i + 1];
    regcmd::Builder rc;
    if (auto s = emit_task_body(plan, tasks[i], io, rc, opt); !s) return s.error();
    rc.finish(next_iova, next_entries);
    if (!rc.ok()) return make_error(-EINVAL, fmt::format("emitter: {}", rc.error()));
    if (rc.size_entries() != cc.task_entries[i])
      return make_error(-EINVAL, "emitter: task length changed while chaining");
    std::copy(rc.entries().begin(), rc.entries().end(), cc.entries.begin() + cc.task_offsets[i]);
  }
  return cc;
}

}  // namespace ork::matmul
