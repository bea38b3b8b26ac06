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

// The in-memory buffers an op touches, sorted and unique, into `ids` (reused).
void memory_buffers(const Stream& s, const Op& op, std::vector<int>& ids) {
  ids.clear();
  for (const auto* list : {&op.reads, &op.writes})
    for (const Access& a : *list)
      if (s.buffers[a.buffer].in_memory) ids.push_back(a.buffer);
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
}

// Groups (key, value) pairs by key into flat lists, values in the pairs' order (a counting
// sort: linear, one pass to count and one to fill).
FlatLists group_by(int keys, const std::vector<std::pair<int, int>>& pairs) {
  FlatLists out;
  out.offsets.assign(static_cast<size_t>(keys) + 1, 0);
  for (const auto& [key, value] : pairs) ++out.offsets[static_cast<size_t>(key) + 1];
  for (int k = 0; k < keys; ++k) out.offsets[k + 1] += out.offsets[k];
  out.items.resize(pairs.size());
  std::vector<int> fill(out.offsets.begin(), out.offsets.end() - 1);
  for (const auto& [key, value] : pairs) out.items[static_cast<size_t>(fill[key]++)] = value;
  return out;
}

void memory_model(const Stream& s, Graph& g) {
  const int n = g.op_count;
  const int buffers = static_cast<int>(s.buffers.size());
  g.release_count.assign(s.buffers.size(), 0);
  g.working_set.assign(n, 0);
  g.born_by.offsets.assign(1, 0);
  g.born_by.offsets.reserve(static_cast<size_t>(n) + 1);
  g.born_by.items.clear();
  std::vector<std::pair<int, int>> users, readers;  // (buffer, start op), input order
  std::vector<int> ids;
  for (int i = 0; i < n; ++i) {
    const Op& op = s.ops[i];
    if (op.kind != OpKind::wait) memory_buffers(s, op, ids);
    else ids.clear();
    g.born_by.items.insert(g.born_by.items.end(), ids.begin(), ids.end());
    g.born_by.offsets.push_back(static_cast<int>(g.born_by.items.size()));
    for (int b : ids) {
      g.working_set[i] += s.buffers[b].bytes;
      ++g.release_count[b];
      if (op.kind == OpKind::start) users.emplace_back(b, i);
    }
    if (op.kind == OpKind::start) {
      g.starts.push_back(i);
      for (const Access& a : op.reads) readers.emplace_back(a.buffer, i);
    }
  }
  // A program releases its buffers at its wait; other ops release what they bring to life.
  g.released_by.offsets.assign(1, 0);
  g.released_by.offsets.reserve(static_cast<size_t>(n) + 1);
  g.released_by.items.clear();
  g.released_by.items.reserve(g.born_by.items.size());
  for (int i = 0; i < n; ++i) {
    const Op& op = s.ops[i];
    const int from = op.kind == OpKind::wait ? op.partner : op.kind == OpKind::start ? -1 : i;
    if (from >= 0) {
      const auto list = g.born_by[from];
      g.released_by.items.insert(g.released_by.items.end(), list.begin(), list.end());
    }
    g.released_by.offsets.push_back(static_cast<int>(g.released_by.items.size()));
  }
  g.program_users = group_by(buffers, users);
  const FlatLists read_by = group_by(buffers, readers);  // per buffer: starts reading it
  g.first_consumer.assign(n, -1);
  for (int i = 0; i < n; ++i) {
    if (s.ops[i].kind != OpKind::load) continue;
    for (const Access& a : s.ops[i].writes) {
      const auto r = read_by[a.buffer];
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
  // Successor lists by a counting sort on the source, then each short list sorted and
  // made unique: linear in the edges, where one sort of all pairs was n log n.
  FlatLists out = group_by(g.op_count, edges);
  g.succ_offsets.assign(g.op_count + 1, 0);
  g.succs.clear();
  g.succs.reserve(out.items.size());
  for (int i = 0; i < g.op_count; ++i) {
    auto* begin = out.items.data() + out.offsets[i];
    auto* end = out.items.data() + out.offsets[i + 1];
    std::sort(begin, end);
    for (auto* it = begin; it != end; ++it)
      if (it == begin || *it != *(it - 1)) g.succs.push_back(*it);
    g.succ_offsets[i + 1] = static_cast<int>(g.succs.size());
  }
  g.pred_counts.assign(g.op_count, 0);
  for (int to : g.succs) ++g.pred_counts[to];
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
