#include "lib/sched/priority.h"

#include <algorithm>
#include <cstdint>
#include <numeric>

namespace ork::sched {

const char* policy_name(Policy policy) {
  switch (policy) {
    case Policy::fifo: return "fifo";
    case Policy::critical_path: return "critical-path";
    case Policy::best: return "best";
  }
  return "?";
}

std::vector<int64_t> upward_rank(const Stream& s, const Graph& g) {
  std::vector<int64_t> rank(g.op_count, 0);
  // Every edge points forward in the input order, so a reverse sweep sees successors first.
  for (int i = g.op_count - 1; i >= 0; --i) {
    int64_t tail = 0;
    for (int succ : g.successors(i)) tail = std::max(tail, rank[succ]);
    const int64_t weight = s.ops[i].kind == OpKind::wait ? 0 : s.ops[i].cycles;
    rank[i] = weight + tail;
  }
  return rank;
}

Priority make_priority(const Stream& s, const Graph& g, Policy policy) {
  Priority p;
  p.op_at.resize(g.op_count);
  std::iota(p.op_at.begin(), p.op_at.end(), 0);
  if (policy == Policy::critical_path) {
    std::vector<int64_t> rank = upward_rank(s, g);
    // A load is served in its consumer's place. Its own rank adds its transfer to the
    // consumer's, so in a memory-bound stream a far-ahead load would outrank the programs
    // before it, fill the window and crowd out the loads that are needed next.
    std::vector<int64_t> key = rank;
    for (int i = 0; i < g.op_count; ++i)
      if (s.ops[i].kind == OpKind::load && g.first_consumer[i] >= 0) key[i] = rank[g.first_consumer[i]];
    // A store ends a chain, so its rank is small, but it frees the memory it reads: served
    // by rank it would wait behind everything and its buffers would fill memory. It takes
    // the place of its lowest-priority predecessor instead (right after its data is ready).
    std::vector<int64_t> store_key(g.op_count, INT64_MAX);
    for (int from = 0; from < g.op_count; ++from)
      for (int to : g.successors(from))
        if (s.ops[to].kind == OpKind::store) store_key[to] = std::min(store_key[to], key[from]);
    for (int i = 0; i < g.op_count; ++i)
      if (store_key[i] != INT64_MAX) key[i] = std::max(key[i], store_key[i]);
    std::stable_sort(p.op_at.begin(), p.op_at.end(), [&](int a, int b) { return key[a] > key[b]; });
  }
  p.position.resize(g.op_count);
  for (int pos = 0; pos < g.op_count; ++pos) p.position[p.op_at[pos]] = pos;
  return p;
}

}  // namespace ork::sched
