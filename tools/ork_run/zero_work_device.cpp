// The zero-work emulator (zero_work_device.h).
#include "tools/ork_run/zero_work_device.h"

#include "driver/emu/kernel/fake_kernel.h"
#include "driver/emu/kernel/zero_work.h"

namespace ork::tools {

Result<std::unique_ptr<ork_device>> open_zero_work_emulator() {
  emu::FakeKernelConfig cfg;  // fast timing: completion is reported at once
  cfg.executor = emu::zero_work_executor();
  return api::open_emulator(driver::KmdKind::rknpu, cfg);
}

Result<std::unique_ptr<ork_device>> open_timing_only_emulator() {
  emu::FakeKernelConfig cfg;
  cfg.timing = emu::TimingMode::timed;
  cfg.executor = emu::timing_only_executor();
  return api::open_emulator(driver::KmdKind::rknpu, cfg);
}

}  // namespace ork::tools
