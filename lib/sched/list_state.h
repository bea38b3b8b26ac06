// The state listSchedule plays out (Torq's listSchedule state, docs/sched.md): the clock, the DMA
// engine, the cores, the ready queues in priority order, and the memory model (live bytes
// plus an address space that mirrors the pool). Internal to list_schedule.cpp.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "lib/sched/list_schedule.h"
#include "lib/sched/ready_set.h"

namespace ork::sched::detail {

// Max over a range of programs (in priority order) of the bytes each still has to bring
// to life when it starts; 0 once started. The reserve query of rule 3 in O(log n).
class MaxTree {
 public:
  explicit MaxTree(int size);
  void set(int index, int64_t value);
  int64_t max_below(int end) const;  // max over [0, end)
  int64_t max_all() const { return tree_[1]; }

 private:
  int size_;
  std::vector<int64_t> tree_;
};

class ListState {
 public:
  ListState(const Stream& s, const Graph& g, const Priority& p, const ListParams& params);

  // Queues hold priority positions; op_at() maps back.
  int op_at(int position) const { return prio_.op_at[position]; }
  ReadySet ready_starts, ready_dmas, ready_waits, ready_barriers;

  bool done() const { return order_.size() == s_.ops.size(); }
  int free_core() const;            // per core_choice; -1 when none is free
  int core_freeing_first() const;   // for a start forced onto a busy core
  bool program_running() const { return !running_.empty(); }
  int64_t earliest_end() const { return running_.begin()->first; }
  int first_ready_wait() const;     // the running program ending first whose wait is ready
  int64_t dma_begin() const { return std::max(t_, dma_free_); }
  int64_t now() const { return t_; }
  OpKind op_kind(int op) const { return g_.info[op].kind; }
  int64_t op_cycles(int op) const { return g_.info[op].cycles; }

  // Rule 2's barrier check (docs/sched.md "Programs across a barrier"): false for a start
  // whose wait comes after a barrier that still needs other work, when it would take the
  // last free core.
  bool may_take_core(int start) const;

  // Places the op's new buffers under cap; on success they stay placed for emit().
  bool try_place(int op);
  // Rule 3's limit check for a load (does not place). Fills `held`; the reserve only
  // when it decides, or always with `explain` (the decision log).
  bool load_within_limits(int op, Held& held, bool explain) const;

  void emit(int op, int core = -1);
  ListResult finish();

 private:
  void birth(int op);
  void death(int op);
  void make_ready(int op);
  bool urgent(int load) const;
  void index_spans();
  int free_cores() const;
  void note_started(int rank);
  int64_t new_bytes(int op) const;

  const Stream& s_;
  const Graph& g_;
  const Priority& prio_;
  ListParams params_;
  Pool space_;
  int64_t t_ = 0, dma_free_ = 0, live_ = 0, peak_ = 0;
  int forced_ = 0;
  std::vector<int> indegree_;
  // Per buffer, in one record: a birth or death touches all of these for each buffer of
  // the op, so one cache line instead of four arrays' (docs/sched.md "Speed at 1M ops").
  struct BufferState {
    int64_t offset = -2;  // pool offset, kUnplaced (-1), or kNone (-2)
    int64_t bytes = 0;
    int left = 0;         // releases still to come
    char born = 0;
  };
  std::vector<BufferState> buf_;
  std::vector<int> core_open_;   // unwaited programs per core
  std::vector<int64_t> core_end_, core_busy_;
  // (end, start op), sorted: a handful of programs run at once, so a vector, not a set
  // that allocates a node per start.
  std::vector<std::pair<int64_t, int>> running_;
  std::vector<int64_t> program_end_;           // per program rank: when it ends
  ReadySet unstarted_;                         // priority positions of starts
  // Position of the urgent_starts-th unstarted program (-1: none), or kStale after a start.
  static constexpr int kStale = -2;
  mutable int urgent_last_ = kStale;
  std::vector<int> program_rank_;              // per start op: index among starts by priority
  std::vector<int64_t> pending_;               // per program rank: bytes still unborn
  MaxTree reserve_tree_;
  // Programs and barriers: per program rank, the first barrier after its start (-1: none)
  // and whether its wait comes after that barrier; per op, for barriers, how many programs
  // that end before it are still to start. Empty when the stream has no barrier.
  struct Span {
    int barrier = -1;
    bool across = false;
  };
  std::vector<Span> span_of_rank_;
  std::vector<int> starts_before_;
  std::vector<int> order_, core_of_;
  std::vector<int> placed_scratch_;            // try_place's buffers, for its undo
};

}  // namespace ork::sched::detail
