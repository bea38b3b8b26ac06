// The executor's weight slots (executor.h): BOs on a device, host buffers on the cpu
// backend, all allocated once before a run, in the plan's slot sizes.
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <vector>

#include "driver/common/result.h"
#include "lib/exec/executor.h"
#include "lib/io/slot_buffer.h"

namespace ork::exec {

struct Slots {
  std::vector<std::unique_ptr<driver::Bo>> bos;
  std::vector<io::SlotBuffer> host;
  std::vector<std::span<std::byte>> spans;  // one per slot, in the plan's order
  std::vector<int> window;                  // per slot: its NPU window (windows.h)
};

// Each slot in its window's Kmd (`window[slot]`, all 0 when empty).
Result<Slots> allocate_slots(const ExecPlan& plan, const DeviceRef& dev, const std::vector<int>& window = {});

}  // namespace ork::exec
