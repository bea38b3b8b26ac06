// The CBUF model (docs/regcmd-contract.md section 4, docs/emulator.md "CBUF"): which tasks
// wedge, and how a feature tile that does not fit its data banks comes out wrong.
#pragma once

#include <cstdint>
#include <span>

#include "driver/emu/npu/task_config.h"

namespace ork::emu {

inline constexpr uint32_t kCbufBanks = 12;           // RKT-M rkt_ml.h, MTX npu_hw.h
inline constexpr uint32_t kCbufBankBytes = 32 * 1024;
inline constexpr uint32_t kRowGroup = 64;            // feature rows per group (seed 004, ORK 0x1040 form)
inline constexpr uint32_t kMaxTaskK = 4096;          // full-K past 4096 wedges (seed 004 follow-up)
inline constexpr uint32_t kFp16ExactRows = 8;        // fp16 sched=1: exact for mc <= 8 (seed 004)
inline constexpr uint32_t kFp16BadFromK = 2048;      // ... and wrong from 9 at K >= 2048

// R = pow2_floor(2 * 32 KiB / kt): rows the resident-row schedule holds (seed 004; ORK).
uint32_t resident_rows(uint32_t kt);

// wedged when the task can never complete (K past 4096; resident rows past R), else ok.
TaskOutcome check_wedge(const TaskConfig& cfg);

// Rewrites the dense feature tile (cfg.mc rows of cfg.row_bytes() bytes, as the CNA wrote
// it into the CBUF) into what the CORE reads back: the ring wrap of an overflowing tile,
// and the fp16 M-scheduler rule. Returns the number of rows that changed source.
uint32_t apply_cbuf(const TaskConfig& cfg, std::span<uint8_t> tile);

}  // namespace ork::emu
