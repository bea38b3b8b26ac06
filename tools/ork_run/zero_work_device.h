// The emulated NPU with a PC that does no work (as ork_bench --decode's emu-zero-time and
// mc_prof --zero-time): every submit completes at once and computes nothing, so a matmul
// call costs only the host's own work (plan lookup, packing A, the ioctls, unpacking C).
// ork_run uses it to measure host time per call (--project).
#pragma once

#include <memory>
#include <string>

#include "driver/common/result.h"
#include "lib/api/device.h"

namespace ork::tools {

Result<std::unique_ptr<ork_device>> open_zero_work_emulator();

// The emulated NPU with the timing-only PC in timed mode: every task is read and timed by
// the timing model and no byte moves, and a job completes at its modelled board time; the
// host's own work (and the executor's asynchronous submission) overlaps it as on a board.
// ork_run --bench-orders times the orders on it; their outputs are never checked.
Result<std::unique_ptr<ork_device>> open_timing_only_emulator();

}  // namespace ork::tools
