// The one choice of a schedule (docs/sched.md "Choosing a schedule"; Torq's
// runOnOperation): a pure function from a stream and options to a schedule, run by
// ork_sched and by the executor's plan (lib/exec/exec_plan.cpp) alike, so that `ork_sched` on a
// plan ork_run wrote makes exactly the order and makespan the executor runs.
//
// Under the pool (the default) it prices the input order, runs listSchedule at three caps
// (cap_percent, x0.85, x0.70 of memory), and commits
//   pass 0: the first candidate that is faster than the input and that the pool places
//           with no swap;
//   pass 1: else the fastest candidate priced after allocation, swaps included, if it beats
//           the input order priced the same way;
//   input:  else the input order. Never slower than the input order by its own measure.
// Under slots (stream.slot_align_bytes > 0: the executor's memory, slots.h) the cap steps
// down from cap_percent by 10 % of memory to 10 % and the first list whose slots fit memory
// is committed (pass 0); none: the input order.
// With Policy::critical_path the FIFO choice is made too and the critical-path one is kept
// only when it is strictly faster, so the new policy never loses to FIFO. Policy::best makes
// the choice for each of kBestRules (fifo first) and keeps the fastest: the scheduler is a
// pure function, so trying rules costs time only, and never loses to fifo or critical-path.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "driver/common/result.h"
#include "lib/sched/bounds.h"
#include "lib/sched/graph.h"
#include "lib/sched/list_schedule.h"
#include "lib/sched/pool.h"
#include "lib/sched/priority.h"
#include "lib/sched/simulate.h"
#include "lib/sched/stream.h"

namespace ork::sched {

// Torq's flags (docs/sched.md section 8) and ours. Memory and cores come from the stream.
struct Options {
  Policy policy = Policy::fifo;                    // --policy
  CoreChoice core_choice = CoreChoice::first_free; // --core-choice
  int cap_percent = 100;      // --torq-list-cap-percent: first cap, % of memory
  int prefetch_percent = 40;  // --torq-list-prefetch-percent: prefetchCap, % of cap
  int urgent_starts = 4;      // --torq-list-urgent-starts
  int window = 32;            // candidates per queue and step
  PoolConfig pool;            // alignment, 8 KiB split, reserve; capacity = stream memory
  double swap_bytes_per_cycle = 0;  // spill/reload bandwidth; 0: the stream's own loads'
};

enum class Pass { zero, one, input };
const char* pass_name(Pass pass);  // "0", "1", "input"

// One heuristic the list scheduler is run with: the queue order, DMA lookahead, prefetch cap.
struct Heuristic {
  Policy policy = Policy::fifo;
  bool dma_lookahead = false;
  int prefetch_percent = 40;
};

struct Attempt {
  Pass pass = Pass::zero;
  Policy policy = Policy::fifo;
  bool dma_lookahead = false;
  int prefetch_percent = 0;
  int cap_percent = 0;
  int64_t predicted = 0;  // listSchedule's own prediction
  bool placed = false;    // pass 0: the pool placed it with no swap
  int64_t priced = 0;     // pass 1: makespan with the pool's swaps (0 in pass 0)
  int swaps = 0;
};

struct Schedule {
  std::vector<int> order;    // op indices, the committed order
  std::vector<int> core_of;  // per op: the core of a start, else -1
  Pass pass = Pass::input;
  Policy policy = Policy::fifo;  // whose candidate was committed
  bool dma_lookahead = false;    // ... with DMA lookahead
  int prefetch_percent = 0;      // ... at this prefetch cap
  int cap_percent = 0;           // the cap it was made at (0 for the input order)
  int64_t makespan_input = 0;         // simulateOrder of the input order (no swaps)
  int64_t makespan_input_priced = 0;  // the input order after allocation (swaps included)
  int64_t makespan = 0;               // the committed order after allocation
  int64_t peak_bytes = 0;             // live bytes of the committed order (model)
  std::vector<SwapDma> swaps;         // the pool's spill/reload DMA for the committed order
  int64_t swap_bytes = 0;
  Bounds bounds;
  std::vector<Attempt> attempts;
};

Status check_options(const Options& options);
// The policy a stream names ("fifo", "critical-path", "best"), if any; else `fallback`.
Policy stream_policy(const Stream& stream, Policy fallback);
Result<Schedule> schedule(const Stream& stream, const Options& options);
// The same on the stream's graph (build_graph), when the caller has it.
Result<Schedule> schedule(const Stream& stream, const Graph& graph, const Options& options);

}  // namespace ork::sched
