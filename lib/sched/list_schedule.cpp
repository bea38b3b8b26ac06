#include "lib/sched/list_schedule.h"

#include <algorithm>

#include "lib/sched/list_state.h"

namespace ork::sched {

const char* rule_name(Rule rule) {
  switch (rule) {
    case Rule::barrier: return "barrier";
    case Rule::start: return "start";
    case Rule::forced_start: return "forced start";
    case Rule::dma: return "dma";
    case Rule::wait: return "wait";
    case Rule::fallback: return "fallback";
  }
  return "?";
}

namespace {

using detail::ListState;

struct Pick {
  int op = -1;
  int core = -1;
  Rule rule = Rule::fallback;
  Held limits;
};

// Rule 2: a free core takes the first ready start whose new buffers get addresses.
Pick pick_start(ListState& st, int window) {
  const int core = st.free_core();
  if (core < 0 || st.ready_starts.empty()) return {};
  int seen = 0;
  for (auto it = st.ready_starts.begin(); it != st.ready_starts.end() && seen < window; ++it, ++seen)
    if (st.may_take_core(st.op_at(*it)) && st.try_place(st.op_at(*it))) return {st.op_at(*it), core, Rule::start};
  if (!st.program_running())  // nothing will free memory: start anyway, never deadlock
    return {st.op_at(*st.ready_starts.begin()), core, Rule::forced_start};
  return {};
}

// Rule 3: the DMA engine takes the first ready transfer that fits, if it can begin
// before the first running program ends (else a core would sit idle behind it).
Pick pick_dma(ListState& st, const ListParams& params, std::vector<Held>* held) {
  if (st.ready_dmas.empty()) return {};
  if (st.program_running() && st.dma_begin() > st.earliest_end()) return {};
  // Lookahead: a start is ready and only a core is missing, so a transfer that outlasts
  // the first running program would hold that start (and the core) behind it.
  const bool gap_only = params.dma_lookahead && st.program_running() && !st.ready_starts.empty();
  int seen = 0;
  for (auto it = st.ready_dmas.begin(); it != st.ready_dmas.end() && seen < params.window; ++it, ++seen) {
    const int op = st.op_at(*it);
    if (gap_only && st.dma_begin() + st.op_cycles(op) > st.earliest_end()) continue;
    Held h;
    // A store frees memory, so it fits unless it writes into a buffer with no address.
    if (st.op_kind(op) == OpKind::load && !st.load_within_limits(op, h, held != nullptr)) {
      if (held) held->push_back(h);
      continue;
    }
    if (st.try_place(op)) return {op, -1, Rule::dma, h};
    h.op = op;
    h.reason = "no address";
    if (held) held->push_back(h);
  }
  return {};
}

// Rule 5: make progress: the first ready transfer, else the first ready op of any kind.
Pick pick_fallback(ListState& st) {
  if (!st.ready_dmas.empty()) return {st.op_at(*st.ready_dmas.begin()), -1, Rule::fallback};
  int best = -1;
  for (const auto* queue : {&st.ready_starts, &st.ready_waits, &st.ready_barriers})
    if (!queue->empty() && (best < 0 || *queue->begin() < best)) best = *queue->begin();
  if (best < 0) return {};
  const int op = st.op_at(best);
  int core = -1;
  if (st.op_kind(op) == OpKind::start) {
    core = st.free_core();
    if (core < 0) core = st.core_freeing_first();  // the stream blocks until it frees
  }
  return {op, core, Rule::fallback};
}

Pick decide(ListState& st, const ListParams& params, std::vector<Held>* held) {
  if (!st.ready_barriers.empty()) return {st.op_at(*st.ready_barriers.begin()), -1, Rule::barrier};
  if (Pick p = pick_start(st, params.window); p.op >= 0) return p;
  if (Pick p = pick_dma(st, params, held); p.op >= 0) return p;
  if (int wait = st.first_ready_wait(); wait >= 0) return {wait, -1, Rule::wait};
  return pick_fallback(st);
}

}  // namespace

ListResult list_schedule(const Stream& s, const Graph& g, const Priority& prio,
                         const ListParams& params, std::vector<Decision>* log) {
  ListState st(s, g, prio, params);
  // Without a log, no Decision per step: building and dropping one (it holds a vector) was a
  // third of this loop's own time.
  while (!log && !st.done()) {
    const Pick p = decide(st, params, nullptr);
    if (p.op < 0) break;  // unreachable for a graph whose edges all point forward
    st.emit(p.op, p.core);
  }
  while (log && !st.done()) {
    Decision d;
    d.t_before = st.now();
    const Pick p = decide(st, params, &d.held);
    if (p.op < 0) break;
    st.emit(p.op, p.core);
    d.op = p.op;
    d.rule = p.rule;
    d.limits = p.limits;
    d.t_after = st.now();
    log->push_back(std::move(d));
  }
  return st.finish();
}

}  // namespace ork::sched
