// simulateOrder of Torq's PrefetchInputsPass (docs/sched.md section 2): prices any order of a
// stream with the hardware model's rules, one op at a time on the in-order stream:
//   load / store   t = max(t, dma_free) + cycles; dma_free = t   (one DMA engine, blocking)
//   start          the program runs [t, t + cycles) on its core; t += 1 (asynchronous)
//   wait           t = max(t, end of that program)
//   barrier        t += cycles (a host call that blocks the stream)
// makespan = max(t, dma_free) after the last op.
// Cores: a start given a core begins when that core's previous program has ended
// (begin = max(t, core_end), the stream blocks until then); without one it takes the
// first free core (lowest index whose program has ended), or the one that frees first.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "lib/sched/graph.h"
#include "lib/sched/stream.h"

namespace ork::sched {

// A spill (store) or reload (load) the allocator inserts before order[position].
struct SwapDma {
  int position = 0;
  bool spill = false;
  int buffer = -1;
  int64_t bytes = 0;
  int64_t cycles = 0;
};

struct TimedOp {
  int op = -1;         // index into stream.ops; -1 for a swap DMA
  int swap = -1;       // index into the swaps, or -1
  int64_t begin = 0;   // DMA transfer / program start / wait start
  int64_t end = 0;     // transfer end / program end / wait end
  int core = -1;       // starts only
};

struct LivePoint {
  int64_t time = 0;
  int64_t bytes = 0;  // live bytes in the scheduled memory from `time` on
};

struct SimResult {
  int64_t makespan = 0;
  int64_t peak_bytes = 0;          // most live buffer bytes at once (model, no swaps)
  std::vector<int> core_of;        // per op: the core of a start, else -1
  std::vector<TimedOp> timeline;   // in emission order (only when asked)
  std::vector<LivePoint> live;     // step function (only when asked)
};

// `cores`: per op index (size ops or empty for first-free). Order must be a permutation.
SimResult simulate_order(const Stream& stream, const Graph& graph, std::span<const int> order,
                         std::span<const int> cores = {}, std::span<const SwapDma> swaps = {},
                         bool want_timeline = false);

// Live-byte peak of an order under the birth/death rules, no timing.
int64_t peak_live_bytes(const Stream& stream, const Graph& graph, std::span<const int> order);

}  // namespace ork::sched
