// The CBUF model (docs/regcmd-contract.md section 4, docs/emulator.md "CBUF"): which tasks
// wedge, and how a feature tile that does not fit its data banks comes out wrong.
#pragma once

#include <cstdint>
#include <span>

#include "driver/common/cbuf_limits.h"
#include "driver/emu/npu/task_config.h"

namespace ork::emu {

// The limits themselves (banks, 64-row groups, R, wide K) are driver/common/cbuf_limits.h:
// the planner plans with the same description.
// fp16 sched=1: exact for mc <= 8, wrong from 9 at K >= 2048 (cbuf_limits.h).
inline constexpr uint32_t kFp16ExactRows = static_cast<uint32_t>(hw::kFp16ExactRows);
inline constexpr uint32_t kFp16BadFromK = static_cast<uint32_t>(hw::kFp16RowLimitFromK);

// R = pow2_floor(2 * 49152 / kt): rows the resident-row schedule holds (cbuf_limits.h).
uint32_t resident_rows(uint32_t kt);

// wedged when the task can never complete (K past 4096 with mc >= R; resident rows past
// R), else ok.
TaskOutcome check_wedge(const TaskConfig& cfg);

// Rewrites the dense feature tile (cfg.mc rows of cfg.row_bytes() bytes, as the CNA wrote
// it into the CBUF) into what the CORE reads back: the ring wrap of an overflowing tile,
// and the fp16 M-scheduler rule. Returns the number of rows that changed source.
uint32_t apply_cbuf(const TaskConfig& cfg, std::span<uint8_t> tile);

}  // namespace ork::emu
