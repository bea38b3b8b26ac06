// Packing a real model: safetensors weights (lib/io's reader) + a model description into a
// packed model file. Per tensor, by the description's dtype:
//   int8 model: I8 tensors are taken as codes; F16, BF16 and F32 are quantised per output
//               column (docs/quantisation.md: symmetric, scale = absmax / 127) and the
//               scales stored beside the codes;
//   int4 model: F16, BF16, F32 quantised per column to int4 codes (scale = absmax / 7);
//   fp16 model: F16 as is; BF16 and F32 rounded to fp16 (nearest even).
// Tensors in the Hugging Face N x K orientation (layout "n_by_k") are transposed to K x N.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "driver/common/result.h"
#include "lib/exec/model.h"

namespace ork::exec {

Status pack_safetensors(const std::string& safetensors_path, const ModelDesc& desc, const std::string& out_path,
                        const std::function<void(int64_t, int64_t)>& progress = {});

// The size of the file pack_safetensors writes (packed_file_bytes with the tensors
// that carry scales), after the same checks: every tensor present, of its shape, each
// (layer, matmul) a tensor of its own.
Result<uint64_t> safetensors_pack_bytes(const std::string& safetensors_path, const ModelDesc& desc);

// The tensor name of (layer, matmul): the description's pattern with "{layer}" replaced.
std::string tensor_name(const MatmulDesc& m, int layer);

}  // namespace ork::exec
