// Lower bounds on the makespan of any order of a stream (docs/sched.md "Lower bounds"),
// adapted to the stream model of simulate.h, where the in-order stream itself is a resource:
// every load/store blocks it for its transfer, every start for 1 cycle.
#pragma once

#include <cstdint>

#include "lib/sched/graph.h"
#include "lib/sched/stream.h"

namespace ork::sched {

struct Bounds {
  int64_t critical_path = 0;  // longest chain of minimal delays (load -> start -> wait -> ...)
  int64_t stream_load = 0;    // sum of transfers + 1 per start + barrier cycles
  int64_t core_load = 0;      // ceil(sum of program cycles / cores)
  int64_t pipeline = 0;       // head-body-tail (Jackson/Carlier) on the stream and on the cores
  int64_t memory = 0;         // programs whose pinned sets pairwise exceed memory: serial
  int64_t value = 0;          // the largest of the above
};

Bounds lower_bound(const Stream& stream, const Graph& graph);

}  // namespace ork::sched
