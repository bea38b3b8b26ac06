// What an ork_buffer is inside: a BO of the device's kernel interface (NPU backends) or an
// aligned host allocation (cpu), the size the caller asked for, and a count of the calls and
// jobs using it (ork_buffer_destroy refuses while it is not zero).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "driver/kmd/kmd.h"
#include "lib/api/device.h"
#include "ork/ork.h"

struct ork_buffer {
  ork::api::DeviceRef keep_device;  // first: released last, after the BO (device.h)
  ork_device* device = nullptr;
  size_t bytes = 0;                          // as asked (the BO is page-rounded)
  std::unique_ptr<ork::driver::Bo> bo;       // NPU backends
  std::unique_ptr<uint8_t[]> host;           // cpu backend
  std::atomic<int> users{0};                 // calls / jobs holding it (BufferUse)
  uint8_t* data() const { return bo ? bo->map() : host.get(); }
};

namespace ork::api {

// Holds a buffer in use for as long as it lives (a sync call's duration, or an async job's
// until it is waited for): ork_buffer_destroy is refused meanwhile. Null buffer: no-op.
class BufferUse {
 public:
  BufferUse() = default;
  explicit BufferUse(ork_buffer* b) : b_(b) {
    if (b_) b_->users.fetch_add(1, std::memory_order_acq_rel);
  }
  ~BufferUse() { reset(); }
  BufferUse(BufferUse&& o) noexcept : b_(o.b_) { o.b_ = nullptr; }
  BufferUse& operator=(BufferUse&& o) noexcept {
    if (this != &o) { reset(); b_ = o.b_; o.b_ = nullptr; }
    return *this;
  }
  BufferUse(const BufferUse&) = delete;
  BufferUse& operator=(const BufferUse&) = delete;
  void reset() {
    if (b_) b_->users.fetch_sub(1, std::memory_order_acq_rel);
    b_ = nullptr;
  }

 private:
  ork_buffer* b_ = nullptr;
};

// Brackets the library's CPU access to a buffer. A buffer shared as a dma-buf (exported or
// imported) gets DMA_BUF_IOCTL_SYNC START before and END after (other devices' fences,
// the exporter's cache maintenance); one that is not shared is touched by the CPU alone
// (the NPU reads and writes the runner's own BOs), so there is nothing to maintain.
ork_status buffer_begin_cpu(const ork_buffer& b, bool write, const char* what);
ork_status buffer_end_cpu(const ork_buffer& b, bool write, const char* what);

}  // namespace ork::api
