// What an ork_weights is inside, and the dtype-specific halves of ork_weights_create /
// ork_matmul (matmul_dtypes.cpp; docs/dtypes.md "C API").
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <type_traits>
#include <vector>

#include "lib/api/device.h"
#include "lib/matmul/layout_source.h"
#include "lib/matmul/run.h"
#include "lib/ref/fast.h"
#include "ork/ork.h"

struct ork_weights {
  ork::api::DeviceRef keep_device;  // first: released last, after the BOs below are freed
  ork::api::Live<ork::api::HandleKind::weights> live{this};  // until destroyed (handles.h)
  ork_device* device = nullptr;
  ork_dtype dtype = ORK_DTYPE_INT8;
  int64_t k = 0, n = 0;
  // NPU backends: the native resident buffer (int8, fp16, or int4 for W4A4).
  std::unique_ptr<ork::matmul::ResidentWeights> resident;
  // int4 on NPU backends: the w4a8 buffer (int8-wide), made on the first w4a8 call from
  // `packed`, the caller's int4 stream (K*N/2 bytes: host memory keeps int4).
  mutable std::unique_ptr<ork::matmul::ResidentWeights> resident_w4a8;
  std::vector<uint8_t> packed;
  // cpu backend: int8 weights (int8, and int4 widened) packed once for the fast path's
  // kernel (packing per call was most of a decode call: docs/cpu-reference.md), or fp16
  // bit patterns, row-major K x N.
  ork::ref::PackedB host_packed;
  std::vector<uint16_t> host_fp16;
  int64_t host_bytes = 0;  // of host_packed and host_fp16, counted in the device's bytes_resident
};

namespace ork::api {

// Refuses a dtype ork_weights_create cannot take, naming it.
// `dtype` as the integer the caller passed (enum_value): any int, checked.
ork_status check_weights_dtype(int dtype);

// The integer inside an enum a caller passed. C lets a caller pass any int as an enum; a C++
// load of an out-of-range value is undefined (UBSan: "load of value 99, which is not a valid
// value for type 'ork_dtype'"), so the bytes are copied out as the underlying integer and
// checked before the enum is used.
template <typename Enum>
int enum_value(const Enum& e) {
  std::underlying_type_t<Enum> v;
  std::memcpy(&v, &e, sizeof v);
  return static_cast<int>(v);
}
// Fills w.resident / w.packed / w.host* from the caller's data (w.dtype, k, n set).
ork_status fill_weights(ork_device& device, ork_weights& w, const void* data);
// The dtypes of A and C of one call after defaults; a bad pair is ORK_E_INVALID_ARGUMENT
// naming both dtypes.
ork_status call_dtypes(const ork_weights& w, const ork_matmul_options& options, int32_t* a_dtype, int32_t* c_dtype);
// C = A x W for options already checked for cores / mc_cap / core_mask (`run` carries
// them); checks a_dtype / c_dtype. The call's figures go to `meter` (stats.h). Takes the
// device's mutex (device.h): the whole device part of a sync call is one queue entry.
ork_status run_matmul(ork_device& device, const ork_weights& w, const void* a, int64_t m, void* c,
                      const ork_matmul_options& options, const matmul::RunOptions& run, CallMeter& meter);

// The two halves of run_matmul, for the async jobs and batches (job_queue.cpp, batch.cpp): the
// NPU backends' resident weights and runner options of a call (the w4a8 copy made on its
// first use), and the cpu backend's whole call. The caller holds the device's mutex.
ork_status npu_call(ork_device& device, const ork_weights& w, const ork_matmul_options& options,
                    const matmul::RunOptions& run, const matmul::ResidentWeights** rw, matmul::RunOptions* ro);
ork_status run_cpu_call(const ork_weights& w, const void* a, int64_t m, void* c, const ork_matmul_options& options,
                        CallMeter& meter);

// Engine layouts and packed blobs (weights_ex.cpp, weights_packed.cpp; docs/library.md).
matmul::DType internal_dtype(ork_dtype dtype);
// Fills w.resident / w.packed / w.host* from K x N or N x K data with a row stride
// (w.dtype, k, n set; the source already checked).
ork_status fill_weights_source(ork_device& device, ork_weights& w, const matmul::WeightSource& src);
// The weights' values as dense K x N (int8_t, uint16_t or the int4 nibble stream): what the
// cpu backend packs into a blob's NPU layout on export.
ork_status dense_values(const ork_weights& w, std::vector<uint8_t>& out);

}  // namespace ork::api
