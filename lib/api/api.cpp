// The C entry points: argument checks, conversion of internal errors, no exception across
// the boundary (every entry point catches and reports).
#include <cstring>
#include <exception>
#include <limits>
#include <mutex>
#include <new>
#include <vector>

#include <fmt/format.h>

#include "lib/api/device.h"
#include "lib/api/error.h"
#include "lib/api/job_queue.h"
#include "lib/api/stats.h"
#include "lib/api/matmul_t.h"
#include "lib/api/tensor.h"
#include "lib/api/weights.h"
#include "lib/ref/fast.h"
#include "ork/ork.h"
#include "ork_config.h"

using ork::api::fail;
using ork::api::guarded;

namespace {

using ork::api::kMaxDim;

ork_status check_dim(const char* what, int64_t v) {
  if (v < 1) return fail(ORK_E_INVALID_ARGUMENT, fmt::format("{} = {}: must be >= 1", what, v));
  if (v > kMaxDim)
    return fail(ORK_E_INVALID_ARGUMENT, fmt::format("{} = {}: larger than {} is not supported", what, v, kMaxDim));
  return ORK_OK;
}

}  // namespace

extern "C" {

ORK_API const char* ork_version(void) { return ORK_VERSION; }

ORK_API const char* ork_status_string(ork_status status) {
  // Any int a C caller passed, read as the integer (enum_value, lib/api/weights.h): a C++
  // load of an out-of-range enum is undefined (clang's UBSan: "load of value 99").
  switch (ork::api::enum_value(status)) {
    case ORK_OK: return "ok";
    case ORK_E_INVALID_ARGUMENT: return "invalid argument";
    case ORK_E_UNSUPPORTED: return "unsupported";
    case ORK_E_NO_DEVICE: return "no device";
    case ORK_E_NO_MEMORY: return "out of memory";
    case ORK_E_DEVICE: return "device error";
    case ORK_E_TIMEOUT: return "timeout";
  }
  return "unknown status";
}

ORK_API ork_status ork_device_open(const char* name, ork_device** out) {
  return guarded([&] {
    if (out == nullptr) return fail(ORK_E_INVALID_ARGUMENT, "ork_device_open: out is NULL");
    *out = nullptr;
    auto dev = ork::api::open_device(name);
    if (!dev) return ork::api::fail_open(dev.error());
    *out = dev->release();
    return ork::api::ok();
  });
}

// Drops the handle's reference: the device itself goes when its last weights do (device.h).
ORK_API void ork_device_close(ork_device* device) {
  if (device == nullptr) return;
  // A handle closed already is refused before anything reads it (handles.h).
  if (!ork::api::handle_dies(ork::api::HandleKind::device, device)) {
    (void)fail(ORK_E_INVALID_ARGUMENT, "ork_device_close: not an open device (closed already?): ignored");
    return;
  }
  {
    // Jobs in flight end on the device now, their results discarded; jobs and batches lose
    // the device (a later wait or submit is refused, release and destroy still work).
    std::lock_guard lock(device->mutex);
    if (device->jobs) device->jobs->close();
  }
  device->closed = true;
  ork::api::release(device);
}

ORK_API ork_status ork_device_get_info(const ork_device* device, ork_device_info* info) {
  if (device == nullptr) return fail(ORK_E_INVALID_ARGUMENT, "ork_device_get_info: device is NULL");
  if (info == nullptr) return fail(ORK_E_INVALID_ARGUMENT, "ork_device_get_info: info is NULL");
  *info = device->info;
  return ork::api::ok();
}

ORK_API ork_status ork_weights_create(ork_device* device, ork_dtype dtype, int64_t k, int64_t n,
                                      const void* data, ork_weights** out) {
  return guarded([&] {
    if (out == nullptr) return fail(ORK_E_INVALID_ARGUMENT, "ork_weights_create: out is NULL");
    *out = nullptr;
    if (device == nullptr) return fail(ORK_E_INVALID_ARGUMENT, "ork_weights_create: device is NULL");
    if (data == nullptr) return fail(ORK_E_INVALID_ARGUMENT, "ork_weights_create: data is NULL");
    if (auto s = check_dim("K", k); s != ORK_OK) return s;
    if (auto s = check_dim("N", n); s != ORK_OK) return s;
    if (auto s = ork::api::check_weights_dtype(ork::api::enum_value(dtype)); s != ORK_OK) return s;
    auto w = std::make_unique<ork_weights>();
    w->keep_device = ork::api::DeviceRef(device);
    w->device = device;
    w->dtype = dtype;
    w->k = k;
    w->n = n;
    std::lock_guard lock(device->mutex);
    if (auto s = device->backend->make_weights(*w, data); s != ORK_OK) return s;
    *out = w.release();
    return ork::api::ok();
  });
}

ORK_API void ork_weights_destroy(ork_weights* weights) {
  if (weights == nullptr) return;
  if (!ork::api::handle_dies(ork::api::HandleKind::weights, weights)) {
    (void)fail(ORK_E_INVALID_ARGUMENT, "ork_weights_destroy: not live weights (destroyed already?): ignored");
    return;
  }
  if (weights->device == nullptr) {
    delete weights;
    return;
  }
  // The device outlives the lock below: these weights may hold its last reference (closed
  // by the caller already), and the mutex must not die while locked.
  const ork::api::DeviceRef keep = std::move(weights->keep_device);
  std::lock_guard lock(weights->device->mutex);
  // In-flight jobs on the device complete first (they may read these weights' BO), and
  // batches using them refuse from now on (job_queue.h).
  if (weights->device->jobs) weights->device->jobs->drop_weights(weights);
  weights->device->backend->forget(*weights);
  delete weights;
}

ORK_API ork_status ork_matmul(ork_device* device, const ork_weights* weights, const void* a,
                              int64_t m, void* c, const ork_matmul_options* options) {
  // Dense host A and C, handed to the backend as they are (matmul_t.h).
  return guarded([&] { return ork::api::matmul_dense("ork_matmul", device, weights, a, m, c, options); });
}

}  // extern "C"
