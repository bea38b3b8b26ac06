#include "lib/sched/simulate.h"

#include <algorithm>

namespace ork::sched {

namespace {

// Births and deaths of buffers along an order (graph.h's rules).
class Liveness {
 public:
  Liveness(const Stream& s, const Graph& g)
      : g_(g), born_(s.buffers.size(), 0), left_(g.release_count) {}

  int64_t birth(int op) {
    for (int b : g_.born_by[op])
      if (!born_[b]) {
        born_[b] = 1;
        live_ += g_.buffer_bytes[b];
      }
    peak_ = std::max(peak_, live_);
    return live_;
  }
  int64_t death(int op) {
    for (int b : g_.released_by[op])
      if (--left_[b] == 0) live_ -= g_.buffer_bytes[b];
    return live_;
  }
  int64_t peak() const { return peak_; }

 private:
  const Graph& g_;
  std::vector<char> born_;
  std::vector<int> left_;
  int64_t live_ = 0;
  int64_t peak_ = 0;
};

struct Machine {
  int64_t t = 0;
  int64_t dma_free = 0;
  std::vector<int64_t> core_end;
  std::vector<int64_t> program_end;  // per op (start index)

  int first_free_core() const {
    int best = 0;
    for (int c = 0; c < static_cast<int>(core_end.size()); ++c) {
      if (core_end[c] <= t) return c;
      if (core_end[c] < core_end[best]) best = c;
    }
    return best;
  }
  TimedOp dma(int64_t cycles) {
    const int64_t begin = std::max(t, dma_free);
    t = begin + cycles;
    dma_free = t;
    return {-1, -1, begin, t, -1};
  }
};

}  // namespace

SimResult simulate_order(const Stream& s, const Graph& g, std::span<const int> order,
                         std::span<const int> cores, std::span<const SwapDma> swaps,
                         bool want_timeline) {
  SimResult r;
  r.core_of.assign(s.ops.size(), -1);
  Machine m{0, 0, std::vector<int64_t>(s.cores, 0), std::vector<int64_t>(s.ops.size(), 0)};
  Liveness live(s, g);
  size_t next_swap = 0;
  auto note_live = [&](int64_t time, int64_t bytes) {
    if (!want_timeline) return;
    if (!r.live.empty() && r.live.back().time == time) r.live.back().bytes = bytes;
    else r.live.push_back({time, bytes});
  };
  for (size_t pos = 0; pos < order.size(); ++pos) {
    for (; next_swap < swaps.size() && swaps[next_swap].position <= static_cast<int>(pos); ++next_swap) {
      TimedOp timed = m.dma(swaps[next_swap].cycles);
      timed.swap = static_cast<int>(next_swap);
      if (want_timeline) r.timeline.push_back(timed);
    }
    const int i = order[pos];
    const OpInfo& op = g.info[i];
    const int64_t issue = std::max(m.t, op.kind == OpKind::load || op.kind == OpKind::store ? m.dma_free : m.t);
    note_live(issue, live.birth(i));
    TimedOp timed{i, -1, m.t, m.t, -1};
    switch (op.kind) {
      case OpKind::load:
      case OpKind::store:
        timed = m.dma(op.cycles);
        timed.op = i;
        break;
      case OpKind::start: {
        const int c = cores.empty() ? m.first_free_core() : cores[i];
        const int64_t begin = std::max(m.t, m.core_end[c]);
        m.core_end[c] = m.program_end[i] = begin + op.cycles;
        m.t = begin + 1;
        r.core_of[i] = c;
        timed = {i, -1, begin, begin + op.cycles, c};
        break;
      }
      case OpKind::wait:
        m.t = std::max(m.t, m.program_end[op.partner]);
        timed.end = m.t;
        break;
      case OpKind::barrier:
        m.t += op.cycles;
        timed.end = m.t;
        break;
    }
    note_live(m.t, live.death(i));  // the stream has moved past the op
    if (want_timeline) r.timeline.push_back(timed);
  }
  for (; next_swap < swaps.size(); ++next_swap) m.dma(swaps[next_swap].cycles);
  r.makespan = std::max(m.t, m.dma_free);
  r.peak_bytes = live.peak();
  return r;
}

int64_t peak_live_bytes(const Stream& s, const Graph& g, std::span<const int> order) {
  Liveness live(s, g);
  for (int i : order) {
    live.birth(i);
    live.death(i);
  }
  return live.peak();
}

}  // namespace ork::sched
