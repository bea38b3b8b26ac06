// The board plan of one group (board_plan.h).
#include "lib/exec/board_plan.h"

#include <algorithm>
#include <numeric>
#include <string>

#include <fmt/format.h>

#include "driver/timing/core_sim.h"
#include "lib/matmul/plan_stacked.h"
#include "lib/sched/chooser.h"

namespace ork::exec {

timing::TaskDemand plan_task_demand(const matmul::Plan& plan, const matmul::Task& t) {
  const double eb = static_cast<double>(matmul::element_bits(plan.dtype)) / 8.0;
  return timing::make_demand({.mc = t.mc, .kt = t.kt, .cols = t.nt, .weight_bytes = static_cast<double>(t.kt * t.nt) * eb,
                           .row_bytes = static_cast<double>(t.kt) * eb,
                           .out_elem_bytes = static_cast<double>(plan.out_bytes()),
                           .macs_per_cycle = plan.dtype == matmul::DType::fp16 ? timing::kFp16MacsPerCycle
                                                                               : timing::kInt8MacsPerCycle});
}

namespace {

// The group's tasks as a stream of independent programs (a start and its wait each, cycles =
// the task alone on its core), longest first, on `cores` slices; the chooser's order and
// core_of place them. Returns per core its tasks in the order they start.
std::vector<std::vector<PlacedTask>> place(const std::vector<matmul::Plan>& plans, int cores,
                                           const timing::TimingParams& params) {
  std::vector<PlacedTask> all;
  std::vector<int64_t> cycles;
  for (size_t j = 0; j < plans.size(); ++j)
    for (size_t i = 0; i < plans[j].tasks.size(); ++i) {
      all.push_back({static_cast<int>(j), static_cast<int>(i)});
      cycles.push_back(std::max<int64_t>(1, static_cast<int64_t>(timing::task_alone_ns(plan_task_demand(plans[j], plans[j].tasks[i]), params))));
    }
  std::vector<size_t> by_length(all.size());
  std::iota(by_length.begin(), by_length.end(), size_t{0});
  std::stable_sort(by_length.begin(), by_length.end(), [&](size_t a, size_t b) { return cycles[a] > cycles[b]; });
  sched::Stream s;
  s.memory_bytes = 1;  // the weights are resident: nothing to place
  s.cores = cores;
  for (size_t i : by_length) {
    const std::string name = fmt::format("T{}", i);
    s.ops.push_back({.name = name, .cycles = cycles[i], .kind = sched::OpKind::start});
    s.ops.push_back({.name = name, .kind = sched::OpKind::wait});
  }
  std::vector<std::vector<PlacedTask>> out(static_cast<size_t>(cores));
  auto schedule = sched::finalize_stream(s) ? sched::schedule(s, sched::Options{.policy = sched::Policy::critical_path})
                                            : Result<sched::Schedule>(make_error(-EINVAL, "stream"));
  if (!schedule) {  // cannot happen for independent programs; round-robin, longest first
    for (size_t pos = 0; pos < by_length.size(); ++pos) out[pos % static_cast<size_t>(cores)].push_back(all[by_length[pos]]);
    return out;
  }
  for (int op : schedule->order) {
    if (s.ops[static_cast<size_t>(op)].kind != sched::OpKind::start) continue;
    const int core = std::max(0, schedule->core_of[static_cast<size_t>(op)]);
    out[static_cast<size_t>(core)].push_back(all[by_length[static_cast<size_t>(op) / 2]]);
  }
  return out;
}

// The group's tasks on the cores their plans name, matmul j's plan core c on core
// (c + j) mod cores, so that the matmuls' larger shares (a fewest-task plan's first cores)
// fall on different cores: the placement a plan balanced by itself (stack_in_fewest_tasks)
// keeps, where the list scheduler's longest-first order would not.
std::vector<std::vector<PlacedTask>> place_as_planned(const std::vector<matmul::Plan>& plans, int cores) {
  std::vector<std::vector<PlacedTask>> out(static_cast<size_t>(cores));
  for (size_t j = 0; j < plans.size(); ++j)
    for (size_t i = 0; i < plans[j].tasks.size(); ++i) {
      const size_t core = (static_cast<size_t>(plans[j].tasks[i].core) + j) % static_cast<size_t>(cores);
      out[core].push_back({static_cast<int>(j), static_cast<int>(i)});
    }
  return out;
}

// Each core's chain as it runs: the tasks of the group's first matmul, then the second's
// (chain_contexts links the matmuls' command lists in that order on every core), each
// matmul's tasks in the scheduler's order; and every plan's tasks reordered to match (a
// plan's tasks are grouped by core, in submission order within a core: plan.h).
void settle_chains(std::vector<matmul::Plan>& plans, std::vector<std::vector<PlacedTask>>& chains) {
  std::vector<std::vector<matmul::Task>> tasks(plans.size());
  for (size_t c = 0; c < chains.size(); ++c) {
    std::stable_sort(chains[c].begin(), chains[c].end(),
                     [](const PlacedTask& a, const PlacedTask& b) { return a.matmul < b.matmul; });
    for (PlacedTask& t : chains[c]) {
      auto& mine = tasks[static_cast<size_t>(t.matmul)];
      matmul::Task task = plans[static_cast<size_t>(t.matmul)].tasks[static_cast<size_t>(t.task)];
      task.core = static_cast<int>(c);
      t.task = static_cast<int>(mine.size());
      mine.push_back(task);
    }
  }
  for (size_t j = 0; j < plans.size(); ++j) {
    plans[j].tasks = std::move(tasks[j]);
    plans[j].cores_used = static_cast<int>(chains.size());  // plan core c is physical core c
  }
}

// The group with parts[j] column parts per matmul: placed, then priced as it runs.
GroupPlan price(std::vector<matmul::Plan> plans, const std::vector<int>& parts, int cores,
                const timing::TimingParams& params, bool as_planned) {
  GroupPlan g;
  g.parts = parts;
  g.cores = as_planned ? place_as_planned(plans, cores) : place(plans, cores, params);
  settle_chains(plans, g.cores);
  std::vector<timing::CoreWork> work;
  for (size_t c = 0; c < g.cores.size(); ++c) {
    if (g.cores[c].empty()) continue;
    timing::CoreWork w;
    w.core = static_cast<int>(c);
    for (const PlacedTask& t : g.cores[c]) {
      const matmul::Plan& plan = plans[static_cast<size_t>(t.matmul)];
      w.tasks.push_back(plan_task_demand(plan, plan.tasks[static_cast<size_t>(t.task)]));
      g.weight_bytes += w.tasks.back().weight_bytes;
    }
    g.tasks += static_cast<int64_t>(w.tasks.size());
    work.push_back(std::move(w));
  }
  g.submits = static_cast<int64_t>(work.size());
  const std::vector<double> start(work.size(), 0.0);
  for (double e : timing::simulate_cores(work, start, params)) g.device_ns = std::max(g.device_ns, e);
  g.plans = std::move(plans);
  return g;
}

using MatmulOptions = std::vector<std::pair<int, matmul::Plan>>;  // column parts, plan

// Every plan one matmul may have, once: with p column parts, and for int4 also with its full
// K-slices stacked (matmul::PlanOptions::stack) where they stack, and stacked in the fewest tasks.
Result<MatmulOptions> matmul_options(matmul::DType dtype, int64_t m, int64_t k, int64_t n, int cores, int64_t width) {
  MatmulOptions out;
  for (int p = 1; p <= cores; ++p)
    for (bool stack : {false, true}) {
      if (stack && dtype != matmul::DType::int4) continue;
      auto plan = matmul::make_plan({m, k, n}, {.dtype = dtype, .cores = p, .slice_k = width, .stack = stack});
      if (!plan) return make_error(plan.error().code, fmt::format("{} x {} x {}: {}", m, k, n, plan.error().message));
      if (stack && !plan->stacked) continue;  // its slices do not stack: the plain plan is already there
      if (stack && plan->slices * plan->slice_k == plan->kp) {  // every slice full: also in the fewest tasks
        matmul::Plan fewest = *plan;
        if (matmul::stack_in_fewest_tasks(fewest, p) && fewest.tasks.size() < plan->tasks.size())
          out.emplace_back(p, std::move(fewest));
      }
      out.emplace_back(p, std::move(*plan));
    }
  return out;
}

// Every combination of the matmuls' plans (options ^ matmuls: 27 for q/k/v of int8 on 3
// cores), each placed by the list scheduler and as the plans place their tasks, onto `out`.
void combine(const std::vector<MatmulOptions>& options, int cores, const timing::TimingParams& params,
             std::vector<GroupPlan>& out) {
  std::vector<size_t> pick(options.size(), 0);
  for (;;) {
    std::vector<matmul::Plan> plans;
    std::vector<int> parts;
    for (size_t j = 0; j < options.size(); ++j) {
      parts.push_back(options[j][pick[j]].first);
      plans.push_back(options[j][pick[j]].second);
    }
    out.push_back(price(plans, parts, cores, params, false));
    out.push_back(price(std::move(plans), parts, cores, params, true));
    size_t j = 0;
    while (j < pick.size() && pick[j] + 1 == options[j].size()) pick[j++] = 0;
    if (j == pick.size()) break;
    ++pick[j];
  }
}

int64_t width_of(std::span<const int64_t> slice_k, size_t j) { return j < slice_k.size() ? slice_k[j] : 0; }

// The fused matmul's plans (fusable): K x the members' N summed, each marked with the
// members' column ranges of its C.
Status add_fused(matmul::DType dtype, int64_t m, std::span<const std::pair<int64_t, int64_t>> shapes, int cores,
                 const timing::TimingParams& params, std::span<const int64_t> slice_k, std::vector<GroupPlan>& out) {
  std::vector<int64_t> columns = {0};
  for (const auto& [k, n] : shapes) columns.push_back(columns.back() + n);
  auto options = matmul_options(dtype, m, shapes[0].first, columns.back(), cores, width_of(slice_k, 0));
  if (!options) return options.error();
  const size_t first = out.size();
  combine({std::move(*options)}, cores, params, out);
  for (size_t i = first; i < out.size(); ++i) {
    out[i].fused = true;
    out[i].columns = columns;
  }
  return {};
}

}  // namespace

bool fusable(matmul::DType dtype, int64_t m, std::span<const std::pair<int64_t, int64_t>> shapes,
             std::span<const int64_t> slice_k) {
  if (shapes.size() < 2) return false;
  const int64_t k = shapes[0].first, width = width_of(slice_k, 0);
  // Each member's K-slices (one row, one core: the layout), all sliced as the first member's.
  const auto slicing = [&](size_t j) {
    return matmul::make_plan({1, k, shapes[j].second}, {.dtype = dtype, .slice_k = width_of(slice_k, j)});
  };
  const auto first = slicing(0);
  if (!first) return false;
  int64_t n = 0;
  for (size_t j = 0; j < shapes.size(); ++j) {
    if (shapes[j].first != k || shapes[j].second % matmul::weight_atom(dtype) != 0) return false;
    const auto own = slicing(j);
    if (!own || own->slices != first->slices || own->slice_k != first->slice_k || own->kp != first->kp) return false;
    n += shapes[j].second;
  }
  auto plan = matmul::make_plan({m, k, n}, {.dtype = dtype, .slice_k = width});
  return plan && plan->np == n;  // every slice N-blocks outermost, no N padding (fusable's comment)
}

Result<std::vector<GroupPlan>> group_candidates(matmul::DType dtype, int64_t m,
                                                std::span<const std::pair<int64_t, int64_t>> shapes, int cores,
                                                const timing::TimingParams& params, std::span<const int64_t> slice_k,
                                                bool fuse) {
  if (shapes.empty()) return make_error(-EINVAL, "a group of no matmuls");
  if (cores < 1 || cores > matmul::kMaxCores)
    return make_error(-EINVAL, fmt::format("cores = {}: must be 1..{}", cores, matmul::kMaxCores));
  std::vector<MatmulOptions> options;
  for (size_t j = 0; j < shapes.size(); ++j) {
    auto o = matmul_options(dtype, m, shapes[j].first, shapes[j].second, cores, width_of(slice_k, j));
    if (!o) return o.error();
    options.push_back(std::move(*o));
  }
  std::vector<GroupPlan> out;
  combine(options, cores, params, out);
  if (fuse && fusable(dtype, m, shapes, slice_k))
    if (Status s = add_fused(dtype, m, shapes, cores, params, slice_k, out); !s) return s.error();
  return out;
}

size_t choose_group_plan(std::span<const GroupPlan> candidates) {
  size_t fastest = 0;
  for (size_t i = 1; i < candidates.size(); ++i) {
    const GroupPlan &c = candidates[i], &f = candidates[fastest];
    if (c.device_ns < f.device_ns || (c.device_ns == f.device_ns && c.tasks < f.tasks)) fastest = i;
  }
  const double near = candidates.empty() ? 0 : candidates[fastest].device_ns * (1 + kFewerTasksTolerance);
  size_t kept = fastest;
  for (size_t i = 0; i < candidates.size(); ++i) {
    const GroupPlan &c = candidates[i], &k = candidates[kept];
    if (c.device_ns > near) continue;
    if (c.tasks < k.tasks || (c.tasks == k.tasks && c.device_ns < k.device_ns)) kept = i;
  }
  return kept;
}

Result<GroupPlan> plan_group(matmul::DType dtype, int64_t m, std::span<const std::pair<int64_t, int64_t>> shapes,
                             int cores, const timing::TimingParams& params, std::span<const int64_t> slice_k, bool fuse) {
  auto all = group_candidates(dtype, m, shapes, cores, params, slice_k, fuse);
  if (!all) return all.error();
  return std::move((*all)[choose_group_plan(*all)]);
}

Result<matmul::Plan> plan_alone(matmul::DType dtype, int64_t m, int64_t k, int64_t n, int cores, int64_t slice_k) {
  const std::pair<int64_t, int64_t> shape[] = {{k, n}};
  const int64_t width[] = {slice_k};
  auto g = plan_group(dtype, m, shape, cores, {}, width);
  if (!g) return g.error();
  return std::move(g->plans.front());
}

int row_pieces(matmul::DType dtype, int64_t m, std::span<const std::pair<int64_t, int64_t>> shapes,
               std::span<const int64_t> slice_k) {
  if (m < 2 || m % 2 != 0) return 1;
  const int64_t half = m / 2, bits = matmul::element_bits(dtype);
  for (size_t j = 0; j < shapes.size(); ++j) {
    const int64_t width = j < slice_k.size() ? slice_k[j] : 0;
    auto plan = matmul::make_plan({m, shapes[j].first, shapes[j].second}, {.dtype = dtype, .slice_k = width});
    if (!plan || plan->mc <= 0 || half % plan->mc != 0) return 1;
    if ((half * shapes[j].first * bits) % 8 != 0) return 1;  // the second half's A on a whole byte (int4, odd K)
  }
  return 2;
}

}  // namespace ork::exec
