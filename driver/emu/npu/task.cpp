// Temporary: the pipeline lands in the next commits (task_config.cpp, cna.cpp, cbuf.cpp,
// core.cpp, dpu.cpp). Until then every task fails loudly instead of pretending to run.
#include "driver/emu/npu/task.h"

namespace ork::emu {

TaskOutcome execute_task(const RegisterFile&, const DeviceMemory&) {
  return {CoreStatus::config_error, kIntDmaReadError,
          "emulated pipeline not implemented yet (driver/emu/npu/task.cpp)"};
}

}  // namespace ork::emu
