// Text and JSON reports, and the panels the pictures are drawn from.
#include <fmt/format.h>

#include <numeric>

#include "lib/sched/parse.h"
#include "lib/sched/placement.h"
#include "tools/ork_sched/render.h"

namespace ork::sched {

std::vector<Panel> make_panels(const Stream& s, const Graph& g, const Schedule& sched,
                               const Options& options) {
  std::vector<int> input(s.ops.size());
  std::iota(input.begin(), input.end(), 0);
  PoolConfig memory = options.pool;
  memory.capacity_bytes = s.memory_bytes;
  const double bpc = options.swap_bytes_per_cycle > 0 ? options.swap_bytes_per_cycle : load_bandwidth(s);
  std::vector<SwapDma> input_swaps;
  if (s.slot_align_bytes > 0) {  // slots have no spill: the input order is drawn as it is
  } else if (Result<Placement> p = place_order(s, g, input, memory, true, bpc); p) {
    input_swaps = p->swaps;
  }
  std::vector<Panel> panels;
  panels.push_back({"input order", simulate_order(s, g, input, {}, input_swaps, true), input_swaps});
  panels.push_back({"new order", simulate_order(s, g, sched.order, sched.core_of, sched.swaps, true), sched.swaps});
  return panels;
}

std::string timed_label(const Stream& s, const Panel& panel, const TimedOp& t) {
  if (t.op >= 0) return op_label(s.ops[t.op]);
  const SwapDma& swap = panel.swaps[t.swap];
  return std::string(swap.spill ? "spill " : "reload ") + s.buffers[swap.buffer].name;
}

nlohmann::json render_json(const Stream& s, const Schedule& r) {
  nlohmann::json j;
  j["order"] = nlohmann::json::array();
  for (int op : r.order) j["order"].push_back(op_label(s.ops[op]));
  j["core"] = nlohmann::json::object();
  for (int op : r.order)
    if (r.core_of[op] >= 0) j["core"][s.ops[op].name] = r.core_of[op];
  j["makespan_input"] = r.makespan_input;
  j["makespan_input_priced"] = r.makespan_input_priced;
  j["makespan"] = r.makespan;
  j["peak_bytes"] = r.peak_bytes;
  j["memory"] = s.memory_bytes;
  j["cores"] = s.cores;
  j["lower_bound"] = r.bounds.value;
  j["bounds"] = {{"critical_path", r.bounds.critical_path}, {"stream_load", r.bounds.stream_load},
                 {"core_load", r.bounds.core_load},         {"pipeline", r.bounds.pipeline},
                 {"memory", r.bounds.memory}};
  if (r.pass == Pass::input) j["pass"] = "input";
  else j["pass"] = r.pass == Pass::zero ? 0 : 1;
  j["cap_percent"] = r.cap_percent;
  j["policy"] = policy_name(r.policy);
  j["dma_lookahead"] = r.dma_lookahead;
  j["prefetch_percent"] = r.prefetch_percent;
  j["swaps"] = r.swaps.size();
  j["swap_bytes"] = r.swap_bytes;
  j["attempts"] = nlohmann::json::array();
  for (const Attempt& a : r.attempts)
    j["attempts"].push_back({{"pass", pass_name(a.pass)}, {"policy", policy_name(a.policy)},
                             {"dma_lookahead", a.dma_lookahead}, {"prefetch_percent", a.prefetch_percent},
                             {"cap_percent", a.cap_percent}, {"predicted", a.predicted},
                             {"placed", a.placed}, {"priced", a.priced}, {"swaps", a.swaps}});
  return j;
}

namespace {

// "     7  load L1  -> core 0" a line, appended straight to the report: a fmt::format and an
// op_label string per line were a tenth of the ork_sched process at 1M ops (docs/sched.md
// section 5, "The parse in one pass").
void append_order_lines(std::string& out, const Stream& s, const Schedule& r) {
  size_t bytes = out.size();
  for (int op : r.order) bytes += s.ops[op].name.size() + 32;
  out.reserve(bytes);  // one allocation: the lines are tens of MB at 1M ops
  for (size_t i = 0; i < r.order.size(); ++i) {
    const Op& op = s.ops[r.order[i]];
    append_decimal(out, static_cast<int64_t>(i + 1), 6);
    out += "  ";
    append_op_label(out, op);
    if (const int core = r.core_of[r.order[i]]; core >= 0) {
      out += "  -> core ";
      append_decimal(out, core);
    }
    out += '\n';
  }
}

}  // namespace

std::string render_text(const Stream& s, const Schedule& r) {
  auto percent = [](int64_t now, int64_t before) {
    return before > 0 ? 100.0 * static_cast<double>(now - before) / static_cast<double>(before) : 0.0;
  };
  std::string out;
  out += fmt::format("input order  {:>10} cycles", r.makespan_input);
  if (r.makespan_input_priced != r.makespan_input)
    out += fmt::format(" ({} after allocation, with swaps)", r.makespan_input_priced);
  out += fmt::format("\nnew order    {:>10} cycles ({:+.1f} %), pass {}", r.makespan,
                     percent(r.makespan, r.makespan_input_priced), pass_name(r.pass));
  if (r.pass != Pass::input)
    out += fmt::format(" at cap {} %, policy {}{}", r.cap_percent, policy_name(r.policy),
                       r.dma_lookahead ? " with DMA lookahead" : "");
  if (!r.swaps.empty()) out += fmt::format(", {} swaps ({} bytes)", r.swaps.size(), r.swap_bytes);
  out += fmt::format("\nlower bound  {:>10} cycles (critical path {}, stream {}, cores {}, pipeline {}, memory {}); "
                     "makespan / bound {:.3f}\n",
                     r.bounds.value, r.bounds.critical_path, r.bounds.stream_load, r.bounds.core_load,
                     r.bounds.pipeline, r.bounds.memory,
                     r.bounds.value > 0 ? static_cast<double>(r.makespan) / static_cast<double>(r.bounds.value) : 1.0);
  out += fmt::format("peak live    {:>10} bytes of {}\norder:\n", r.peak_bytes, s.memory_bytes);
  append_order_lines(out, s, r);
  return out;
}

}  // namespace ork::sched
