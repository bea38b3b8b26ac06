#include "lib/sched/priority.h"

#include <algorithm>
#include <numeric>

namespace ork::sched {

const char* policy_name(Policy policy) {
  return policy == Policy::fifo ? "fifo" : "critical-path";
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
    const std::vector<int64_t> rank = upward_rank(s, g);
    std::stable_sort(p.op_at.begin(), p.op_at.end(),
                     [&](int a, int b) { return rank[a] > rank[b]; });
  }
  p.position.resize(g.op_count);
  for (int pos = 0; pos < g.op_count; ++pos) p.position[p.op_at[pos]] = pos;
  return p;
}

}  // namespace ork::sched
