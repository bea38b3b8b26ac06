// Step 2 of Torq's PrefetchInputsPass (docs/sched.md): listSchedule. A list scheduler that plays
// the hardware model out on a simulated clock and, at each step, emits one ready op by the decision
// order of Torq's listSchedule:
//   1. a ready barrier;
//   2. a free core: the first ready start (window of 32) whose new buffers all get an
//      address under cap; none, and no program running: force the first ready start;
//   3. the DMA engine: the first ready load/store (window of 32) that fits: a store always
//      fits; a load for one of the next `urgent_starts` programs may fill cap, any other
//      load only prefetch_percent of cap; every load leaves the reserve (the largest
//      program that starts before its consumer); and only if the transfer can start
//      before the first running program ends;
//   4. the wait of the program that ends first;
//   5. otherwise the first ready load/store, or the first ready op.
// "First" is the priority order (priority.h): the input order for FIFO.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "lib/sched/graph.h"
#include "lib/sched/pool.h"
#include "lib/sched/priority.h"
#include "lib/sched/stream.h"

namespace ork::sched {

enum class CoreChoice { first_free, least_loaded };

struct ListParams {
  int64_t cap_bytes = 0;       // the address space the model places buffers in
  int prefetch_percent = 40;   // prefetchCap, % of cap, for loads of far programs
  int urgent_starts = 4;       // how many upcoming programs count as near
  int window = 32;             // candidates looked at per queue and step
  CoreChoice core_choice = CoreChoice::first_free;
  PoolConfig pool;             // alignment and small/large split; capacity = cap_bytes
  // Lookahead on DMA issue (ours): a transfer blocks the stream, so while a ready start
  // waits for a core, rule 3 takes only a transfer that ends by the time the first running
  // program ends (it fills the gap instead of making the freed core wait behind it).
  bool dma_lookahead = false;
};

enum class Rule { barrier, start, forced_start, dma, wait, fallback };
const char* rule_name(Rule rule);

// A load looked at and held back in a step, and why.
struct Held {
  int op = -1;
  const char* reason = "";  // "prefetch cap", "cap", "no address"
  bool urgent = false;
  int64_t live = 0, bytes = 0, reserve = 0, limit = 0;
};

struct Decision {
  int op = -1;
  Rule rule = Rule::fallback;
  int64_t t_before = 0, t_after = 0;
  Held limits;             // rule 3 on a load: the check it passed (urgent, live, ...)
  std::vector<Held> held;  // loads looked at and held back in this step
};

struct ListResult {
  std::vector<int> order;
  std::vector<int> core_of;  // per op: core of a start, else -1
  int64_t makespan = 0;      // predicted, no swaps
  int64_t peak_bytes = 0;
  int forced = 0;            // buffers the model could not place under cap
};

ListResult list_schedule(const Stream& stream, const Graph& graph, const Priority& priority,
                         const ListParams& params, std::vector<Decision>* log = nullptr);

}  // namespace ork::sched
