// ork_buffer_*: device buffers (buffer.h; docs/library.md "Buffers and tensors").
#include "lib/api/buffer.h"

#include <cerrno>
#include <cstring>
#include <new>

#include <fmt/format.h>

#include "driver/common/npu_window.h"
#include "lib/api/error.h"

using ork::api::fail;
using ork::api::guarded;

namespace ork::api {

namespace {

ork_status dmabuf_sync(const ork_buffer& b, bool start, bool write, const char* what) {
  if (!b.bo) return ORK_OK;
  if (auto s = b.device->backend->sync_buffer(b, start, write); !s)
    return fail(ORK_E_DEVICE, fmt::format("{}: {}", what, s.error().message));
  return ORK_OK;
}

}  // namespace

ork_status buffer_begin_cpu(const ork_buffer& b, bool write, const char* what) {
  return dmabuf_sync(b, true, write, what);
}

ork_status buffer_end_cpu(const ork_buffer& b, bool write, const char* what) {
  return dmabuf_sync(b, false, write, what);
}

}  // namespace ork::api

namespace {

// The largest buffer accepted: rocket's CREATE_BO takes a 32-bit size, and the NPU's address
// window is 4 GiB (driver/common/npu_window.h; docs/kernel-interfaces.md): the window less
// one 4 KiB page, the largest whole number of pages a 32-bit size holds (0xfffff000). A host
// (cpu) buffer gets the same bound.
constexpr size_t kPageBytes = 4096;
constexpr size_t kMaxBufferBytes = size_t{ork::hw::kNpuWindowBytes} - kPageBytes;
static_assert(kMaxBufferBytes == 0xfffff000);

}  // namespace

extern "C" {

ORK_API ork_status ork_buffer_create(ork_device* device, size_t bytes, ork_buffer** out) {
  return guarded([&] {
    if (out == nullptr) return fail(ORK_E_INVALID_ARGUMENT, "ork_buffer_create: out is NULL");
    *out = nullptr;
    if (device == nullptr) return fail(ORK_E_INVALID_ARGUMENT, "ork_buffer_create: device is NULL");
    if (bytes == 0) return fail(ORK_E_INVALID_ARGUMENT, "ork_buffer_create: bytes = 0: must be >= 1");
    if (bytes > kMaxBufferBytes)
      return fail(ORK_E_INVALID_ARGUMENT,
                  fmt::format("ork_buffer_create: bytes = {}: larger than {} (the NPU's 4 GiB window) is not supported",
                              bytes, kMaxBufferBytes));
    auto b = std::make_unique<ork_buffer>();
    b->keep_device = ork::api::DeviceRef(device);
    b->device = device;
    b->bytes = bytes;
    if (auto st = device->backend->make_buffer(*b, "ork_buffer_create"); st != ORK_OK) return st;  // NPU: a BO; cpu: host memory
    *out = b.release();
    return ork::api::ok();
  });
}

ORK_API ork_status ork_buffer_map(ork_buffer* buffer, void** ptr) {
  if (ptr == nullptr) return fail(ORK_E_INVALID_ARGUMENT, "ork_buffer_map: ptr is NULL");
  *ptr = nullptr;
  if (buffer == nullptr) return fail(ORK_E_INVALID_ARGUMENT, "ork_buffer_map: buffer is NULL");
  *ptr = buffer->data();
  return ork::api::ok();
}

ORK_API size_t ork_buffer_size(const ork_buffer* buffer) { return buffer ? buffer->bytes : 0; }

ORK_API ork_status ork_buffer_export_dmabuf(ork_buffer* buffer, int* fd) {
  return guarded([&] {
    if (fd == nullptr) return fail(ORK_E_INVALID_ARGUMENT, "ork_buffer_export_dmabuf: fd is NULL");
    *fd = -1;
    if (buffer == nullptr) return fail(ORK_E_INVALID_ARGUMENT, "ork_buffer_export_dmabuf: buffer is NULL");
    if (!buffer->bo)
      return fail(ORK_E_UNSUPPORTED, fmt::format("ork_buffer_export_dmabuf: the {} backend has no kernel interface to "
                                                 "export a dma-buf from",
                                                 buffer->device->name));
    return buffer->device->backend->export_buffer(*buffer, fd, "ork_buffer_export_dmabuf");
  });
}

ORK_API ork_status ork_buffer_import_dmabuf(ork_device* device, int fd, size_t bytes, ork_buffer** out) {
  return guarded([&] {
    if (out == nullptr) return fail(ORK_E_INVALID_ARGUMENT, "ork_buffer_import_dmabuf: out is NULL");
    *out = nullptr;
    if (device == nullptr) return fail(ORK_E_INVALID_ARGUMENT, "ork_buffer_import_dmabuf: device is NULL");
    if (bytes == 0) return fail(ORK_E_INVALID_ARGUMENT, "ork_buffer_import_dmabuf: bytes = 0: must be >= 1");
    if (bytes > kMaxBufferBytes)
      return fail(ORK_E_INVALID_ARGUMENT, fmt::format("ork_buffer_import_dmabuf: bytes = {}: larger than {} is not "
                                                      "supported",
                                                      bytes, kMaxBufferBytes));
    if (fd < 0) return fail(ORK_E_INVALID_ARGUMENT, fmt::format("ork_buffer_import_dmabuf: fd = {}: not a file descriptor", fd));
    auto b = std::make_unique<ork_buffer>();
    b->keep_device = ork::api::DeviceRef(device);
    b->device = device;
    b->bytes = bytes;
    if (auto st = device->backend->import_buffer(*b, fd, "ork_buffer_import_dmabuf"); st != ORK_OK) return st;
    *out = b.release();
    return ork::api::ok();
  });
}

ORK_API ork_status ork_buffer_destroy(ork_buffer* buffer) {
  if (buffer == nullptr) return ork::api::ok();
  if (const int users = buffer->users.load(std::memory_order_acquire); users > 0)
    return fail(ORK_E_INVALID_ARGUMENT,
                fmt::format("ork_buffer_destroy: the buffer is in use by {} call(s) or job(s); wait for them first", users));
  delete buffer;
  return ork::api::ok();
}

}  // extern "C"
