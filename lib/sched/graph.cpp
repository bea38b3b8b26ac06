#include "lib/sched/graph.h"

#include <algorithm>
#include <iterator>
#include <utility>

namespace ork::sched {

namespace {

using Edges = std::vector<std::pair<int, int>>;

// Per buffer: which op last wrote each byte segment and who read it since. Segments are
// kept in a small sorted vector per buffer (most buffers are touched whole, so they hold
// one or a few segments); a buffer gets its first segment when it is first touched.
struct Segment {
  int64_t begin = 0;
  int64_t end = 0;
  int writer = -1;
  std::vector<int> readers;
};

class MemoryEdges {
 public:
  MemoryEdges(const Stream& s, Edges& edges) : s_(s), edges_(edges), segs_(s.buffers.size()) {}

  Status add(int op, const Access& a, bool write) {
    auto& segs = segs_[a.buffer];
    if (segs.empty()) segs.push_back(Segment{0, s_.buffers[a.buffer].bytes, -1, {}});
    split(segs, a.offset);
    split(segs, a.offset + a.length);
    auto it = std::lower_bound(segs.begin(), segs.end(), a.offset,
                               [](const Segment& seg, int64_t at) { return seg.begin < at; });
    for (; it != segs.end() && it->begin < a.offset + a.length; ++it) {
      Segment& seg = *it;
      if (seg.writer >= 0 && seg.writer != op)
        if (Status st = edge(seg.writer, op, a.buffer); !st) return st;
      if (!write) {
        if (seg.readers.empty() || seg.readers.back() != op) seg.readers.push_back(op);
        continue;
      }
      for (int reader : seg.readers)
        if (reader != op)
          if (Status st = edge(reader, op, a.buffer); !st) return st;
      seg.writer = op;
      seg.readers.clear();
    }
    return {};
  }

 private:
  static void split(std::vector<Segment>& segs, int64_t at) {
    auto it = std::upper_bound(segs.begin(), segs.end(), at,
                               [](int64_t pos, const Segment& seg) { return pos < seg.begin; });
    if (it == segs.begin()) return;
    --it;
    if (it->begin == at || it->end <= at) return;
    Segment upper = *it;
    upper.begin = at;
    it->end = at;
    segs.insert(it + 1, std::move(upper));
  }

  // A program's accesses stay in force until its wait: edges leave from there.
  Status edge(int from, int to, int buffer) {
    const Op& src = s_.ops[from];
    int source = src.kind == OpKind::start ? src.partner : from;
    if (source > to) {
      const Op& dst = s_.ops[to];
      return make_error(-EINVAL, "line " + std::to_string(dst.line) + ": " + op_label(dst) +
                                     " touches buffer " + s_.buffers[buffer].name +
                                     " while program " + src.name + " (line " +
                                     std::to_string(src.line) + ") still holds it (its wait comes later)");
    }
    edges_.emplace_back(source, to);
    return {};
  }

  const Stream& s_;
  Edges& edges_;
  std::vector<std::vector<Segment>> segs_;
};

void barrier_edges(const Stream& s, Edges& edges) {
  int last = -1;
  for (int i = 0; i < static_cast<int>(s.ops.size()); ++i) {
    if (last >= 0) edges.emplace_back(last, i);
    if (s.ops[i].kind != OpKind::barrier) continue;
    for (int j = last + 1; j < i; ++j) edges.emplace_back(j, i);
    last = i;
  }
}

std::vector<int> memory_buffers(const Stream& s, const Op& op) {
  std::vector<int> ids;
  for (const auto* list : {&op.reads, &op.writes})
    for (const Access& a : *list)
      if (s.buffers[a.buffer].in_memory) ids.push_back(a.buffer);
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return ids;
}

void memory_model(const Stream& s, Graph& g) {
  const int n = g.op_count;
  g.born_by.assign(n, {});
  g.released_by.assign(n, {});
  g.release_count.assign(s.buffers.size(), 0);
  g.program_users.assign(s.buffers.size(), {});
  g.working_set.assign(n, 0);
  std::vector<std::vector<int>> readers(s.buffers.size());  // starts reading each buffer
  for (int i = 0; i < n; ++i) {
    const Op& op = s.ops[i];
    if (op.kind == OpKind::wait) continue;
    g.born_by[i] = memory_buffers(s, op);
    const int releaser = op.kind == OpKind::start ? op.partner : i;
    g.released_by[releaser] = g.born_by[i];
    for (int b : g.born_by[i]) {
      g.working_set[i] += s.buffers[b].bytes;
      ++g.release_count[b];
      if (op.kind == OpKind::start) g.program_users[b].push_back(i);
    }
    if (op.kind == OpKind::start) {
      g.starts.push_back(i);
      for (const Access& a : op.reads) readers[a.buffer].push_back(i);
    }
  }
  g.first_consumer.assign(n, -1);
  for (int i = 0; i < n; ++i) {
    if (s.ops[i].kind != OpKind::load) continue;
    for (const Access& a : s.ops[i].writes) {
      const auto& r = readers[a.buffer];
      auto it = std::upper_bound(r.begin(), r.end(), i);
      if (it != r.end() && (g.first_consumer[i] < 0 || *it < g.first_consumer[i]))
        g.first_consumer[i] = *it;
    }
  }
}

}  // namespace

Result<Graph> build_graph(const Stream& s) {
  Graph g;
  g.op_count = static_cast<int>(s.ops.size());
  Edges edges;
  edges.reserve(s.ops.size() * 3);
  MemoryEdges memory(s, edges);
  for (int i = 0; i < g.op_count; ++i) {
    const Op& op = s.ops[i];
    if (op.kind == OpKind::start) edges.emplace_back(i, op.partner);
    for (const Access& a : op.reads)
      if (Status st = memory.add(i, a, false); !st) return st.error();
    for (const Access& a : op.writes)
      if (Status st = memory.add(i, a, true); !st) return st.error();
  }
  barrier_edges(s, edges);
  std::sort(edges.begin(), edges.end());
  edges.erase(std::unique(edges.begin(), edges.end()), edges.end());
  g.succ_offsets.assign(g.op_count + 1, 0);
  g.pred_counts.assign(g.op_count, 0);
  for (const auto& [from, to] : edges) {
    ++g.succ_offsets[from + 1];
    ++g.pred_counts[to];
  }
  for (int i = 0; i < g.op_count; ++i) g.succ_offsets[i + 1] += g.succ_offsets[i];
  g.succs.reserve(edges.size());
  for (const auto& e : edges) g.succs.push_back(e.second);  // sorted by source already
  memory_model(s, g);
  return g;
}

bool order_respects_graph(const Graph& g, std::span<const int> order) {
  if (static_cast<int>(order.size()) != g.op_count) return false;
  std::vector<int> position(g.op_count, -1);
  for (size_t p = 0; p < order.size(); ++p) {
    const int op = order[p];
    if (op < 0 || op >= g.op_count || position[op] >= 0) return false;
    position[op] = static_cast<int>(p);
  }
  for (int from = 0; from < g.op_count; ++from)
    for (int to : g.successors(from))
      if (position[from] > position[to]) return false;
  return true;
}

}  // namespace ork::sched
