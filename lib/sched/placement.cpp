#include "lib/sched/placement.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace ork::sched {

double load_bandwidth(const Stream& s) {
  double bytes = 0, cycles = 0;
  for (const Op& op : s.ops) {
    if (op.kind != OpKind::load) continue;
    for (const Access& a : s.writes(op))
      if (s.buffers[a.buffer].in_memory) bytes += static_cast<double>(a.length);
    cycles += static_cast<double>(op.cycles);
  }
  return bytes > 0 && cycles > 0 ? bytes / cycles : 1.0;
}

namespace {

class Placer {
 public:
  Placer(const Stream& s, const Graph& g, std::span<const int> order, Pool pool, double bpc)
      : s_(s), g_(g), order_(order), pool_(std::move(pool)), bpc_(bpc),
        buf_(s.buffers.size()) {
    result_.offset.assign(s.buffers.size(), -1);
    for (size_t b = 0; b < buf_.size(); ++b) buf_[b].left = g.release_count[b];
  }

  Result<Placement> run(bool allow_swaps) {
    for (size_t p = 0; p < order_.size(); ++p) {
      pos_ = static_cast<int>(p);
      const int op = order_[p];
      for (int b : g_.born_by[op]) ++buf_[b].pins;
      for (int b : g_.born_by[op]) {
        if (buf_[b].offset >= 0) continue;
        int64_t at = pool_.try_allocate(g_.buffer_bytes[b]);
        if (at < 0 && !allow_swaps) return std::move(result_);  // placed stays false
        if (at < 0) {
          Result<int64_t> evicting = allocate_evicting(b);
          if (!evicting) return evicting.error();
          at = *evicting;
        }
        place(b, at);
      }
      after_op(op);
    }
    result_.placed = result_.swaps.empty();
    return std::move(result_);
  }

 private:
  void place(int b, int64_t at) {
    buf_[b].offset = at;
    buf_[b].resident_at = static_cast<int>(resident_.size());
    resident_.push_back(b);
    if (result_.offset[b] < 0) result_.offset[b] = at;
    if (buf_[b].evicted) swap(false, b);
    buf_[b].evicted = 0;
    result_.peak_used_bytes = std::max(result_.peak_used_bytes, pool_.used_bytes());
  }

  // Pins last until the op's own release: a program holds its buffers until its wait.
  void after_op(int op) {
    const OpInfo& o = g_.info[op];
    for (int b : g_.dirtied_by[op]) buf_[b].dirty = 1;
    if (o.kind != OpKind::start)
      for (int b : g_.born_by[op]) --buf_[b].pins;
    if (o.kind == OpKind::wait)
      for (int b : g_.born_by[o.partner]) --buf_[b].pins;
    for (int b : g_.released_by[op]) {
      if (--buf_[b].left != 0) continue;
      if (buf_[b].offset >= 0) drop(b);
      buf_[b].evicted = 0;
    }
  }

  void drop(int b) {
    (void)pool_.release(buf_[b].offset);
    buf_[b].offset = -1;
    const int at = buf_[b].resident_at;  // swap-remove from the flat list
    resident_[static_cast<size_t>(at)] = resident_.back();
    buf_[resident_.back()].resident_at = at;
    resident_.pop_back();
    buf_[b].resident_at = -1;
  }

  void swap(bool spill, int b) {
    const int64_t bytes = g_.buffer_bytes[b];
    // Clamped like a stream's own ops (kMaxOpCycles), so that sums of swaps stay in int64
    // even for a tiny bandwidth (a stream whose loads move 1 byte in 2^40 cycles).
    const double want = std::ceil(static_cast<double>(bytes) / bpc_);
    const int64_t cycles = want < static_cast<double>(kMaxOpCycles) ? static_cast<int64_t>(want) : kMaxOpCycles;
    result_.swaps.push_back({pos_, spill, b, bytes, cycles});
    result_.swap_bytes += bytes;
  }

  // Positions of the order that touch each buffer, as flat lists (a counting sort); built at
  // the first eviction, since an order that places without one never asks.
  void index_uses() {
    const size_t buffers = s_.buffers.size();
    uses_.offsets.assign(buffers + 1, 0);
    for (int op : order_)
      for (int b : g_.born_by[op]) ++uses_.offsets[static_cast<size_t>(b) + 1];
    for (size_t b = 0; b < buffers; ++b) uses_.offsets[b + 1] += uses_.offsets[b];
    uses_.items.resize(static_cast<size_t>(uses_.offsets.back()));
    std::vector<int> fill(uses_.offsets.begin(), uses_.offsets.end() - 1);
    for (size_t p = 0; p < order_.size(); ++p)
      for (int b : g_.born_by[order_[p]]) uses_.items[static_cast<size_t>(fill[b]++)] = static_cast<int>(p);
  }

  int next_use(int b) const {
    const auto u = uses_[b];
    auto it = std::upper_bound(u.begin(), u.end(), pos_);
    return it == u.end() ? static_cast<int>(order_.size()) : *it;
  }

  // Furthest next use, then the larger, then the lower id (the resident list is unordered).
  int victim() const {
    int best = -1, best_use = 0;
    for (int b : resident_) {
      if (buf_[b].pins > 0) continue;
      const int use = next_use(b);
      if (best < 0 || use > best_use ||
          (use == best_use && (g_.buffer_bytes[b] > g_.buffer_bytes[best] ||
                               (g_.buffer_bytes[b] == g_.buffer_bytes[best] && b < best)))) {
        best = b;
        best_use = use;
      }
    }
    return best;
  }

  Result<int64_t> allocate_evicting(int b) {
    if (!uses_indexed_) index_uses();
    uses_indexed_ = true;
    for (;;) {
      const int v = victim();
      if (v < 0)
        return make_error(-ENOMEM, "op " + op_label(s_.ops[order_[pos_]]) + " needs buffer " +
                                       s_.buffers[b].name + " (" + std::to_string(s_.buffers[b].bytes) +
                                       " bytes) but memory holds only what it and the running "
                                       "programs pin (" + std::to_string(pool_.used_bytes()) + " of " +
                                       std::to_string(pool_.usable_bytes()) + " bytes)");
      if (buf_[v].dirty) swap(true, v);
      buf_[v].dirty = 0;
      drop(v);
      buf_[v].evicted = 1;
      if (const int64_t at = pool_.try_allocate(g_.buffer_bytes[b]); at >= 0) return at;
    }
  }

  const Stream& s_;
  const Graph& g_;
  std::span<const int> order_;
  Pool pool_;
  double bpc_;
  int pos_ = 0;
  Placement result_;
  // Per buffer, in one record: the walk touches all of these for each buffer of an op, so
  // one cache line instead of six arrays' (docs/sched.md "Speed at 1M ops").
  struct BufferState {
    int64_t offset = -1;   // -1: not resident
    int pins = 0;          // the current op and running programs holding it
    int left = 0;          // releases still to come
    int resident_at = -1;  // index in resident_, or -1
    char evicted = 0, dirty = 0;
  };
  std::vector<BufferState> buf_;
  FlatLists uses_;             // per buffer: positions in the order that touch it
  bool uses_indexed_ = false;
  std::vector<int> resident_;  // buffers with an offset, unordered
};

}  // namespace

Result<Placement> place_order(const Stream& s, const Graph& g, std::span<const int> order,
                              const PoolConfig& config, bool allow_swaps, double bytes_per_cycle) {
  Result<Pool> pool = Pool::create(config);
  if (!pool) return pool.error();
  if (!(bytes_per_cycle > 0)) return make_error(-EINVAL, "swap bandwidth must be > 0 bytes/cycle");
  Placer placer(s, g, order, std::move(pool).value(), bytes_per_cycle);
  return placer.run(allow_swaps);
}

}  // namespace ork::sched
