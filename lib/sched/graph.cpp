#include "lib/sched/graph.h"

#include <algorithm>
#include <future>
#include <iterator>
#include <memory>
#include <optional>
#include <utility>

#include "lib/sched/beside.h"

namespace ork::sched {

namespace {

using Edges = std::vector<std::pair<int, int>>;

// Which op last wrote a byte segment of a buffer, and who read it since (a list in the
// reader arena, in reading order).
struct Segment {
  int64_t begin = 0;
  int64_t end = 0;
  int writer = -1;
  int first = -1, last = -1;  // reader arena nodes; -1: none
};

// One access, for grouping the accesses by buffer: the op and the access's place among the
// op's reads then writes (the order the input order checks them in).
// The range is copied (not pointed to): the grouped walk would miss the cache on every op.
// No member initialisers: the grouped array (24 bytes an access, 59 MB at 2.4M accesses) is
// allocated without a zeroing pass, since every slot is written once by the fill.
struct Touch {
  int op;
  uint32_t index : 31;  // < one op's reads + writes, at most kMaxOpAccesses (finalize_stream)
  uint32_t write : 1;
  int64_t offset, length;
};

// Memory edges, one buffer at a time: a buffer's edges depend only on its own accesses in
// input order, so the accesses are grouped by buffer (a counting sort) and each buffer is
// played out in one reused segment vector and reader arena. One map of segments per buffer,
// with a vector of readers per segment, made malloc half of build_graph (docs/sched.md "Speed
// at 1M ops"). A race is reported for the first access in input order that has one, as when
// the ops were walked in order.
class MemoryEdges {
 public:
  MemoryEdges(const Stream& s, const std::vector<OpInfo>& info, Edges& edges) : s_(s), info_(info), edges_(edges) {}

  Status run() {
    const FlatTouches touches = group_touches();
    for (size_t b = 0; b < s_.buffers.size(); ++b) {
      const size_t begin = touches.offsets[b], end = touches.offsets[b + 1];
      if (begin == end) continue;
      segs_.assign(1, Segment{0, s_.buffers[b].bytes, -1, -1, -1});
      readers_.clear();
      for (size_t t = begin; t < end && add(touches.items[t], static_cast<int>(b)); ++t) {
      }
    }
    return race_ ? Status(*race_) : Status();
  }

 private:
  struct FlatTouches {
    std::vector<size_t> offsets;
    std::unique_ptr<Touch[]> items;
  };
  struct Reader {
    int op, next;
  };

  FlatTouches group_touches() const {
    FlatTouches out;
    out.offsets.assign(s_.buffers.size() + 1, 0);
    for (const Op& op : s_.ops) {
      for (const Access& a : s_.reads(op)) ++out.offsets[static_cast<size_t>(a.buffer) + 1];
      for (const Access& a : s_.writes(op)) ++out.offsets[static_cast<size_t>(a.buffer) + 1];
    }
    for (size_t b = 0; b < s_.buffers.size(); ++b) out.offsets[b + 1] += out.offsets[b];
    out.items = std::make_unique_for_overwrite<Touch[]>(out.offsets.back());
    std::vector<size_t> fill(out.offsets.begin(), out.offsets.end() - 1);
    for (int i = 0; i < static_cast<int>(s_.ops.size()); ++i) {
      const Op& op = s_.ops[i];
      uint32_t index = 0;
      for (const Access& a : s_.reads(op)) out.items[fill[a.buffer]++] = {i, index++, 0, a.offset, a.length};
      for (const Access& a : s_.writes(op)) out.items[fill[a.buffer]++] = {i, index++, 1, a.offset, a.length};
    }
    return out;
  }

  // False when the access races: the rest of this buffer does not matter.
  bool add(const Touch& a, int buffer) {
    const Touch& t = a;
    split(a.offset);
    split(a.offset + a.length);
    auto it = std::lower_bound(segs_.begin(), segs_.end(), a.offset,
                               [](const Segment& seg, int64_t at) { return seg.begin < at; });
    for (; it != segs_.end() && it->begin < a.offset + a.length; ++it) {
      Segment& seg = *it;
      if (seg.writer >= 0 && seg.writer != t.op && !edge(seg.writer, t, buffer)) return false;
      if (!t.write) {
        if (seg.last < 0 || readers_[seg.last].op != t.op) append(seg, t.op);
        continue;
      }
      for (int r = seg.first; r >= 0; r = readers_[r].next)
        if (readers_[r].op != t.op && !edge(readers_[r].op, t, buffer)) return false;
      seg.writer = t.op;
      seg.first = seg.last = -1;
    }
    return true;
  }

  void append(Segment& seg, int op) {
    const int node = static_cast<int>(readers_.size());
    readers_.push_back({op, -1});
    if (seg.last >= 0) readers_[seg.last].next = node;
    else seg.first = node;
    seg.last = node;
  }

  void split(int64_t at) {
    auto it = std::upper_bound(segs_.begin(), segs_.end(), at,
                               [](int64_t pos, const Segment& seg) { return pos < seg.begin; });
    if (it == segs_.begin()) return;
    --it;
    if (it->begin == at || it->end <= at) return;
    Segment upper{at, it->end, it->writer, -1, -1};
    for (int r = it->first; r >= 0; r = readers_[r].next) append(upper, readers_[r].op);  // a copy
    it->end = at;
    segs_.insert(it + 1, upper);
  }

  // A program's accesses stay in force until its wait: edges leave from there. False on a
  // race, which is kept when it comes before the one kept so far in input order.
  // The source's kind and partner come from the graph's 16-byte OpInfo: at 1M ops the 64-byte
  // Op (its name inline) cost a cache miss an edge.
  bool edge(int from, const Touch& t, int buffer) {
    const OpInfo& src = info_[from];
    const int source = src.kind == OpKind::start ? src.partner : from;
    if (source <= t.op) {
      edges_.emplace_back(source, t.op);
      return true;
    }
    if (!race_ || std::pair(t.op, static_cast<int>(t.index)) < race_at_) {
      const Op& dst = s_.ops[t.op];
      const Op& holder = s_.ops[from];
      race_ = make_error(-EINVAL, "line " + std::to_string(dst.line) + ": " + op_label(dst) +
                                      " touches buffer " + s_.buffers[buffer].name + " while program " +
                                      holder.name + " (line " + std::to_string(holder.line) +
                                      ") still holds it (its wait comes later)");
      race_at_ = {t.op, static_cast<int>(t.index)};
    }
    return false;
  }

  const Stream& s_;
  const std::vector<OpInfo>& info_;
  Edges& edges_;
  std::vector<Segment> segs_;    // the current buffer's segments, by offset
  std::vector<Reader> readers_;  // the current buffer's reader lists
  std::optional<Error> race_;
  std::pair<int, int> race_at_{0, 0};
};

// The barrier rule's successors of op i, without listing them as pairs (they are most of the
// edges of a stream with barriers): a barrier precedes every op up to and including the next
// barrier, any other op precedes the next barrier. `next` is the first barrier after i (n if
// none), kept by the caller.
void barrier_successors(const Graph& g, int i, int next, std::vector<int>& out) {
  if (g.info[i].kind == OpKind::barrier) {
    for (int j = i + 1; j <= std::min(next, g.op_count - 1); ++j) out.push_back(j);
  } else if (next < g.op_count) {
    out.push_back(next);
  }
}

// The in-memory buffers an op touches, sorted and unique, into `ids` (reused).
void memory_buffers(const Stream& s, const std::vector<uint8_t>& in_memory, const Op& op, std::vector<int>& ids) {
  ids.clear();
  for (const auto list : {s.reads(op), s.writes(op)})
    for (const Access& a : list)
      if (in_memory[a.buffer]) ids.push_back(a.buffer);
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

// A program releases its buffers at its wait; other ops release what they bring to life.
void release_lists(Graph& g) {
  const int n = g.op_count;
  g.released_by.offsets.assign(1, 0);
  g.released_by.offsets.reserve(static_cast<size_t>(n) + 1);
  g.released_by.items.clear();
  g.released_by.items.reserve(g.born_by.items.size());
  for (int i = 0; i < n; ++i) {
    const OpInfo& op = g.info[i];
    const int from = op.kind == OpKind::wait ? op.partner : op.kind == OpKind::start ? -1 : i;
    if (from >= 0) {
      const auto list = g.born_by[from];
      g.released_by.items.insert(g.released_by.items.end(), list.begin(), list.end());
    }
    g.released_by.offsets.push_back(static_cast<int>(g.released_by.items.size()));
  }
}

// The graph's memory fields: what each op brings to life, dirties and releases, each
// program's working set, and each load's first consumer.
void memory_model(const Stream& s, Graph& g) {
  const int n = g.op_count;
  const int buffers = static_cast<int>(s.buffers.size());
  g.release_count.assign(s.buffers.size(), 0);
  g.working_set.assign(n, 0);
  g.born_by.offsets.assign(1, 0);
  g.born_by.offsets.reserve(static_cast<size_t>(n) + 1);
  g.born_by.items.clear();
  // At most an entry per access: reserved, not regrown by copies (pages never written cost none).
  g.born_by.items.reserve(s.accesses.size());
  g.dirtied_by.offsets.reserve(static_cast<size_t>(n) + 1);
  g.dirtied_by.items.reserve(s.accesses.size());
  g.starts.reserve(static_cast<size_t>(n));
  std::vector<std::pair<int, int>> users, readers;  // (buffer, start op), input order
  users.reserve(s.accesses.size());  // at most an access each: no regrowth copies
  readers.reserve(s.accesses.size());
  // Per buffer, a byte and the graph's sizes: the ops' accesses look buffers up in no order,
  // and a 48-byte Buffer (its name inline) missed the cache on each at 1M ops.
  std::vector<uint8_t> in_memory(s.buffers.size());
  for (size_t b = 0; b < s.buffers.size(); ++b) in_memory[b] = s.buffers[b].in_memory;
  std::vector<int> ids;
  for (int i = 0; i < n; ++i) {
    const Op& op = s.ops[i];
    if (op.kind != OpKind::wait) memory_buffers(s, in_memory, op, ids);
    else ids.clear();
    g.born_by.items.insert(g.born_by.items.end(), ids.begin(), ids.end());
    g.born_by.offsets.push_back(static_cast<int>(g.born_by.items.size()));
    for (int b : ids) {
      g.working_set[i] += g.buffer_bytes[b];
      ++g.release_count[b];
      if (op.kind == OpKind::start) users.emplace_back(b, i);
    }
    if (op.kind == OpKind::start) {
      g.starts.push_back(i);
      for (const Access& a : s.reads(op)) readers.emplace_back(a.buffer, i);
    }
    if (op.kind != OpKind::load)
      for (const Access& a : s.writes(op))
        if (in_memory[a.buffer]) g.dirtied_by.items.push_back(a.buffer);
    g.dirtied_by.offsets.push_back(static_cast<int>(g.dirtied_by.items.size()));
  }
  release_lists(g);
  g.program_users = group_by(buffers, users);
  const FlatLists read_by = group_by(buffers, readers);  // per buffer: starts reading it
  g.first_consumer.assign(n, -1);
  for (int i = 0; i < n; ++i) {
    if (g.info[i].kind != OpKind::load) continue;
    for (const Access& a : s.writes(s.ops[i])) {
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
  g.info.resize(s.ops.size());
  for (size_t i = 0; i < s.ops.size(); ++i) g.info[i] = {s.ops[i].cycles, s.ops[i].partner, s.ops[i].kind};
  g.buffer_bytes.resize(s.buffers.size());
  for (size_t b = 0; b < s.buffers.size(); ++b) g.buffer_bytes[b] = s.buffers[b].bytes;
  // The memory model reads only the stream and the ops' kinds and writes fields of its own:
  // from kBesideOps ops it is made beside the edges (joined on every return).
  std::future<void> model = run_beside(g.op_count, [&s, &g] { memory_model(s, g); });
  // Reserved past what streams make (a program edge per start, about one memory edge per
  // access): growing it copied 15 MB at 1M ops, and pages not written are never faulted in.
  Edges edges;
  edges.reserve(s.ops.size() + 2 * s.accesses.size());
  for (int i = 0; i < g.op_count; ++i)
    if (g.info[i].kind == OpKind::start) edges.emplace_back(i, g.info[i].partner);
  if (Status st = MemoryEdges(s, g.info, edges).run(); !st) return st.error();
  // Successor lists by a counting sort on the source, the barrier rule's added, then each
  // short list sorted and made unique: linear in the edges, where one sort of all pairs was
  // n log n.
  const FlatLists out = group_by(g.op_count, edges);
  edges = Edges();  // its memory is reused by what follows
  g.succ_offsets.assign(g.op_count + 1, 0);
  g.succs.clear();
  g.succs.reserve(out.items.size() + 2 * s.ops.size());
  std::vector<int> list;
  for (int i = 0, next = 0; i < g.op_count; ++i) {
    while (next < g.op_count && (next <= i || g.info[next].kind != OpKind::barrier)) ++next;
    const auto memory = out[i];
    list.assign(memory.begin(), memory.end());
    barrier_successors(g, i, next, list);
    std::sort(list.begin(), list.end());
    for (size_t k = 0; k < list.size(); ++k)
      if (k == 0 || list[k] != list[k - 1]) g.succs.push_back(list[k]);
    g.succ_offsets[i + 1] = static_cast<int>(g.succs.size());
  }
  g.pred_counts.assign(g.op_count, 0);
  for (int to : g.succs) ++g.pred_counts[to];
  model.get();
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
