// The executor's weight slots (slots.h).
#include "lib/exec/device_slots.h"

#include <fmt/format.h>

namespace ork::exec {

Result<Slots> allocate_slots(const ExecPlan& plan, const DeviceRef& dev) {
  Slots s;
  for (uint64_t bytes : plan.slot_bytes) {
    if (dev.kmd != nullptr) {
      auto bo = dev.kmd->bo_create(bytes, driver::BoUsage::data);
      if (!bo) return make_error(bo.error().code, fmt::format("allocating a {}-byte weight slot: {}", bytes, bo.error().message));
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
