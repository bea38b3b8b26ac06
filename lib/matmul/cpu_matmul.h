// The CPU reference as a backend of every dtype: the weights in the form its kernels take,
// kept from creation (packing per call was most of a decode call: docs/cpu-reference.md),
// and each dtype's kernel, chosen so that the cpu device returns the NPU's bytes
// (docs/dtypes.md). The dtype table (dtype.h) points at these.
#pragma once

#include <cstdint>
#include <vector>

#include "driver/common/result.h"
#include "lib/matmul/dtype.h"
#include "lib/ref/fast.h"
#include "lib/ref/fp16_matmul.h"

namespace ork::matmul {

// int8 weights (int8, and int4 widened to one int8 per value) packed once for the fast
// path's kernel, or fp16 weights in the fp16 kernels' strips (lib/ref/fp16_matmul.h), made
// once when the weights are created.
struct HostWeights {
  DType dtype = DType::int8;
  int64_t k = 0, n = 0;
  ref::PackedB packed;
  ref::PackedFp16 fp16;
  // Host bytes the form holds (a device's bytes_resident counts them).
  int64_t bytes() const { return static_cast<int64_t>(packed.bytes() + fp16.bytes()); }
};

// The rows' host_weights: dense K x N of the dtype (int8_t; binary16 bit patterns; the
// packed int4 stream) -> HostWeights.
Result<HostWeights> host_weights_int8(int64_t k, int64_t n, const void* w);
Result<HostWeights> host_weights_fp16(int64_t k, int64_t n, const void* w);
Result<HostWeights> host_weights_int4(int64_t k, int64_t n, const void* w);

// The rows' CPU kernels. `call.threads` are host threads of every dtype's path: integer sums
// are exact and the fp16 path keeps each cell's order whatever the threads, so the thread
// count never changes a byte (lib/ref/fast.h, lib/ref/fp16_matmul.h).
Status cpu_matmul_int8(const HostWeights& w, const CpuCall& call);  // int8 A (also int4 W's w4a8)
Status cpu_matmul_fp16(const HostWeights& w, const CpuCall& call);  // fp32 or fp16 C
Status cpu_matmul_int4(const HostWeights& w, const CpuCall& call);  // int4 A (W4A4) or int8 A (w4a8)

}  // namespace ork::matmul
