#include "lib/sched/list_state.h"

#include <algorithm>

namespace ork::sched::detail {

namespace {
constexpr int64_t kNone = -2;      // not placed (yet)
constexpr int64_t kUnplaced = -1;  // alive, but the model found no address (forced)

Pool make_space(const ListParams& params) {
  PoolConfig config = params.pool;
  config.capacity_bytes = std::max(params.cap_bytes, config.reserve_bytes + config.alignment_bytes);
  Result<Pool> pool = Pool::create(config);
  return std::move(pool).value();  // list_schedule() checked the configuration
}
}  // namespace

MaxTree::MaxTree(int size) : size_(std::max(size, 1)), tree_(2 * size_, 0) {}

void MaxTree::set(int index, int64_t value) {
  int i = index + size_;
  tree_[i] = value;
  for (i /= 2; i >= 1; i /= 2) {
    const int64_t up = std::max(tree_[2 * i], tree_[2 * i + 1]);
    if (tree_[i] == up) return;  // the ancestors only see this maximum: unchanged
    tree_[i] = up;
  }
}

int64_t MaxTree::max_below(int end) const {
  int64_t best = 0;
  for (int lo = size_, hi = end + size_; lo < hi; lo /= 2, hi /= 2) {
    if (lo & 1) best = std::max(best, tree_[lo++]);
    if (hi & 1) best = std::max(best, tree_[--hi]);
  }
  return best;
}

ListState::ListState(const Stream& s, const Graph& g, const Priority& p, const ListParams& params)
    : ready_starts(g.op_count), ready_dmas(g.op_count), ready_waits(g.op_count), ready_barriers(g.op_count),
      s_(s), g_(g), prio_(p), params_(params), space_(make_space(params)),
      indegree_(g.pred_counts), buf_(s.buffers.size()), core_open_(s.cores, 0), core_end_(s.cores, 0),
      core_busy_(s.cores, 0), program_end_(g.starts.size(), 0), unstarted_(g.op_count), program_rank_(s.ops.size(), -1),
      pending_(g.starts.size(), 0), reserve_tree_(static_cast<int>(g.starts.size())),
      core_of_(s.ops.size(), -1) {
  order_.reserve(s.ops.size());
  for (size_t b = 0; b < buf_.size(); ++b) {
    buf_[b].offset = kNone;
    buf_[b].bytes = g.buffer_bytes[b];
    buf_[b].left = g.release_count[b];
  }
  int rank = 0;
  for (int pos = 0; pos < g.op_count; ++pos) {
    const int op = p.op_at[pos];
    if (g.info[op].kind != OpKind::start) continue;
    unstarted_.insert(pos);
    program_rank_[op] = rank;
    pending_[rank] = g.working_set[op];
    reserve_tree_.set(rank, pending_[rank]);
    ++rank;
  }
  index_spans();
  for (int op = 0; op < g.op_count; ++op)
    if (indegree_[op] == 0) make_ready(op);
}

// A program whose wait comes after a barrier holds its core until that barrier, which needs
// every op since the previous barrier. Found with one backward sweep: the first barrier after
// each start, and whether the start's wait comes after it.
void ListState::index_spans() {
  int next_barrier = -1;
  for (int op = g_.op_count - 1; op >= 0; --op) {
    const OpInfo& o = g_.info[op];
    if (o.kind == OpKind::barrier) {
      next_barrier = op;
      if (span_of_rank_.empty()) {
        span_of_rank_.assign(g_.starts.size(), Span{});
        starts_before_.assign(static_cast<size_t>(g_.op_count), 0);
      }
      continue;
    }
    if (o.kind != OpKind::start || next_barrier < 0) continue;
    const bool across = next_barrier < o.partner;
    span_of_rank_[static_cast<size_t>(program_rank_[op])] = {next_barrier, across};
    if (!across) ++starts_before_[static_cast<size_t>(next_barrier)];
  }
}

void ListState::note_started(int rank) {
  const Span& span = span_of_rank_[static_cast<size_t>(rank)];
  if (span.barrier >= 0 && !span.across) --starts_before_[static_cast<size_t>(span.barrier)];
}

int ListState::free_cores() const {
  int free = 0;
  for (int c = 0; c < s_.cores; ++c) free += core_open_[c] == 0;
  return free;
}

// Two programs across barrier B on both cores, and a program that ends before B still to
// start: it finds no core until one of their waits, which come after B, so it is forced onto a
// busy core while the fallback fills memory with every transfer before B (a 1M-op random DAG,
// docs/sched.md). So a program across B may take the last free core only once every program
// that ends before B has started.
bool ListState::may_take_core(int start) const {
  if (span_of_rank_.empty()) return true;
  const Span& span = span_of_rank_[static_cast<size_t>(program_rank_[start])];
  if (!span.across) return true;
  return starts_before_[static_cast<size_t>(span.barrier)] == 0 || free_cores() > 1;
}

void ListState::make_ready(int op) {
  const int pos = prio_.position[op];
  switch (g_.info[op].kind) {
    case OpKind::start: ready_starts.insert(pos); break;
    case OpKind::load:
    case OpKind::store: ready_dmas.insert(pos); break;
    case OpKind::wait: ready_waits.insert(pos); break;
    case OpKind::barrier: ready_barriers.insert(pos); break;
  }
}

int ListState::free_core() const {
  int best = -1;
  for (int c = 0; c < s_.cores; ++c) {
    if (core_open_[c] != 0) continue;
    if (params_.core_choice == CoreChoice::first_free) return c;
    if (best < 0 || core_busy_[c] < core_busy_[best]) best = c;  // least loaded so far
  }
  return best;
}

int ListState::core_freeing_first() const {
  return static_cast<int>(std::min_element(core_end_.begin(), core_end_.end()) - core_end_.begin());
}

int ListState::first_ready_wait() const {
  for (const auto& [end, start] : running_)
    if (indegree_[g_.info[start].partner] == 0) return g_.info[start].partner;
  return -1;
}

int64_t ListState::new_bytes(int op) const {
  int64_t bytes = 0;
  for (int b : g_.born_by[op])
    if (!buf_[b].born) bytes += buf_[b].bytes;
  return bytes;
}

bool ListState::try_place(int op) {
  std::vector<int>& placed = placed_scratch_;  // reused: no allocation per attempt
  placed.clear();
  for (int b : g_.born_by[op]) {
    if (buf_[b].born || buf_[b].offset != kNone) continue;
    const int64_t at = space_.try_allocate(buf_[b].bytes);  // refusals are common here
    if (at < 0) {
      for (auto it = placed.rbegin(); it != placed.rend(); ++it) {
        (void)space_.release(buf_[*it].offset);  // reverse order restores the holes exactly
        buf_[*it].offset = kNone;
      }
      return false;
    }
    buf_[b].offset = at;
    placed.push_back(b);
  }
  return true;
}

// The next `urgent_starts` programs in priority order may use all of cap: the consumer is one
// of them when it is still to start and its position is at most the urgent_starts-th unstarted
// one's. That position changes only when a program starts, so it is found again only then (rule
// 3 asks for up to 32 loads a step, and walking the unstarted set each time was a tenth of a
// 1M-op 7B stream's schedule).
bool ListState::urgent(int load) const {
  const int consumer = g_.first_consumer[load];
  if (consumer < 0) return true;  // nothing to prefetch for: the data is needed by a DMA op
  if (urgent_last_ == kStale) {
    urgent_last_ = -1;
    int seen = 0;
    for (auto it = unstarted_.begin(); it != unstarted_.end() && seen < params_.urgent_starts; ++it, ++seen)
      urgent_last_ = *it;
  }
  const int pos = prio_.position[consumer];
  return pos <= urgent_last_ && unstarted_.contains(pos);
}

bool ListState::load_within_limits(int op, Held& held, bool explain) const {
  const int64_t cap = params_.cap_bytes;
  held.op = op;
  held.urgent = urgent(op);
  held.limit = held.urgent ? cap : cap * params_.prefetch_percent / 100;
  held.live = live_;
  held.bytes = new_bytes(op);
  held.reason = held.urgent ? "cap" : "prefetch cap";
  // The reserve query is the costly part: skip it when the load alone is over the limit.
  if (held.live + held.bytes > held.limit && !explain) return false;
  // Nor when even the largest reserve of all fits (the value is only shown when explaining).
  if (!explain && held.live + held.bytes + reserve_tree_.max_all() <= held.limit) return true;
  const int consumer = g_.first_consumer[op];
  // Room for the largest program that starts before the consumer: the loaded buffer
  // stays alive across those programs, so they must still fit next to it.
  held.reserve = consumer < 0 ? 0 : reserve_tree_.max_below(program_rank_[consumer]);
  return held.live + held.bytes + held.reserve <= held.limit;
}

void ListState::birth(int op) {
  for (int b : g_.born_by[op]) {
    if (buf_[b].born) continue;
    if (buf_[b].offset == kNone) {  // not placed by try_place: a forced emission
      const int64_t at = space_.try_allocate(buf_[b].bytes);
      buf_[b].offset = at >= 0 ? at : kUnplaced;
      if (at < 0) ++forced_;
    }
    buf_[b].born = 1;
    live_ += buf_[b].bytes;
    for (int user : g_.program_users[b]) {  // programs still to start need fewer bytes now
      if (!unstarted_.contains(prio_.position[user])) continue;
      const int rank = program_rank_[user];
      pending_[rank] -= buf_[b].bytes;
      reserve_tree_.set(rank, pending_[rank]);
    }
  }
  peak_ = std::max(peak_, live_);
}

void ListState::death(int op) {
  for (int b : g_.released_by[op]) {
    if (--buf_[b].left != 0) continue;
    if (buf_[b].offset >= 0) (void)space_.release(buf_[b].offset);
    buf_[b].offset = kNone;
    live_ -= buf_[b].bytes;
  }
}

void ListState::emit(int op, int core) {
  const OpInfo& o = g_.info[op];
  const int pos = prio_.position[op];
  birth(op);
  switch (o.kind) {
    case OpKind::load:
    case OpKind::store:
      ready_dmas.erase(pos);
      t_ = dma_begin() + o.cycles;
      dma_free_ = t_;
      break;
    case OpKind::start: {
      ready_starts.erase(pos);
      const int64_t begin = std::max(t_, core_end_[core]);
      const int64_t end = begin + o.cycles;
      program_end_[program_rank_[op]] = core_end_[core] = end;
      core_busy_[core] += o.cycles;
      ++core_open_[core];
      core_of_[op] = core;
      running_.insert(std::lower_bound(running_.begin(), running_.end(), std::pair(end, op)), {end, op});
      unstarted_.erase(pos);
      urgent_last_ = kStale;
      reserve_tree_.set(program_rank_[op], 0);
      if (!span_of_rank_.empty()) note_started(program_rank_[op]);
      t_ = begin + 1;
      break;
    }
    case OpKind::wait: {
      ready_waits.erase(pos);
      const int64_t end = program_end_[program_rank_[o.partner]];
      t_ = std::max(t_, end);
      --core_open_[core_of_[o.partner]];
      running_.erase(std::lower_bound(running_.begin(), running_.end(), std::pair(end, o.partner)));
      break;
    }
    case OpKind::barrier:
      ready_barriers.erase(pos);
      t_ += o.cycles;
      break;
  }
  death(op);
  order_.push_back(op);
  for (int succ : g_.successors(op))
    if (--indegree_[succ] == 0) make_ready(succ);
}

ListResult ListState::finish() {
  return {std::move(order_), std::move(core_of_), std::max(t_, dma_free_), peak_, forced_};
}

}  // namespace ork::sched::detail
