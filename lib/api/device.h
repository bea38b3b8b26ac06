// What an ork_device is inside: a backend (a kernel interface over the real OS or over the
// emulated NPU, or the CPU reference) and the matmul runner bound to it.
#pragma once

#include <memory>
#include <string>

#include "driver/common/result.h"
#include "driver/kmd/kmd.h"
#include "lib/matmul/run.h"
#include "ork/ork.h"

namespace ork::emu {
class FakeKernel;
}

struct ork_device {
  std::string backend;                          // "rknpu", "rocket", "emu", "cpu"
  std::unique_ptr<ork::emu::FakeKernel> fake;   // the emulated NPU, for "emu"
  std::unique_ptr<ork::driver::Kmd> kmd;        // null for "cpu"
  std::unique_ptr<ork::matmul::MatmulRunner> runner;
  ork_device_info info{};
  ~ork_device();
};

namespace ork::api {

// Opens a device by name: rknpu[:NODE], rocket[:NODE], emu, emu-rknpu, emu-rocket, cpu,
// auto; nullptr / "default" -> $ORK_DEVICE, else auto.
Result<std::unique_ptr<ork_device>> open_device(const char* name);

}  // namespace ork::api
