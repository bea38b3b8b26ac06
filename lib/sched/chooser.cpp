#include "lib/sched/chooser.h"

#include <array>
#include <cmath>
#include <numeric>
#include <optional>

#include "lib/sched/beside.h"
#include "lib/sched/placement.h"
#include "lib/sched/slots.h"

namespace ork::sched {

const char* pass_name(Pass pass) {
  switch (pass) {
    case Pass::zero: return "0";
    case Pass::one: return "1";
    case Pass::input: return "input";
  }
  return "?";
}

Status check_options(const Options& o) {
  auto bad = [](const std::string& what) { return Status(make_error(-EINVAL, what)); };
  if (o.cap_percent < 1 || o.cap_percent > 100) return bad("cap percent must be 1..100");
  if (o.prefetch_percent < 0 || o.prefetch_percent > 100) return bad("prefetch percent must be 0..100");
  if (o.urgent_starts < 0) return bad("urgent starts must be >= 0");
  if (o.window < 1) return bad("window must be >= 1");
  if (!(o.swap_bytes_per_cycle >= 0) || !std::isfinite(o.swap_bytes_per_cycle))  // NaN fails >= 0
    return bad("swap bandwidth must be a finite number >= 0 bytes/cycle (0 = the stream's loads)");
  PoolConfig probe = o.pool;
  probe.capacity_bytes = probe.reserve_bytes + probe.alignment_bytes;  // shape check only
  if (Result<Pool> p = Pool::create(probe); !p) return p.error();
  return {};
}

Policy stream_policy(const Stream& s, Policy fallback) {
  if (s.policy == "fifo") return Policy::fifo;
  if (s.policy == "critical-path") return Policy::critical_path;
  if (s.policy == "best") return Policy::best;
  return fallback;
}

namespace {

constexpr int64_t kInfeasible = INT64_MAX;

// Policy::best's rules: Torq's (fifo, prefetch 40 %) first, then critical-path, each with
// and without DMA lookahead, at prefetch 40 % and 100 % (docs/sched.md "Choosing a rule").
constexpr std::array<Heuristic, 8> kBestRules{{{Policy::fifo, false, 40},
                                          {Policy::critical_path, false, 40},
                                          {Policy::fifo, true, 40},
                                          {Policy::critical_path, true, 40},
                                          {Policy::fifo, false, 100},
                                          {Policy::critical_path, false, 100},
                                          {Policy::fifo, true, 100},
                                          {Policy::critical_path, true, 100}}};

struct Context {
  const Stream& s;
  const Graph& g;
  const Options& o;
  PoolConfig memory;  // the real pool: all of memory
  double bpc;
};

// The order priced after allocation: the model when it places with no swap, else with
// the pool's spill/reload DMA inserted. kInfeasible when no allocation exists.
int64_t priced(const Context& c, const std::vector<int>& order, const std::vector<int>& cores,
               Placement* out) {
  Result<Placement> p = place_order(c.s, c.g, order, c.memory, true, c.bpc);
  if (!p) return kInfeasible;
  const int64_t makespan = simulate_order(c.s, c.g, order, cores, p->swaps).makespan;
  if (out) *out = std::move(*p);
  return makespan;
}

void commit(Schedule& s, Pass pass, const Heuristic& rule, int cap, const ListResult& list) {
  s.pass = pass;
  s.policy = rule.policy;
  s.dma_lookahead = rule.dma_lookahead;
  s.prefetch_percent = rule.prefetch_percent;
  s.cap_percent = cap;
  s.order = list.order;
  s.core_of = list.core_of;
  s.peak_bytes = list.peak_bytes;  // the list's live bytes are simulateOrder's (property_test.cpp)
  s.swaps.clear();  // the input order's swaps are not this order's
  s.swap_bytes = 0;
}

// Pass 0's list of one rule at one cap (% of memory).
ListParams list_params(const Context& c, const Heuristic& rule, int cap) {
  return {std::max<int64_t>(1, c.s.memory_bytes * cap / 100), rule.prefetch_percent, c.o.urgent_starts,
          c.o.window, c.o.core_choice, c.o.pool, rule.dma_lookahead};
}

// Section 8 for one priority policy; `s` arrives holding the input order. `first`: the list at
// the first cap when the caller made it already (it does not depend on the bar).
void choose(const Context& c, const Heuristic& rule, const Priority& prio, int64_t bar, Schedule& s,
            std::optional<ListResult> first = std::nullopt) {
  const Policy policy = rule.policy;
  const int caps[3] = {c.o.cap_percent, c.o.cap_percent * 85 / 100, c.o.cap_percent * 70 / 100};
  std::vector<ListResult> lists;
  for (int cap : caps) {
    const ListParams params = list_params(c, rule, cap);
    lists.push_back(first && lists.empty() ? std::move(*first) : list_schedule(c.s, c.g, prio, params));
    const ListResult& l = lists.back();
    Attempt a{Pass::zero, policy, rule.dma_lookahead, rule.prefetch_percent, cap, l.makespan, false, 0, 0};
    if (l.makespan < bar) {
      // At cap = memory the list's own pool is the real one (same configuration, buffers
      // allocated at birth and freed at death in emission order, an undone attempt restores
      // the holes exactly): with no forced buffer it has placed the order, and a second walk
      // would only repeat it. At a lower cap the real pool is larger, so it is walked.
      if (params.cap_bytes == c.memory.capacity_bytes && l.forced == 0 &&
          c.memory.capacity_bytes >= c.memory.reserve_bytes + c.memory.alignment_bytes) {
        a.placed = true;
      } else {
        Result<Placement> p = place_order(c.s, c.g, l.order, c.memory, false, c.bpc);
        a.placed = p && p->placed;
      }
    }
    s.attempts.push_back(a);
    if (a.placed) {
      commit(s, Pass::zero, rule, cap, l);
      s.makespan = l.makespan;
      return;
    }
  }
  int best = -1;
  int64_t best_cost = bar;
  Placement best_placement;
  for (size_t i = 0; i < lists.size(); ++i) {
    Placement p;
    const int64_t cost = priced(c, lists[i].order, lists[i].core_of, &p);
    s.attempts.push_back({Pass::one, policy, rule.dma_lookahead, rule.prefetch_percent, caps[i], lists[i].makespan,
                          false, cost, static_cast<int>(p.swaps.size())});
    if (cost < best_cost) {
      best = static_cast<int>(i);
      best_cost = cost;
      best_placement = std::move(p);
    }
  }
  if (best < 0) return;  // the input order stays
  commit(s, Pass::one, rule, caps[best], lists[best]);
  s.makespan = best_cost;
  s.swaps = std::move(best_placement.swaps);
  s.swap_bytes = best_placement.swap_bytes;
}


// The executor's memory (stream.slot_align_bytes > 0; docs/sched.md "Choosing a schedule"):
// slots fragment, which the list's pool does not see, so the cap steps down by 10 % of memory
// (from cap_percent to 10 %) until the order's slots fit memory; the first that fits is the
// rule's candidate, whatever its makespan (the list decides how far ahead the loads run). A
// slot has no spill, so there is no pass 1: with no cap that fits, the input order stays (the
// executor's input keeps one layer's tensors at a time). `s` arrives holding the input order.
bool choose_slots(const Context& c, const Heuristic& rule, Schedule& s) {
  const Priority prio = make_priority(c.s, c.g, rule.policy);
  PoolConfig pool = c.o.pool;
  pool.alignment_bytes = c.s.slot_align_bytes;
  for (int cap = c.o.cap_percent; cap >= 10; cap -= 10) {
    ListParams params{c.s.memory_bytes * cap / 100, rule.prefetch_percent, c.o.urgent_starts, c.o.window,
                      c.o.core_choice, pool, rule.dma_lookahead};
    const ListResult l = list_schedule(c.s, c.g, prio, params);
    Attempt a{Pass::zero, rule.policy, rule.dma_lookahead, rule.prefetch_percent, cap, l.makespan, false, 0, 0};
    a.placed = place_slots(c.g, l.order).total_bytes <= c.s.memory_bytes && order_respects_graph(c.g, l.order);
    s.attempts.push_back(a);
    if (!a.placed) continue;
    commit(s, Pass::zero, rule, cap, l);
    s.makespan = simulate_order(c.s, c.g, l.order).makespan;
    return true;
  }
  return false;
}

// The slot model's choice over `rules` (fifo first): a committed candidate beats the input
// order whatever their makespans; among candidates a later one is kept only when strictly
// faster.
Schedule schedule_slots(const Context& c, const std::vector<Heuristic>& rules, const Schedule& input) {
  Schedule best = input;
  bool have = false;
  std::vector<Attempt> attempts;
  for (const Heuristic& rule : rules) {
    Schedule cand = input;
    const bool placed = choose_slots(c, rule, cand);
    attempts.insert(attempts.end(), cand.attempts.begin(), cand.attempts.end());
    if (placed && (!have || cand.makespan < best.makespan)) {
      best = std::move(cand);
      have = true;
    }
  }
  best.attempts = std::move(attempts);
  return best;
}
}  // namespace

Result<Schedule> schedule(const Stream& stream, const Options& options) {
  Result<Graph> graph = build_graph(stream);
  if (!graph) return graph.error();
  return schedule(stream, *graph, options);
}

namespace {

// The input order, priced: under the pool, after allocation (swaps included; an input order
// that cannot run at all is an error); under slots, by the model alone (the executor's input
// order is its fallback).
Result<Schedule> input_schedule(const Context& c) {
  Schedule input;
  input.order.resize(c.s.ops.size());
  std::iota(input.order.begin(), input.order.end(), 0);
  const SimResult sim = simulate_order(c.s, c.g, input.order);
  input.core_of = sim.core_of;
  input.makespan_input = sim.makespan;
  input.makespan_input_priced = sim.makespan;
  input.makespan = sim.makespan;
  input.peak_bytes = sim.peak_bytes;
  if (c.s.slot_align_bytes > 0) return input;
  Result<Placement> fits = place_order(c.s, c.g, input.order, c.memory, true, c.bpc);
  if (!fits) return make_error(fits.error().code, "the input order cannot run: " + fits.error().message);
  if (!fits->placed) input.makespan_input_priced = simulate_order(c.s, c.g, input.order, sim.core_of, fits->swaps).makespan;
  input.makespan = input.makespan_input_priced;
  input.swaps = fits->swaps;
  input.swap_bytes = fits->swap_bytes;
  return input;
}

// The rules tried, fifo first.
std::vector<Heuristic> rules_for(const Options& options) {
  std::vector<Heuristic> rules{{Policy::fifo, false, options.prefetch_percent}};
  if (options.policy == Policy::critical_path) rules.push_back({Policy::critical_path, false, options.prefetch_percent});
  if (options.policy == Policy::best) {
    rules.assign(kBestRules.begin(), kBestRules.end());
    for (Heuristic& r : rules)  // the first prefetch cap is the caller's
      if (r.prefetch_percent == 40) r.prefetch_percent = options.prefetch_percent;
  }
  return rules;
}

}  // namespace

Result<Schedule> schedule(const Stream& stream, const Graph& graph, const Options& options) {
  if (Status st = check_options(options); !st) return st.error();
  PoolConfig memory = options.pool;
  memory.capacity_bytes = stream.memory_bytes;
  if (Result<Pool> p = Pool::create(memory); !p) return p.error();
  const double bpc = options.swap_bytes_per_cycle > 0 ? options.swap_bytes_per_cycle : load_bandwidth(stream);
  Context c{stream, graph, options, memory, bpc};
  // The bound reads only the stream and the graph: worked out beside the input's pricing and
  // the rules (0.10-0.17 s of a 1M-op schedule()); joined on every return.
  std::future<Bounds> bounds = run_beside(graph.op_count, [&stream, &graph] { return lower_bound(stream, graph); });
  const std::vector<Heuristic> rules = rules_for(options);
  if (stream.slot_align_bytes > 0) {
    Result<Schedule> input = input_schedule(c);
    if (!input) return input.error();
    Schedule best = schedule_slots(c, rules, *input);
    best.bounds = bounds.get();
    return best;
  }
  // The input order's price (a simulation and a placement) and the first rule's list at the
  // first cap do not depend on each other: the price is made beside that list.
  std::future<Result<Schedule>> priced_input = run_beside(graph.op_count, [&c] { return input_schedule(c); });
  const Priority first_prio = make_priority(stream, graph, rules[0].policy);
  std::optional<ListResult> first =
      list_schedule(stream, graph, first_prio, list_params(c, rules[0], options.cap_percent));
  Result<Schedule> input = priced_input.get();
  if (!input) return input.error();
  // The bar (docs/sched.md "Choosing a schedule"): the prediction when the input places with no
  // swap, else its real cost. A later rule is kept only when strictly faster.
  const int64_t bar = input->makespan_input_priced;
  Schedule best = *input;
  std::vector<Attempt> attempts;
  for (size_t r = 0; r < rules.size(); ++r) {
    Schedule cand = *input;
    if (r == 0) choose(c, rules[r], first_prio, bar, cand, std::move(first));
    else choose(c, rules[r], make_priority(stream, graph, rules[r].policy), bar, cand);
    attempts.insert(attempts.end(), cand.attempts.begin(), cand.attempts.end());
    if (r == 0 || cand.makespan < best.makespan) best = std::move(cand);
  }
  best.attempts = std::move(attempts);
  best.bounds = bounds.get();
  return best;
}

}  // namespace ork::sched
