// The task as the register file describes it: decoded and checked once, before any DMA.
// Every rule here is a row of docs/regcmd-contract.md section 3 ("used" and "checked").
#pragma once

#include <cstdint>

#include "driver/common/npu_layout.h"
#include "driver/emu/npu/regfile.h"
#include "driver/emu/npu/task.h"
#include "driver/timing/timing_model.h"

namespace ork::emu {

enum class NpuType { int8, fp16, int4 };

enum class CbufSchedule {
  k_reduction,    // CBUF_CON0 DATA_BANK >= 1 and WEIGHT_BANK >= 1 (sched=1 in docs/hardware.md 10)
  resident_rows,  // CBUF_CON0 = 0 (sched=0 in docs/hardware.md 10)
};

struct TaskConfig {
  NpuType type = NpuType::int8;
  uint32_t precision = 0;      // CONV_CON1 code: 0 int8, 2 fp16, 6 int4
  uint32_t mc = 0;             // rows (DATAIN_HEIGHT)
  uint32_t kt = 0;             // K of the task (DATAIN_CHANNEL)
  uint32_t cols = 0;           // columns the DPU writes: DATA_CUBE_CHANNEL + 1
  uint32_t elem_bits = 8;      // input element width: 8, 16, 4
  uint64_t a_iova = 0;         // FEATURE_DATA_ADDR: element (m0, k0)
  uint64_t a_line_atoms = 0;   // DMA_CON1 LINE_STRIDE (16-byte atoms between rows)
  uint64_t a_surf_atoms = 0;   // DMA_CON2 SURF_STRIDE (atoms between K-surfaces)
  uint64_t b_iova = 0;         // DCOMP_ADDR0
  uint32_t b_bytes = 0;        // WEIGHT_SIZE0: the weight DMA's length
  uint64_t c_iova = 0;         // DST_BASE_ADDR: element (m0, n0)
  uint64_t c_surf_atoms = 0;   // DST_SURF_STRIDE
  bool fp16_out = false;       // OUT_CVT_SCALE FP32TOFP16_EN (fp16 only)
  CbufSchedule schedule = CbufSchedule::resident_rows;
  uint32_t data_banks = 0, weight_banks = 0;

  uint32_t row_bytes() const { return kt * elem_bits / 8; }      // one feature row in CBUF
  // The native layouts' atoms (driver/common/npu_layout.h): kernels per weight block, N
  // elements per 16-byte output atom (C2) and the output element's bytes.
  uint32_t weight_atom() const { return static_cast<uint32_t>(hw::weight_atom(elem_bits)); }
  uint32_t out_c2() const { return static_cast<uint32_t>(hw::output_atom(hw::output_element_bits(elem_bits, fp16_out))); }
  uint32_t out_bytes() const { return static_cast<uint32_t>(hw::kAtomBytes) / out_c2(); }
};

// Fills `cfg` from the register file; config_error (naming the register and the values)
// when a "checked" register disagrees or a "used" one is out of range.
TaskOutcome read_task_config(const RegisterFile& regs, TaskConfig& cfg);

// What the task asks of its core and of DRAM (driver/timing/timing_model.h), from its
// registers: the weight DMA's WEIGHT_SIZE0 bytes, the rows, K, the columns, the precision.
timing::TaskDemand task_demand(const TaskConfig& cfg);

}  // namespace ork::emu
