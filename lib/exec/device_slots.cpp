// The executor's weight slots (slots.h).
#include "lib/exec/device_slots.h"

#include <fmt/format.h>

namespace ork::exec {

Result<Slots> allocate_slots(const ExecPlan& plan, const DeviceRef& dev, const std::vector<int>& window) {
  Slots s;
  s.window = window.empty() ? std::vector<int>(plan.slot_bytes.size(), 0) : window;
  for (size_t i = 0; i < plan.slot_bytes.size(); ++i) {
    const uint64_t bytes = plan.slot_bytes[i];
    if (dev.on_npu()) {
      if (static_cast<size_t>(s.window[i]) > dev.more_windows.size())
        return make_error(-EINVAL, fmt::format("weight slot {} is in NPU window {}, and the device has {} open", i,
                                               s.window[i], dev.more_windows.size() + 1));
      auto bo = dev.window(s.window[i]).kmd->bo_create(bytes, driver::BoUsage::data);
      if (!bo) return make_error(bo.error().code, fmt::format("allocating a {}-byte weight slot in NPU window {}: {}", bytes,
                                                              s.window[i], bo.error().message));
      s.spans.emplace_back(reinterpret_cast<std::byte*>((*bo)->map()), bytes);
      s.bos.push_back(std::move(*bo));
    } else {
      auto b = io::SlotBuffer::allocate(bytes);
      if (!b) return b.error();
      s.spans.emplace_back(b->data(), bytes);
      s.host.push_back(std::move(*b));
    }
  }
  return s;
}

}  // namespace ork::exec
