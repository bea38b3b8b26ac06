// Slots for an order (slots.h).
#include "lib/sched/slots.h"

#include <map>

namespace ork::sched {

SlotPlacement place_slots(const Graph& g, std::span<const int> order) {
  SlotPlacement r;
  r.slot_of_buffer.assign(g.buffer_bytes.size(), -1);
  std::vector<int> remaining(g.release_count);  // releasing ops still to come, per buffer
  std::multimap<int64_t, int> free_slots;      // bytes -> slot; equal sizes in the order freed
  for (int op : order) {
    for (int b : g.born_by[op]) {
      if (r.slot_of_buffer[static_cast<size_t>(b)] >= 0) continue;  // born by an earlier op
      const int64_t bytes = g.buffer_bytes[static_cast<size_t>(b)];
      int slot;
      if (auto it = free_slots.lower_bound(bytes); it != free_slots.end()) {
        slot = it->second;
        free_slots.erase(it);
      } else {
        slot = static_cast<int>(r.slot_bytes.size());
        r.slot_bytes.push_back(bytes);
        r.total_bytes += bytes;
      }
      r.slot_of_buffer[static_cast<size_t>(b)] = slot;
    }
    for (int b : g.released_by[op]) {
      if (--remaining[static_cast<size_t>(b)] > 0) continue;  // read by a later program too
      const int slot = r.slot_of_buffer[static_cast<size_t>(b)];
      if (slot >= 0) free_slots.emplace(r.slot_bytes[static_cast<size_t>(slot)], slot);
    }
  }
  return r;
}

}  // namespace ork::sched
