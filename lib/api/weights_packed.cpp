// ork_weights_export_packed / ork_weights_import_packed (docs/dtypes.md "Packed-weight
// blobs"). The payload is always the NPU's native weight bytes of layout version
// matmul::kWeightLayoutVersion: an NPU device copies them in and out of its weight buffer;
// the cpu backend packs its values into that layout on export and unpacks it on import, so
// one blob serves every backend.
#include <cstdint>
#include <cstring>
#include <mutex>
#include <memory>
#include <vector>

#include <fmt/format.h>

#include "lib/api/error.h"
#include "lib/api/weights.h"
#include "lib/api/weights_blob.h"
#include "lib/matmul/context.h"
#include "lib/matmul/layout.h"

using ork::api::fail;
namespace blob = ork::api::blob;

namespace {

constexpr int64_t kPackedMaxDim = int64_t{1} << 24;  // as api.cpp

size_t packed_sz(int64_t v) { return static_cast<size_t>(v); }

// The payload of `w`: the NPU device's buffer as it is, or the cpu's values packed.
ork_status write_payload(const ork_weights& w, const ork::matmul::Plan& plan, std::span<uint8_t> out) {
  // The blob's layout is the dtype's (int4: 480-wide slices): int4 weights packed wider
  // from their own bound (lib/matmul/int4_bound.h) are repacked from their K x N stream, and
  // an import finds the width again from the weights.
  if (w.resident && w.resident->slice_k() == 0) {
    const auto native = w.resident->native();
    std::memcpy(out.data(), native.data(), native.size());
    return ORK_OK;
  }
  std::vector<uint8_t> dense;
  if (w.resident) {
    dense = w.packed;  // an NPU's int4 weights keep their K x N stream (weights.h)
  } else if (auto s = ork::api::dense_values(w, dense); s != ORK_OK) {
    return s;
  }
  if (auto s = ork::matmul::pack_weights(plan, dense.data(), out); !s)
    return fail(ork::make_error(s.error().code, fmt::format("ork_weights_export_packed: {}", s.error().message)));
  return ORK_OK;
}

}  // namespace

extern "C" {

ORK_API ork_status ork_weights_packed_bytes(ork_dtype dtype, int64_t k, int64_t n, uint64_t* bytes) {
  constexpr const char* fn = "ork_weights_packed_bytes";
  return ork::api::guarded([&] {
    if (bytes == nullptr) return fail(ORK_E_INVALID_ARGUMENT, fmt::format("{}: bytes is NULL", fn));
    if (ork::matmul::weights_dtype(static_cast<int32_t>(dtype)) == nullptr)
      return fail(ORK_E_INVALID_ARGUMENT, fmt::format("{}: dtype {}: weights are int8 (1), fp16 (2) or int4 (3)", fn,
                                                      static_cast<int32_t>(dtype)));
    if (k < 1 || k > kPackedMaxDim || n < 1 || n > kPackedMaxDim)
      return fail(ORK_E_INVALID_ARGUMENT, fmt::format("{}: K = {}, N = {}: each must be in 1..{}", fn, k, n, kPackedMaxDim));
    auto plan = ork::matmul::ResidentWeights::layout(ork::api::internal_dtype(dtype), k, n);
    if (!plan) return fail(ork::make_error(plan.error().code, fmt::format("{}: {}", fn, plan.error().message)));
    *bytes = static_cast<uint64_t>(plan->b_bytes());
    return ork::api::ok();
  });
}

ORK_API ork_status ork_weights_export_packed(const ork_weights* weights, void* out, size_t capacity, size_t* size) {
  constexpr const char* fn = "ork_weights_export_packed";
  return ork::api::guarded([&] {
    if (weights == nullptr) return fail(ORK_E_INVALID_ARGUMENT, fmt::format("{}: weights is NULL", fn));
    if (size == nullptr) return fail(ORK_E_INVALID_ARGUMENT, fmt::format("{}: size is NULL", fn));
    auto plan = ork::matmul::ResidentWeights::layout(ork::api::internal_dtype(weights->dtype), weights->k, weights->n);
    if (!plan) return fail(plan.error());
    const size_t need = blob::kHeaderBytes + packed_sz(plan->b_bytes());
    *size = need;
    if (out == nullptr) return ork::api::ok();  // a query
    if (capacity < need)
      return fail(ORK_E_INVALID_ARGUMENT, fmt::format("{}: capacity = {} bytes: the blob needs {} (returned in *size)", fn,
                                                      capacity, need));
    std::span<uint8_t> b{static_cast<uint8_t*>(out), need};
    if (auto s = write_payload(*weights, *plan, b.subspan(blob::kHeaderBytes)); s != ORK_OK) return s;
    blob::write_header({.layout_version = ork::matmul::kWeightLayoutVersion,
                        .dtype = static_cast<uint32_t>(weights->dtype),
                        .k = weights->k,
                        .n = weights->n,
                        .payload_bytes = static_cast<uint64_t>(plan->b_bytes())},
                       b);
    return ork::api::ok();
  });
}

ORK_API ork_status ork_weights_import_packed(ork_device* device, const void* data, size_t size, ork_weights** out) {
  constexpr const char* fn = "ork_weights_import_packed";
  return ork::api::guarded([&] {
    if (out == nullptr) return fail(ORK_E_INVALID_ARGUMENT, fmt::format("{}: out is NULL", fn));
    *out = nullptr;
    if (device == nullptr) return fail(ORK_E_INVALID_ARGUMENT, fmt::format("{}: device is NULL", fn));
    if (data == nullptr) return fail(ORK_E_INVALID_ARGUMENT, fmt::format("{}: blob is NULL", fn));
    const std::span<const uint8_t> b{static_cast<const uint8_t*>(data), size};
    auto h = blob::read_header(b, ork::matmul::kWeightLayoutVersion);
    if (!h) return fail(ORK_E_INVALID_ARGUMENT, fmt::format("{}: {}", fn, h.error().message));
    if (h->dtype > INT32_MAX || ork::matmul::weights_dtype(static_cast<int32_t>(h->dtype)) == nullptr)
      return fail(ORK_E_INVALID_ARGUMENT, fmt::format("{}: dtype {} in the header: packed weights are int8 (1), fp16 (2) or "
                                                      "int4 (3)", fn, h->dtype));
    if (h->k < 1 || h->k > kPackedMaxDim || h->n < 1 || h->n > kPackedMaxDim)
      return fail(ORK_E_INVALID_ARGUMENT, fmt::format("{}: K = {}, N = {} in the header: each must be in 1..{}", fn, h->k, h->n,
                                                      kPackedMaxDim));
    const auto dtype = static_cast<ork_dtype>(h->dtype);
    auto plan = ork::matmul::ResidentWeights::layout(ork::api::internal_dtype(dtype), h->k, h->n);
    if (!plan) return fail(plan.error());
    if (h->payload_bytes != static_cast<uint64_t>(plan->b_bytes()))
      return fail(ORK_E_INVALID_ARGUMENT, fmt::format("{}: payload of {} bytes: {} x {} weights in layout version {} are {} "
                                                      "bytes", fn, h->payload_bytes, h->k, h->n, h->layout_version,
                                                      plan->b_bytes()));
    auto w = std::make_unique<ork_weights>();
    w->keep_device = ork::api::DeviceRef(device);
    w->device = device;
    w->dtype = dtype;
    w->k = h->k;
    w->n = h->n;
    std::lock_guard lock(device->mutex);  // the device's queue (device.h)
    if (auto s = device->backend->import_weights(*w, *plan, b.subspan(blob::kHeaderBytes)); s != ORK_OK) return s;
    *out = w.release();
    return ork::api::ok();
  });
}

}  // extern "C"
