// The zero-work emulator (zero_work.h).
#include "tools/ork_run/zero_work.h"

#include "driver/emu/kernel/fake_kernel.h"

namespace ork::tools {

Result<std::unique_ptr<ork_device>> open_zero_work_emulator() {
  emu::FakeKernelConfig cfg;  // fast timing: completion is reported at once
  cfg.executor = [](const emu::DeviceMemory&, int, uint64_t, uint32_t, uint32_t max_tasks) {
    emu::ChainResult r;  // every task "done", no demands, no modelled time
    r.tasks_done = max_tasks;
    return r;
  };
  return api::open_emulator(driver::KmdKind::rknpu, cfg);
}

}  // namespace ork::tools
