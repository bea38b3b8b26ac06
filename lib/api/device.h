// What an ork_device is inside: its backend object (backend.h: the NPU through a kernel
// interface over the real OS or over the emulated NPU, or the CPU reference), its queue,
// statistics and references.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "driver/common/result.h"
#include "driver/kmd/kmd.h"
#include "lib/api/backend.h"
#include "lib/api/handles.h"
#include "lib/api/stats.h"
#include "lib/matmul/run.h"
#include "ork/ork.h"

namespace ork::api {
class JobQueue;
// Out of line (job.cpp): code that makes an ork_device need not see the queue's definition.
struct JobQueueDeleter {
  void operator()(JobQueue* q) const;
};
}

namespace ork::emu {
class FakeKernel;
struct FakeKernelConfig;
class Int8Engine;
}

// Thread safety: `mutex` is the device's queue. Every entry point that touches the backend
// or the weights of a device takes it once, at its top, for its whole device work (a
// blocking ork_matmul, making weights resident), so calls from many threads run one after
// another; nothing below an entry point takes it again (a plain mutex: a second lock on one
// thread would deadlock, not pass).
struct ork_device {
  // A live handle (handles.h) from its opening to its ork_device_close: a second close is
  // refused without touching the device, which may be gone.
  ork::api::Live<ork::api::HandleKind::device> live{this};
  std::mutex mutex;
  std::string name;                             // the backend's name: "rknpu", "rocket", "emu", "cpu"
  // The emulated NPU's integer engine, for "emu": the device's own, declared before the fake
  // kernel that multiplies with it, so that it outlives the kernel.
  std::unique_ptr<const ork::emu::Int8Engine> int8_engine;
  std::unique_ptr<ork::emu::FakeKernel> fake;   // the emulated NPU, for "emu"
  // What the device computes with (backend.h), declared after the fake kernel it may drive.
  std::unique_ptr<ork::api::Backend> backend;
  ork_device_info info{};
  ork::api::DeviceStats stats;                  // cumulative counters (stats.h)
  std::atomic<int64_t> host_weight_bytes{0};    // cpu: packed weights' host bytes
  // Lifetime, shared: the caller's handle holds one reference and every object made on the
  // device (ork_weights, ork_qweights, ork_buffer, jobs: ork::api::DeviceRef) one more. ork_device_close
  // drops the handle's; the device (its kernel fd, its BOs' mappings) goes with the last
  // reference, so weights destroyed after their device was closed free their BOs through a
  // device that still exists (this was a use-after-free).
  std::atomic<int> refs{1};
  std::atomic<bool> closed{false};  // ork_device_close was called (the handle is gone)
  std::unique_ptr<ork::api::JobQueue, ork::api::JobQueueDeleter> jobs;     // asynchronous jobs and batches (job.h)
  ~ork_device();
};

namespace ork::api {

// +1 / -1 on a device's references; release deletes the device at 0. Null is ignored.
ork_device* retain(ork_device* device);
void release(ork_device* device);

// One reference held by an object made on the device; declare it first among the object's
// members so that it is destroyed last (after the BOs it frees through the device).
class DeviceRef {
 public:
  DeviceRef() = default;
  explicit DeviceRef(ork_device* device) : device_(retain(device)) {}
  DeviceRef(DeviceRef&& o) noexcept : device_(o.device_) { o.device_ = nullptr; }
  DeviceRef& operator=(DeviceRef&& o) noexcept {
    if (this != &o) {
      release(device_);
      device_ = o.device_;
      o.device_ = nullptr;
    }
    return *this;
  }
  DeviceRef(const DeviceRef&) = delete;
  DeviceRef& operator=(const DeviceRef&) = delete;
  ~DeviceRef() { release(device_); }
  ork_device* get() const { return device_; }

 private:
  ork_device* device_ = nullptr;
};
// The device's job queue (made on first use; the caller holds the device's mutex).
JobQueue& jobs_of(ork_device& device);

// `src` into a fixed char array, truncated, always terminated (ork_device_info's strings).
template <size_t N>
void copy_str(char (&dst)[N], std::string_view src) {
  const size_t n = std::min(src.size(), N - 1);
  std::memcpy(dst, src.data(), n);
  dst[n] = '\0';
}

// The device a name stands for: nullptr, "" and "default" -> $ORK_DEVICE when set and not
// empty, else "auto"; any other name is itself. The one reader of ORK_DEVICE's default rule
// (open_device, and tools that name the device before opening it).
std::string resolve_device_name(const char* name);
// Opens a device by name: rknpu[:NODE], rocket[:NODE], emu, emu-rknpu, emu-rocket, cpu,
// auto; nullptr / "default" -> $ORK_DEVICE, else auto (resolve_device_name).
Result<std::unique_ptr<ork_device>> open_device(const char* name);
// An emulated device over a fake kernel of the given configuration (tools and tests: e.g. a
// PC that does no work, to measure the host's own cost), through the `kind` interface.
Result<std::unique_ptr<ork_device>> open_emulator(driver::KmdKind kind, const emu::FakeKernelConfig& config);

}  // namespace ork::api
