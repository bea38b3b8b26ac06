// What an ork_weights is inside, and the dtype-specific halves of ork_weights_create /
// ork_matmul (matmul_dtypes.cpp; docs/dtypes.md "C API").
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <type_traits>
#include <vector>

#include "lib/api/backend.h"
#include "lib/api/device.h"
#include "lib/matmul/cpu_matmul.h"
#include "lib/matmul/layout_source.h"
#include "lib/matmul/run.h"
#include "lib/ref/fast.h"
#include "ork/ork.h"

// Aligned to a cache line, with what every call reads in one line of its own (the device it
// belongs to, dtype, K, N, the resident weights with their id and remembered context: 64
// bytes) and nothing else there, so that a call reads one line of its handle and, with the id
// and the memo carried to the runner (matmul::WeightsRef), none of the resident weights and
// no slot of the runner's cache when its context is remembered (docs/library.md "The key on
// the handle", "The handle remembers its context"). The lines before it hold what the call
// never reads.
struct ork_weights {
  ork::api::DeviceRef keep_device;  // first: released last, after the BOs below are freed
  ork::api::Live<ork::api::HandleKind::weights> live{this};  // until destroyed (handles.h)
  // int4 on NPU backends: the caller's int4 stream (K*N/2 bytes: host memory keeps int4),
  // which the w4a8 copy below is made from on the first w4a8 call.
  std::vector<uint8_t> packed;
  int64_t host_bytes = 0;  // host.bytes(), counted in the device's bytes_resident
  // int4 on NPU backends: the w4a8 buffer (int8-wide), made from `packed` on the first w4a8
  // call; read by int4 weights' w4a8 calls only, so out of the line below.
  mutable ork::matmul::OwnedWeights resident_w4a8;
  // Read by every call from here: one line.
  alignas(64) ork_device* device = nullptr;
  ork_dtype dtype = ORK_DTYPE_INT8;
  int64_t k = 0, n = 0;
  // NPU backends: the native resident buffer (int8, fp16, or int4 for W4A4), its id and the
  // context it last ran with (matmul::OwnedWeights: 32 bytes).
  ork::matmul::OwnedWeights resident;
  // cpu backend: the CPU reference's form of the weights (lib/matmul/cpu_matmul.h).
  ork::matmul::HostWeights host;
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
// The dtypes of A and C of one call after defaults (the dtype table); a bad pair is
// ORK_E_INVALID_ARGUMENT naming both dtypes. Every call resolves them once, here.
ork_status call_dtypes(const ork_weights& w, const ork_matmul_options& options, CallTypes* types);

// The dtype table's row of a weights dtype already checked (check_weights_dtype, or a
// blob's / a descriptor's check); its DType.
const matmul::DTypeInfo& dtype_row(ork_dtype dtype);
matmul::DType internal_dtype(ork_dtype dtype);
// Engine layouts and packed blobs (weights_ex.cpp, weights_packed.cpp; docs/library.md).
// From K x N or N x K data with a row stride (the source already checked): the cpu
// backend's w.host, and the K x N int4 stream an NPU backend keeps for the w4a8 copy.
ork_status host_weights_from(ork_weights& w, const matmul::WeightSource& src);
std::vector<uint8_t> int4_stream_from(const ork_weights& w, const matmul::WeightSource& src);
// The weights' values as dense K x N (int8_t, uint16_t or the int4 nibble stream): what the
// cpu backend packs into a blob's NPU layout on export.
ork_status dense_values(const ork_weights& w, std::vector<uint8_t>& out);

}  // namespace ork::api
