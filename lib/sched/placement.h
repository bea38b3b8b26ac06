// Runs an order through the real allocator (pool.h) at full memory, as Torq's runOnOperation
// does on a clone: buffers are allocated at birth and freed at death, in emission order.
// Without swaps the answer is "places" or "does not". With swaps, a buffer that finds no
// hole evicts others (never one the current op or a running program holds): the victim is
// the buffer used again furthest in the future (Belady's MIN: L. A. Belady,
// IBM Systems Journal 5(2), 1966), the larger one on a tie. A victim a program or store wrote is
// spilled (store DMA) first; one that only holds loaded data is dropped (its source still holds
// it). Touching an evicted buffer reloads it (load DMA).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "driver/common/result.h"
#include "lib/sched/graph.h"
#include "lib/sched/pool.h"
#include "lib/sched/simulate.h"

namespace ork::sched {

struct Placement {
  bool placed = false;           // every buffer placed, no swap
  std::vector<SwapDma> swaps;    // spill/reload DMA, by position in the order
  int64_t swap_bytes = 0;
  std::vector<int64_t> offset;   // per buffer: offset at its birth (-1: xram or never placed)
  int64_t peak_used_bytes = 0;   // most pool bytes in use at once (aligned sizes)
};

// pool.capacity_bytes is the memory. Without swaps, a buffer that finds no hole ends the
// walk with placed = false. With swaps, an error means some op's own buffers (with those
// of the programs running next to it) cannot be placed even after evicting all others.
Result<Placement> place_order(const Stream& stream, const Graph& graph, std::span<const int> order,
                              const PoolConfig& pool, bool allow_swaps, double bytes_per_cycle);

// Bytes per cycle of the stream's own loads into memory; 1 when there are none.
double load_bandwidth(const Stream& stream);

}  // namespace ork::sched
