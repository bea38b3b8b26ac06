// What an ork_device is inside: a backend (a kernel interface over the real OS or over the
// emulated NPU, or the CPU reference) and the matmul runner bound to it.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>

#include "driver/common/result.h"
#include "driver/kmd/kmd.h"
#include "lib/api/stats.h"
#include "lib/matmul/run.h"
#include "ork/ork.h"

namespace ork::emu {
class FakeKernel;
struct FakeKernelConfig;
}

// Thread safety: `mutex` is the device's queue. Every entry point that touches the runner,
// the kernel interface or the weights of a device holds it for its whole device work (a
// blocking ork_matmul, making weights resident), so calls from many threads run one after
// another.
struct ork_device {
  std::recursive_mutex mutex;  // recursive: an entry point may hold it around a helper that takes it too
  std::string backend;                          // "rknpu", "rocket", "emu", "cpu"
  std::unique_ptr<ork::emu::FakeKernel> fake;   // the emulated NPU, for "emu"
  std::unique_ptr<ork::driver::Kmd> kmd;        // null for "cpu"
  std::unique_ptr<ork::matmul::MatmulRunner> runner;
  ork_device_info info{};
  ork::api::DeviceStats stats;                  // cumulative counters (stats.h)
  std::atomic<int64_t> host_weight_bytes{0};    // cpu: packed weights' host bytes
  ~ork_device();
};

namespace ork::api {

// Opens a device by name: rknpu[:NODE], rocket[:NODE], emu, emu-rknpu, emu-rocket, cpu,
// auto; nullptr / "default" -> $ORK_DEVICE, else auto.
Result<std::unique_ptr<ork_device>> open_device(const char* name);
// An emulated device over a fake kernel of the given configuration (tools and tests: e.g. a
// PC that does no work, to measure the host's own cost), through the `kind` interface.
Result<std::unique_ptr<ork_device>> open_emulator(driver::KmdKind kind, const emu::FakeKernelConfig& config);

}  // namespace ork::api
