// The executor's memory (docs/sched.md "Slots"): every buffer in the scheduled memory gets a
// slot, a buffer of host RAM the executor allocates once and reuses. A buffer takes a slot
// when it is born (its first op in an order, the graph's born_by: a load) and gives it back
// when it dies (its last releasing op: the wait of the last program that reads it). A newborn
// takes the smallest free slot at least its size (the oldest of equal ones), else a new slot
// of its size. Unlike the pool (pool.h), nothing is split or merged: a slot keeps its size,
// so slots fragment, and their total can exceed the peak of live bytes.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "lib/sched/graph.h"

namespace ork::sched {

struct SlotPlacement {
  std::vector<int> slot_of_buffer;  // per buffer: its slot, -1 when not in memory or never born
  std::vector<int64_t> slot_bytes;  // per slot: its size
  int64_t total_bytes = 0;          // all slots: what the order needs
};

// The slots `order` (a permutation of the graph's ops) takes.
SlotPlacement place_slots(const Graph& graph, std::span<const int> order);

}  // namespace ork::sched
