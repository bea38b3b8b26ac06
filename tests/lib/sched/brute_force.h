// Exact optimum of small streams by enumeration, for the oracle tests.
#pragma once

#include <cstdint>

#include "lib/sched/graph.h"
#include "lib/sched/stream.h"

namespace ork::sched::test {

// The smallest simulateOrder makespan over every order that keeps the graph's edges,
// with each start on the first free core. That core choice is optimal for a given
// order: a free core starts the program at once and the cores are identical, and with
// none free the one freeing first is the earliest possible. Memory is not modelled here:
// use streams whose memory never binds. Enumerates all orders: keep to <= 9 ops.
int64_t brute_force_makespan(const Stream& stream, const Graph& graph);

// Johnson's rule optimum of the two-machine flow shop (load a_i, then compute b_i).
int64_t johnson_makespan(const std::vector<int64_t>& a, const std::vector<int64_t>& b);

}  // namespace ork::sched::test
