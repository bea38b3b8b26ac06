// Plan -> register writes, by docs/regcmd-contract.md section 3 (one row of its table per
// emit below). Values come from the task and the buffer addresses only.
#include "lib/matmul/emit.h"

#include <fmt/format.h>

#include "driver/regcmd/regcmd.h"
#include "driver/regs/npu_regs.h"

namespace ork::matmul {
namespace {

namespace R = ork::regs;

// Precision codes (contract section 2; MTX npu_hw.h, ORK regcmd_i4.h).
constexpr uint32_t kPrecInt8 = 0;
constexpr uint32_t kOutInt32 = 4;  // DPU OUT_PRECISION for int32 output (MTX)

uint32_t u32(int64_t v) { return static_cast<uint32_t>(v); }

// One register write: checked (the library), or truncated as the hardware would keep it.
template <class Reg>
void put(regcmd::Builder& rc, const EmitOptions& opt, const Reg& reg) {
  if (opt.truncate_fields)
    rc.emit_raw(Reg::block, Reg::offset, reg.pack_truncating());
  else
    rc.emit(reg);
}

Status check_addr(uint64_t iova, const char* what) {
  if (iova >> 32) return make_error(-EINVAL, fmt::format("{} address {:#x} is not below 4 GiB", what, iova));
  return Status::success();
}

}  // namespace

Status emit_task_body(const Plan& plan, const Task& t, const BufferIovas& io, regcmd::Builder& rc,
                      const EmitOptions& opt) {
  if (plan.dtype != DType::int8) return make_error(-EOPNOTSUPP, "emitter: only int8 is implemented");
  const int64_t slot = t.slice - io.first_slice;
  if (slot < 0 || slot >= static_cast<int64_t>(io.c.size()))
    return make_error(-EINVAL, fmt::format("emitter: slice {} has no output buffer", t.slice));
  const uint64_t a = io.a + static_cast<uint64_t>(plan.a_offset(t));
  const uint64_t b = io.b + static_cast<uint64_t>(plan.b_offset(t));
  const uint64_t c = io.c[static_cast<size_t>(slot)] + static_cast<uint64_t>(plan.c_offset(t));
  for (auto [addr, what] : {std::pair{a, "feature"}, {b, "weight"}, {c, "output"}})
    if (auto s = check_addr(addr, what); !s) return s;

  // The DPU (and its RDMA) pointer registers: producer/consumer ping-pong as every capture
  // writes first (rk3588-npu.md section 3); the kernel writes CNA/CORE S_POINTER itself.
  put(rc, opt, R::DpuSPointer{.pointer_pp_en = 1, .executer_pp_en = 1, .pointer_pp_mode = 1});
  put(rc, opt, R::CnaConvCon1{.conv_mode = 0, .in_precision = kPrecInt8, .proc_precision = kPrecInt8});
  put(rc, opt, R::CnaConvCon2{.feature_grains = t.feature_grains});
  put(rc, opt, R::CnaConvCon3{.conv_x_stride = 1, .conv_y_stride = 1});
  put(rc, opt, R::CnaDataSize0{.datain_height = u32(t.mc), .datain_width = 1});
  put(rc, opt, R::CnaDataSize1{.datain_channel = u32(t.kt), .datain_channel_real = u32(t.kt - 1)});
  put(rc, opt, R::CnaDataSize2{.dataout_width = 1});
  put(rc, opt, R::CnaDataSize3{.dataout_atomics = u32(t.mc)});
  put(rc, opt, R::CnaWeightSize0{.weight_bytes = u32(t.kt * t.nt)});
  put(rc, opt, R::CnaWeightSize1{.weight_bytes_per_kernel = u32(t.kt)});
  put(rc, opt, R::CnaWeightSize2{.weight_kernels = u32(t.nt), .weight_height = 1, .weight_width = 1});
  put(rc, opt, R::CnaCbufCon0{.data_bank = t.data_banks, .weight_bank = t.weight_banks});
  put(rc, opt, R::CnaCbufCon1{.data_entries = u32((t.kt + 63) / 64)});
  put(rc, opt, R::CnaFeatureDataAddr{.feature_base_addr = u32(a)});
  put(rc, opt, R::CnaDmaCon1{.line_stride = 1});
  put(rc, opt, R::CnaDmaCon2{.surf_stride = u32(plan.mp)});
  put(rc, opt, R::CnaDcompAddr0{.dcomp_addr0 = u32(b)});
  put(rc, opt, R::CoreMiscCfg{.qd_en = 0, .proc_precision = kPrecInt8});
  put(rc, opt, R::CoreDataoutSize0{.dataout_width = 0, .dataout_height = u32(t.mc - 1)});
  put(rc, opt, R::CoreDataoutSize1{.dataout_channel = u32(t.nt - 1)});
  put(rc, opt, R::DpuDataFormat{.proc_precision = kPrecInt8, .in_precision = kPrecInt8, .out_precision = kOutInt32});
  put(rc, opt, R::DpuDstBaseAddr{.dst_base_addr = u32(c)});
  put(rc, opt, R::DpuDstSurfStride{.dst_surf_stride = u32(plan.mp)});
  put(rc, opt, R::DpuDataCubeWidth{.width = 0});
  put(rc, opt, R::DpuDataCubeHeight{.height = u32(t.mc - 1)});
  put(rc, opt, R::DpuDataCubeChannel{.channel = u32(t.nt - 1)});
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
