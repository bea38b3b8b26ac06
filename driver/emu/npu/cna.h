// The CNA's DMA: feature (A) and weights (B) read from the addresses, strides and native
// layouts the registers name (docs/regcmd-contract.md section 2), bounds-checked through
// DeviceMemory, into dense scratch the CORE multiplies.
#pragma once

#include <cstdint>
#include <vector>

#include "driver/common/int4.h"
#include "driver/emu/npu/memory.h"
#include "driver/emu/npu/task_config.h"

namespace ork::emu {

// Feature tile as the CBUF holds it: cfg.mc rows of cfg.row_bytes() bytes, row m = the
// concatenation of its 16-byte atoms over the K-surfaces (so int4 keeps its nibble order).
TaskOutcome load_feature(const DeviceMemory& mem, const TaskConfig& cfg, std::vector<uint8_t>& tile);

// The weight DMA: [DCOMP_ADDR0, +WEIGHT_SIZE0). On success `weights` points into the BO.
TaskOutcome load_weights(const DeviceMemory& mem, const TaskConfig& cfg, const uint8_t*& weights);

// Dense forms for the CORE (cols = cfg.cols columns, kt = cfg.kt).
// int8 / int4: bt[n * kt + k] = B[k][n] as int8 (int4 sign-extended), the engine's input.
void gather_weights_int(const TaskConfig& cfg, const uint8_t* weights, std::vector<int8_t>& bt);
// fp16, one block of kF16BlockColumns columns from n0 (a multiple of 16, the fp16 weight
// atom): blk[k * 16 + j] = B[k][n0 + j] as float (exact); 0 past the last column.
inline constexpr size_t kF16BlockColumns = hw::weight_atom(16);
void gather_weight_block_f16(const TaskConfig& cfg, const uint8_t* weights, size_t n0, std::vector<float>& blk);
// Feature tile -> int8 values, mc x kt: int8 is the tile itself (returned without a copy);
// int4 nibbles are sign-extended into `widened`. Or floats (fp16).
const int8_t* feature_int8(const TaskConfig& cfg, const std::vector<uint8_t>& tile, std::vector<int8_t>& widened);
void unpack_feature_f16(const TaskConfig& cfg, const std::vector<uint8_t>& tile, std::vector<float>& a);

}  // namespace ork::emu
