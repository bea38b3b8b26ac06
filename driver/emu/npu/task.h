// One triggered task: the CNA -> CORE -> DPU pipeline run on the register file as op_en
// finds it. pc.cpp calls execute_task once per op_en; the stages live in cna.cpp (feature
// and weight DMA into dense scratch), cbuf.cpp (the CBUF model), core.cpp (the multiply)
// and dpu.cpp (the output DMA). Semantics: docs/regcmd-contract.md, docs/emulator.md.
#pragma once

#include <cstdint>
#include <string>

#include "driver/common/npu_irq.h"
#include "driver/emu/npu/memory.h"
#include "driver/emu/npu/pc.h"
#include "driver/emu/npu/regfile.h"

namespace ork::emu {

// Interrupt status bits: driver/common/npu_irq.h.
using hw::kIntDmaReadError;
using hw::kIntDmaWriteError;

struct TaskOutcome {
  CoreStatus status = CoreStatus::ok;
  uint32_t int_status = 0;
  std::string message;  // names the register or DMA that failed
  timing::TaskDemand demand;    // what the task cost (timing_model.h), set when it completed
  uint64_t saturated_cells = 0;  // int4: output cells whose exact sum was clamped to int16
};

TaskOutcome execute_task(const RegisterFile& regs, const DeviceMemory& mem, ChainWork work = ChainWork::compute);

}  // namespace ork::emu

namespace ork::emu {
// The op_en entry's action: runs the task when op_en enables CNA, CORE and DPU; anything
// less never raises the DPU's completion interrupt (wedged).
TaskOutcome execute_op_en(const RegisterFile& regs, const DeviceMemory& mem, uint32_t op_en,
                          ChainWork work = ChainWork::compute);
}  // namespace ork::emu
