// Building and scheduling the execution plan (plan.h).
#include "lib/exec/exec_plan.h"

#include <algorithm>
#include <initializer_list>
#include <map>

#include <fmt/format.h>

#include "driver/timing/core_sim.h"
#include "lib/exec/board_plan.h"
#include "lib/sched/bounds.h"
#include "lib/sched/chooser.h"
#include "lib/sched/graph.h"
#include "lib/sched/parse.h"
#include "lib/sched/simulate.h"
#include "lib/sched/slots.h"

namespace ork::exec {

const char* order_name(Order o) {
  switch (o) {
    case Order::scheduled: return "scheduled";
    case Order::fifo: return "fifo";
    case Order::sequential: return "sequential";
  }
  return "?";
}

Result<Order> parse_order(const std::string& name) {
  for (Order o : {Order::scheduled, Order::fifo, Order::sequential})
    if (name == order_name(o)) return o;
  return make_error(-EINVAL, fmt::format("--order {}: expected scheduled, fifo or sequential", name));
}

int64_t modelled_matmul_ns(matmul::DType dtype, int64_t m, int64_t k, int64_t n, int cores, int64_t slice_k) {
  const std::pair<int64_t, int64_t> one[] = {{k, n}};
  const int64_t width[] = {slice_k};
  return modelled_group_ns(dtype, m, one, cores, width);
}

int64_t modelled_group_ns(matmul::DType dtype, int64_t m, std::span<const std::pair<int64_t, int64_t>> shapes,
                          int cores, std::span<const int64_t> slice_k) {
  std::vector<timing::CoreWork> work;
  for (size_t j = 0; j < shapes.size(); ++j) {
    const auto& [k, n] = shapes[j];
    const int64_t width = j < slice_k.size() ? slice_k[j] : 0;
    auto plan = matmul::make_plan(matmul::Shape{m, k, n},
                                  matmul::PlanOptions{.dtype = dtype, .cores = cores, .slice_k = width});
    if (!plan) return 0;
    if (work.size() < static_cast<size_t>(plan->cores_used)) {
      const size_t old = work.size();
      work.resize(static_cast<size_t>(plan->cores_used));
      for (size_t c = old; c < work.size(); ++c) work[c].core = static_cast<int>(c);
    }
    for (const auto& t : plan->tasks) work[static_cast<size_t>(t.core)].tasks.push_back(plan_task_demand(*plan, t));
  }
  const std::vector<double> start(work.size(), 0.0);
  const auto end = timing::simulate_cores(work, start);
  double last = 0;
  for (double e : end) last = std::max(last, e);
  return static_cast<int64_t>(last);
}

namespace {

// A fused group's members share one buffer, so they are pinned all or none: the pinned
// prefix (pinned_tensors) loses a group it ends inside of.
void whole_groups(std::vector<bool>& pinned, const Fusion& f) {
  for (size_t t = 0; t < pinned.size(); ++t) {
    if (!f.fused(t) || pinned[t]) continue;
    for (size_t u = t; u-- > 0 && f.fused(u) && f.first[u] == f.first[t] && f.offset[u] < f.offset[t];) pinned[u] = false;
  }
}

// "<prefix><n>.<n>...<name>", each number followed by a dot: the plan's buffer and op names
// ("a3.0.q_proj", "P3.0.q_proj", "w.0.q_proj"), appended without fmt (two or three a matmul
// were a tenth of `ork_run --plan-only` at 1M ops, docs/sched.md section 5).
std::string dotted(std::string_view prefix, std::initializer_list<int> numbers, std::string_view name) {
  std::string out(prefix);
  out.reserve(prefix.size() + 12 * numbers.size() + name.size());
  for (int v : numbers) {
    sched::append_decimal(out, v);
    out += '.';
  }
  out += name;
  return out;
}

struct Builder {
  const PackedModel& model;
  const PlanOptions& o;
  ExecPlan& p;
  const MatmulIndex names{model.desc};  // sources by name, O(1) each

  int buffer(std::string name, int64_t bytes, bool in_memory) {
    p.stream.buffers.push_back({std::move(name), bytes, in_memory, 0});
    return static_cast<int>(p.stream.buffers.size()) - 1;
  }
  sched::Access whole(int b) const { return {b, 0, p.stream.buffers[static_cast<size_t>(b)].bytes}; }

  // What layer l's "x" of token t is made of: the previous layer's output sources; token
  // t's first input also reads token t-1's output (decode is autoregressive).
  std::vector<int> x_buffers(const std::vector<std::vector<std::vector<int>>>& acts, const std::vector<int>& in, int t,
                             int l) const {
    if (l == 0) {
      std::vector<int> r{in[static_cast<size_t>(t)]};
      if (t > 0) {
        auto prev = x_buffers(acts, in, t - 1, model.desc.layers);
        r.insert(r.end(), prev.begin(), prev.end());
      }
      return r;
    }
    std::vector<int> r;
    for (const auto& s : model.desc.output)
      if (s != "x") r.push_back(acts[static_cast<size_t>(t)][static_cast<size_t>(l - 1)][static_cast<size_t>(names.find(s))]);
    return r.empty() ? x_buffers(acts, in, t, l - 1) : r;
  }

  // The walk's state: the packed file's buffer, each token's input, every activation
  // (token, layer, matmul), each pinned tensor's one buffer and load, and the modelled
  // time of each (K, N, int4 width) shape, computed once.
  int file = -1;
  std::vector<int> in;
  std::vector<std::vector<std::vector<int>>> acts;
  std::vector<int> pinned_buffer, pinned_load;
  std::map<std::tuple<int64_t, int64_t, int64_t>, int64_t> cycles;

  // The stream's ops: a start and a wait per matmul of every token, and a load per token of
  // each tensor, or one for a pinned tensor. Known before anything is built, so the stream's
  // tables are reserved once (grown by copying, they were a tenth of `ork_run --plan-only` at
  // 1M ops, docs/sched.md section 5) and a plan past lib/sched's bound is refused unbuilt.
  int64_t op_count() const {
    int64_t loads = 0;
    for (bool pin : p.pinned) loads += pin ? 1 : o.tokens;
    return loads + 2 * o.tokens * static_cast<int64_t>(p.pinned.size());
  }

  Status build() {
    const ModelDesc& d = model.desc;
    p.stream.memory_bytes = static_cast<int64_t>(slot_limit(o));
    p.stream.cores = 1;  // one matmul at a time on the device; it spreads over the NPU cores itself
    auto fusion = find_fusion(model, o.m, o.cores, std::max<uint64_t>(kPackAlign, o.io_align), o.fuse);
    if (!fusion) return fusion.error();
    p.fusion = std::move(*fusion);
    p.pinned = pinned_tensors(model, o);
    whole_groups(p.pinned, p.fusion);
    const int64_t ops = op_count();
    if (ops > sched::kMaxOps)
      return make_error(-EINVAL, fmt::format("the plan of {} tokens x {} layers x {} matmuls has {} ops; the scheduler "
                                             "takes at most {} (fewer tokens or layers)", o.tokens, d.layers, d.matmuls.size(),
                                             ops, sched::kMaxOps));
    const auto n = static_cast<size_t>(ops);
    p.stream.ops.reserve(n);
    // Two accesses a load; a start its weight, inputs and output, and its wait none: 3 a op up
    // to 4 inputs a matmul (the 7B plan: 2.23). Twice an op regrew this table once at 1M ops, a
    // 46 MB copy into fresh pages; capacity never touched costs no page.
    p.stream.accesses.reserve(3 * n);
    p.op_steps.reserve(n);
    p.load_of.reserve(n);
    // The file, each token's input, and per matmul an activation and at most one weight.
    p.stream.buffers.reserve(1 + static_cast<size_t>(o.tokens) + 2 * static_cast<size_t>(o.tokens) * p.pinned.size());
    // The packed file, outside the scheduled memory: what every load reads.
    file = buffer("file", static_cast<int64_t>(model.file_bytes), false);
    for (int t = 0; t < o.tokens; ++t) {
      std::string name = "in";
      sched::append_decimal(name, t);
      in.push_back(buffer(std::move(name), o.m * d.hidden, false));
    }
    pinned_buffer.assign(p.pinned.size(), -1);
    pinned_load.assign(p.pinned.size(), -1);
    acts.assign(static_cast<size_t>(o.tokens),
                std::vector<std::vector<int>>(static_cast<size_t>(d.layers), std::vector<int>(d.matmuls.size(), -1)));
    for (int t = 0; t < o.tokens; ++t) {
      for (int l = 0; l < d.layers; ++l) {
        const std::vector<int> xb = x_buffers(acts, in, t, l);
        std::vector<int> w(d.matmuls.size(), -1);
        for (size_t j = 0; j < d.matmuls.size(); ++j) {
          if (w[j] < 0)
            for (size_t u : loads_with(l, j)) w[u] = add_weight(t, l, u);
          add_matmul(t, l, j, w[j], xb);
        }
      }
    }
    return Status::success();
  }

  // One op into the stream (its accesses into the stream's one array), its step and the
  // load its weight comes from.
  std::vector<sched::Access> reads;  // a start's, reused from matmul to matmul
  void add_op(sched::Op op, std::span<const sched::Access> r, std::span<const sched::Access> w, Step step,
              size_t tensor) {
    p.op_steps.push_back(step);
    p.stream.add(std::move(op), r, w);
    p.load_of.push_back(pinned_load[tensor]);
  }

  // The weight buffer tensor (l, j) is read into at token t: its own, or its fused group's
  // (fusion.h: made at the group's first member met, of the members' slots summed).
  std::map<std::tuple<int, int, int>, int> group_buffers;  // (token, layer, first member)
  int weight_buffer(int t, int l, size_t j, uint64_t slot) {
    const size_t tensor = static_cast<size_t>(l) * model.desc.matmuls.size() + j;
    const bool pinned = p.pinned[tensor];
    const std::string& name = model.desc.matmuls[j].name;
    std::string label = pinned ? dotted("w.", {l}, name) : dotted("w", {t, l}, name);
    if (!p.fusion.fused(tensor)) return buffer(std::move(label), static_cast<int64_t>(slot), true);
    auto [it, made] = group_buffers.try_emplace({t, l, p.fusion.first[tensor]}, -1);
    if (made) it->second = buffer(std::move(label), static_cast<int64_t>(p.fusion.bytes[tensor]), true);
    return it->second;
  }

  // The tensors whose loads come with matmul j's of layer l: its own, or all of its fused
  // group's (the group's job reads them all, so every load precedes its members' starts).
  std::vector<size_t> loads_with(int l, size_t j) const {
    const size_t per_layer = model.desc.matmuls.size(), tensor = static_cast<size_t>(l) * per_layer + j;
    if (!p.fusion.fused(tensor)) return {j};
    std::vector<size_t> members;
    for (size_t u = 0; u < per_layer; ++u)
      if (p.fusion.first[static_cast<size_t>(l) * per_layer + u] == p.fusion.first[tensor]) members.push_back(u);
    return members;
  }

  // Tensor (l, j)'s weight buffer at token t (a pinned tensor's once) and its load (none for
  // a pinned tensor after token 0).
  int add_weight(int t, int l, size_t j) {
    const ModelDesc& d = model.desc;
    const PackedTensor& pt = model.tensor(l, static_cast<int>(j));
    const uint64_t slot = align_up(pt.bytes, std::max<uint64_t>(kPackAlign, o.io_align));
    const size_t tensor = static_cast<size_t>(l) * d.matmuls.size() + j;
    const bool pinned = p.pinned[tensor];
    const bool loads = !pinned || t == 0;  // a pinned tensor is read by token 0 only
    const int w = !loads ? pinned_buffer[tensor] : weight_buffer(t, l, j, slot);
    if (pinned && t == 0) {
      pinned_buffer[tensor] = w;
      p.pinned_bytes += slot;
    }
    if (loads) {
      pinned_load[tensor] = static_cast<int>(p.stream.ops.size());
      const sched::Access from[] = {{file, static_cast<int64_t>(pt.offset), static_cast<int64_t>(pt.bytes)}};
      // A fused member's range of its group's buffer, disjoint from the other members' (its
      // pieces, fusion.h, lie apart slice by slice; the scheduler asks only which loads overlap).
      const uint64_t at = p.fusion.fused(tensor) ? p.fusion.offset[tensor] : 0;
      const sched::Access to[] = {{w, static_cast<int64_t>(at), static_cast<int64_t>(slot)}};
      const auto ns = std::max<int64_t>(1, static_cast<int64_t>(static_cast<double>(slot) / o.disk_bytes_per_ns));
      add_op({.name = dotted("L", {t, l}, d.matmuls[j].name), .cycles = ns, .kind = sched::OpKind::load}, from, to,
             {Step::load, t, l, int(j), -1, at}, tensor);
    }
    return w;
  }

  // Matmul j of layer l for token t on weight buffer w: its activation, start and wait.
  void add_matmul(int t, int l, size_t j, int w, const std::vector<int>& xb) {
    const ModelDesc& d = model.desc;
    const MatmulDesc& md = d.matmuls[j];
    const PackedTensor& pt = model.tensor(l, static_cast<int>(j));
    const size_t tensor = static_cast<size_t>(l) * d.matmuls.size() + j;
    auto& layer_acts = acts[static_cast<size_t>(t)][static_cast<size_t>(l)];
    const int a = buffer(dotted("a", {t, l}, md.name), o.m * md.n, false);
    layer_acts[j] = a;
    std::string name = dotted("P", {t, l}, md.name);  // the start's and its wait's
    reads.assign(1, whole(w));
    for (const auto& s : md.inputs) {
      if (s == "x") {
        for (int b : xb) reads.push_back(whole(b));
      } else {
        reads.push_back(whole(layer_acts[static_cast<size_t>(names.find(s))]));
      }
    }
    for (const auto& s : md.after) reads.push_back(whole(layer_acts[static_cast<size_t>(names.find(s))]));
    const sched::Access out[] = {whole(a)};
    const auto [at, made] = cycles.try_emplace({md.k, md.n, pt.slice_k}, 0);  // int4: the tensor's own width prices it
    if (made) at->second = std::max<int64_t>(1, modelled_matmul_ns(d.dtype, o.m, md.k, md.n, o.cores, pt.slice_k));
    add_op({.name = name, .cycles = at->second, .kind = sched::OpKind::start}, reads, out,
           {Step::compute, t, l, int(j), -1}, tensor);
    add_op({.name = std::move(name), .kind = sched::OpKind::wait}, {}, {}, {Step::wait, t, l, int(j), -1}, tensor);
    ++p.computes;
  }
};

}  // namespace

void assign_slots(ExecPlan& p, const sched::Graph& graph) {
  const sched::SlotPlacement slots = sched::place_slots(graph, p.order);
  p.slot_bytes.assign(slots.slot_bytes.begin(), slots.slot_bytes.end());
  p.slot_total = static_cast<uint64_t>(slots.total_bytes);
  // A load's slot is its weight buffer's; a program (start and wait) uses the slot of the
  // weight buffer it reads first.
  for (size_t i = 0; i < p.stream.ops.size(); ++i) {
    const sched::Op& o = p.stream.ops[i];
    const sched::Stream& s = p.stream;
    const int b = o.kind == sched::OpKind::load    ? s.writes(o)[0].buffer
                  : o.kind == sched::OpKind::start ? s.reads(o)[0].buffer
                                                   : s.reads(s.ops[static_cast<size_t>(o.partner)])[0].buffer;
    p.op_steps[i].slot = slots.slot_of_buffer[static_cast<size_t>(b)];
  }
}

namespace {

// The options and the budget against the model: the largest layer must fit.
Status check_plan_inputs(const PackedModel& model, const PlanOptions& o) {
  if (o.m < 1 || o.m > 4096) return make_error(-EINVAL, fmt::format("m = {}: must be 1..4096", o.m));
  if (o.tokens < 1 || o.tokens > 100000) return make_error(-EINVAL, fmt::format("tokens = {}: must be 1..100000", o.tokens));
  uint64_t largest = 0;
  int largest_layer = 0;
  for (int l = 0; l < model.desc.layers; ++l) {
    uint64_t s = 0;
    for (size_t j = 0; j < model.desc.matmuls.size(); ++j)
      s += align_up(model.tensor(l, static_cast<int>(j)).bytes, std::max<uint64_t>(kPackAlign, o.io_align));
    if (s > largest) largest = s, largest_layer = l;
  }
  if (o.budget_bytes < largest)
    return make_error(-EINVAL, fmt::format("budget {} bytes is smaller than the largest layer (layer {}, {} bytes)",
                                           o.budget_bytes, largest_layer, largest));
  if (o.window_bytes < largest)
    return make_error(-EINVAL, fmt::format("NPU window {} bytes is smaller than the largest layer (layer {}, {} bytes)",
                                           o.window_bytes, largest_layer, largest));
  return Status::success();
}

// The stream in its input order (load, then compute, layer by layer): the sequential order,
// and the fallback that always fits (one layer's tensors at a time at most).
ExecPlan input_order_plan(ExecPlan p, const sched::Graph& graph) {
  p.order.resize(p.stream.ops.size());
  for (size_t i = 0; i < p.order.size(); ++i) p.order[i] = static_cast<int>(i);
  p.policy = "input";
  assign_slots(p, graph);
  p.predicted_ns = sched::simulate_order(p.stream, graph, p.order).makespan;
  return p;
}

// The order the executor runs: lib/sched's one chooser (chooser.h) on the stream, which
// says the executor's memory (slots aligned to the pack's 4 KiB, in the budget) and
// the rule: the fifo list, or the critical-path one when priced strictly faster. Its memory
// model counts live bytes; slots add fragmentation (a free slot of another size is not
// reused), so the chooser lowers the cap until the slots fit the budget; with no cap that
// fits, the input order.
Result<ExecPlan> chosen_plan(ExecPlan p, const sched::Graph& graph) {
  sched::Options so;
  so.policy = sched::stream_policy(p.stream, sched::Policy::fifo);
  Result<sched::Schedule> s = sched::schedule(p.stream, graph, so);
  if (!s) return s.error();
  p.lower_bound_ns = s->bounds.value;
  if (s->pass == sched::Pass::input) return input_order_plan(std::move(p), graph);
  p.order = std::move(s->order);
  p.cap_bytes = p.stream.memory_bytes * s->cap_percent / 100;
  p.policy = sched::policy_name(s->policy);
  assign_slots(p, graph);
  p.predicted_ns = s->makespan;
  return p;
}

}  // namespace

uint64_t slot_limit(const PlanOptions& o) {
  return std::min(o.budget_bytes, o.window_bytes * static_cast<uint64_t>(std::max(o.windows, 1)));
}

std::vector<bool> pinned_tensors(const PackedModel& model, const PlanOptions& o) {
  const ModelDesc& d = model.desc;
  std::vector<bool> pinned(static_cast<size_t>(d.layers) * d.matmuls.size(), false);
  if (!o.pin || o.tokens < 2) return pinned;  // one token reads every tensor once anyway
  const uint64_t align = std::max<uint64_t>(kPackAlign, o.io_align);
  uint64_t total = 0, largest_layer = 0;
  for (int l = 0; l < d.layers; ++l) {
    uint64_t layer = 0;
    for (size_t j = 0; j < d.matmuls.size(); ++j) layer += align_up(model.tensor(l, static_cast<int>(j)).bytes, align);
    total += layer;
    largest_layer = std::max(largest_layer, layer);
  }
  const uint64_t limit = slot_limit(o);
  if (total <= limit) return std::vector<bool>(pinned.size(), true);
  if (limit <= 2 * largest_layer) return pinned;
  uint64_t room = limit - 2 * largest_layer;
  for (size_t i = 0; i < pinned.size(); ++i) {
    const uint64_t b = align_up(model.tensor(static_cast<int>(i / d.matmuls.size()), static_cast<int>(i % d.matmuls.size())).bytes, align);
    if (b > room) break;  // in layer order: the first tensor that does not fit ends the pinned prefix
    pinned[i] = true;
    room -= b;
  }
  return pinned;
}

Result<ExecPlan> build_plan(const PackedModel& model, const PlanOptions& o) {
  if (Status st = check_plan_inputs(model, o); !st) return st.error();
  ExecPlan p;
  p.order_kind = o.order;
  if (Status st = Builder{model, o, p}.build(); !st) return st.error();
  p.stream.slot_align_bytes = kPackAlign;  // every slot is a multiple of it
  if (o.order != Order::sequential) p.stream.policy = o.order == Order::scheduled ? "critical-path" : "fifo";
  if (auto s = sched::finalize_stream(p.stream); !s) return s.error();
  auto graph = sched::build_graph(p.stream);
  if (!graph) return graph.error();
  if (o.order == Order::sequential) {
    p.lower_bound_ns = sched::lower_bound(p.stream, *graph).value;
    p.cap_bytes = p.stream.memory_bytes;
    return input_order_plan(std::move(p), *graph);
  }
  return chosen_plan(std::move(p), *graph);
}

}  // namespace ork::exec
