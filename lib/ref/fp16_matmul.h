// The fp16 matmul of the CPU backend: the oracle's order exactly (oracle.h
// matmul_fp16_sliced: per slice acc = 0.0f, k increasing, acc + a*b without FMA; slices added
// in order), computed a row at a time across all columns so the compiler can vectorise over
// n without reordering any cell's sum. B is converted to fp32 once per call.
#pragma once

#include <cstdint>
#include <span>

#include "driver/common/result.h"
#include "lib/ref/oracle.h"

namespace ork::ref {

Status matmul_fp16_rows(std::span<const uint16_t> a, std::span<const uint16_t> b, std::span<float> c, Dims d,
                        int64_t slice_k);
// The same, each cell rounded once to fp16 (nearest even).
Status matmul_fp16_rows_to_fp16(std::span<const uint16_t> a, std::span<const uint16_t> b,
                                std::span<uint16_t> c, Dims d, int64_t slice_k);

}  // namespace ork::ref
