// The emulated NPU with a PC that does no work (as ork_bench --decode's emu-zero-time and
// mc_prof --zero-time): every submit completes at once and computes nothing, so a matmul
// call costs only the host's own work (plan lookup, packing A, the ioctls, unpacking C).
// ork_run uses it to measure host time per call (--project) and for the timing runs of
// --bench-orders, whose outputs are therefore never checked.
#pragma once

#include <memory>
#include <string>

#include "driver/common/result.h"
#include "lib/api/device.h"

namespace ork::tools {

Result<std::unique_ptr<ork_device>> open_zero_work_emulator();

}  // namespace ork::tools
