// The RK3588's NPU cores: three, each with its own PC, CNA, CORE, DPU and CBUF; a job's core
// mask has bits 0..2 (docs/hardware.md section 1: VND rknpu_drv.c, "3 cores, core_mask <=
// 0x7"). The planner splits a matmul over at most these, the fake kernel models these.
#pragma once

namespace ork::hw {

inline constexpr int kNpuCores = 3;

}  // namespace ork::hw
