// The DPU's output DMA: C written as the DPU registers say (docs/regcmd-contract.md sections 2-3): surfaces
// of C2 columns (4 for int32/fp32, 8 for fp16/int16), DST_SURF_STRIDE atoms apart, one
// 16-byte atom per row.
#pragma once

#include <cstdint>
#include <optional>
#include <span>

#include "driver/emu/npu/core.h"
#include "driver/emu/npu/memory.h"
#include "driver/emu/npu/task_config.h"

namespace ork::emu {

// Checks every output range first; on any outside a BO nothing is written (dma_write_error).
// `c_i32` for int8/int4 tasks (int4 saturates to int16 here), `c_f32` for fp16.
TaskOutcome store_output_i32(const DeviceMemory& mem, const TaskConfig& cfg, std::span<const int32_t> c);
TaskOutcome store_output_f32(const DeviceMemory& mem, const TaskConfig& cfg, std::span<const float> c);

// The int32 output cube of an int8 task as one writable layout, so the multiply can write it
// in place; nullopt when that would not be the same as store_output_i32 - surfaces that are
// not all in one BO, surfaces closer than mc atoms (they overlap: the DPU's write order would
// matter), an IOVA that is not 4-byte aligned - and the caller goes through store_output_i32.
std::optional<Int32Out> output_cube_i32(const DeviceMemory& mem, const TaskConfig& cfg);

}  // namespace ork::emu
