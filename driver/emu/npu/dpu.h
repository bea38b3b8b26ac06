// The DPU's output DMA: C written as the DPU registers say (contract section 2-3): surfaces
// of C2 columns (4 for int32/fp32, 8 for fp16/int16), DST_SURF_STRIDE atoms apart, one
// 16-byte atom per row.
#pragma once

#include <cstdint>
#include <span>

#include "driver/emu/npu/memory.h"
#include "driver/emu/npu/task_config.h"

namespace ork::emu {

// Checks every output range first; on any outside a BO nothing is written (dma_write_error).
// `c_i32` for int8/int4 tasks (int4 saturates to int16 here), `c_f32` for fp16.
TaskOutcome store_output_i32(const DeviceMemory& mem, const TaskConfig& cfg, std::span<const int32_t> c);
TaskOutcome store_output_f32(const DeviceMemory& mem, const TaskConfig& cfg, std::span<const float> c);

}  // namespace ork::emu
