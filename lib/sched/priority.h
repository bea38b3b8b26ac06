// The order ready queues are kept in. FIFO (Torq's): input order, oldest first.
// Critical path (beyond Torq's pass): HEFT's upward rank with DMA and compute durations as
// node weights and no communication cost (Topcuoglu, Hariri, Wu, IEEE TPDS 13(3), 2002),
//   rank(v) = w(v) + max over successors s of rank(s),
// w = cycles of a load, store, barrier or program (on its start), 0 for a wait; ties go
// to the input order. A load takes its first consumer's rank (it is served just before
// that program), so prefetches follow the programs' order; a store takes its lowest
// predecessor's place, so it frees its buffers soon. The rank is static, so the
// priority is a fixed permutation.
#pragma once

#include <cstdint>
#include <vector>

#include "lib/sched/graph.h"
#include "lib/sched/stream.h"

namespace ork::sched {

// best (ours, schedule() only): the fastest of a few rules, fifo and critical-path each with
// and without DMA lookahead and at two prefetch caps (chooser.h); as a queue order it is fifo.
enum class Policy { fifo, critical_path, best };

struct Priority {
  std::vector<int> position;  // per op: 0 = served first
  std::vector<int> op_at;     // inverse: op_at[position[i]] == i
};

std::vector<int64_t> upward_rank(const Stream& stream, const Graph& graph);
Priority make_priority(const Stream& stream, const Graph& graph, Policy policy);
const char* policy_name(Policy policy);

}  // namespace ork::sched
