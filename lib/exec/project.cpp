// The board projection (project.h).
#include "lib/exec/project.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>

#include <fmt/format.h>

#include "lib/exec/board_plan.h"
#include "lib/exec/pack_file.h"
#include "lib/exec/exec_plan.h"
#include "lib/exec/fusion.h"
#include "driver/common/npu_cores.h"
#include "driver/timing/timing_model.h"
#include "lib/ref/workers.h"

namespace ork::exec {

std::vector<BatchGroup> batch_groups(const ModelDesc& d) {
  std::vector<BatchGroup> groups;
  for (size_t j = 0; j < d.matmuls.size(); ++j) {
    const MatmulDesc& md = d.matmuls[j];
    bool joins = false;
    if (!groups.empty()) {
      const MatmulDesc& first = d.matmuls[static_cast<size_t>(groups.back().matmuls.front())];
      joins = md.inputs == first.inputs;
      for (int g : groups.back().matmuls) {  // nothing in the group may be needed first
        const std::string& name = d.matmuls[static_cast<size_t>(g)].name;
        if (std::find(md.after.begin(), md.after.end(), name) != md.after.end() ||
            std::find(md.inputs.begin(), md.inputs.end(), name) != md.inputs.end())
          joins = false;
      }
    }
    if (joins)
      groups.back().matmuls.push_back(static_cast<int>(j));
    else
      groups.push_back({{static_cast<int>(j)}});
  }
  return groups;
}

namespace {

Status check_project_options(const ModelDesc& d, const ProjectOptions& o) {
  if (auto s = check_desc(d); !s) return s.error();
  if (o.m < 1 || o.m > 4096) return make_error(-EINVAL, fmt::format("m = {}: must be 1..4096", o.m));
  if (o.cores < 1 || o.cores > hw::kNpuCores)
    return make_error(-EINVAL, fmt::format("cores = {}: must be 1..{}", o.cores, hw::kNpuCores));
  if (!(o.disk_bytes_per_s > 0) || !std::isfinite(o.disk_bytes_per_s))
    return make_error(-EINVAL, fmt::format("disk rate {} bytes/s: must be a positive number", o.disk_bytes_per_s));
  if (o.host_ns.size() != d.matmuls.size())
    return make_error(-EINVAL, fmt::format("host times: {} given for {} matmuls per layer", o.host_ns.size(), d.matmuls.size()));
  for (double h : o.host_ns)
    if (!(h >= 0) || !std::isfinite(h)) return make_error(-EINVAL, fmt::format("host time {} ns: must be >= 0", h));
  for (const auto* parts : {&o.host_parts, &o.half_host_parts, &o.fused_host_parts, &o.half_fused_host_parts}) {
    if (!parts->empty() && parts->size() != d.matmuls.size())
      return make_error(-EINVAL, fmt::format("host parts: {} given for {} matmuls per layer", parts->size(), d.matmuls.size()));
    for (const HostParts& h : *parts)
      if (!(h.before_ns >= 0) || !(h.after_ns >= 0) || !std::isfinite(h.total_ns()))
        return make_error(-EINVAL, fmt::format("host parts {} + {} ns: must be >= 0", h.before_ns, h.after_ns));
  }
  if (!o.slice_k.empty() && o.slice_k.size() != d.matmuls.size())
    return make_error(-EINVAL, fmt::format("slice widths: {} given for {} matmuls per layer", o.slice_k.size(), d.matmuls.size()));
  return Status::success();
}

// One layer's matmuls, each with its bytes, modelled device time and host time.
Status project_matmuls(const ModelDesc& d, const ProjectOptions& o, Projection& p) {
  for (size_t j = 0; j < d.matmuls.size(); ++j) {
    const MatmulDesc& md = d.matmuls[j];
    const int64_t width = o.slice_k.empty() ? 0 : o.slice_k[j];
    auto bytes = packed_bytes(d.dtype, md.k, md.n, width);  // int4: the padding at its width streams too
    if (!bytes) return bytes.error();
    MatmulProjection mp{md.name, md.k, md.n, align_up(*bytes, kPackAlign),
                        modelled_matmul_ns(d.dtype, o.m, md.k, md.n, o.cores, width), o.host_ns[j]};
    auto plan = matmul::make_plan(matmul::Shape{o.m, md.k, md.n},
                                  matmul::PlanOptions{.dtype = d.dtype, .cores = o.cores, .slice_k = width});
    if (!plan) return make_error(plan.error().code, fmt::format("matmul \"{}\": {}", md.name, plan.error().message));
    mp.tasks = static_cast<int64_t>(plan->tasks.size());
    mp.slice_k = plan->slice_k;
    if (mp.device_ns <= 0) return make_error(-EINVAL, fmt::format("matmul \"{}\" ({} x {} x {}): no plan", md.name, o.m, md.k, md.n));
    p.per_matmul.push_back(std::move(mp));
  }
  return Status::success();
}

// What stays resident and what streams: resident when the budget holds every layer and at
// most max_windows windows hold them, each layer whole (windows.h's rule; a layer larger than
// a window never fits); else two layers' slots stream through one window, whatever else fits
// in the budget and that window stays pinned.
void place_weights(uint64_t layer_bytes, int layers, const ProjectOptions& o, Projection& p) {
  const uint64_t per_window = layer_bytes == 0 ? 0 : o.window_bytes / layer_bytes;  // whole layers
  const int64_t windows = per_window == 0 ? INT64_MAX : (layers + static_cast<int64_t>(per_window) - 1) / static_cast<int64_t>(per_window);
  p.resident = p.weight_bytes <= o.budget_bytes && windows <= std::max(o.max_windows, 1);
  p.windows = p.resident ? static_cast<int>(windows) : 1;
  p.window_switches = p.windows > 1 ? p.windows : 0;
  p.switch_ns = static_cast<double>(p.window_switches) * kWindowSwitchNs;
  const uint64_t room = std::min(o.budget_bytes, o.window_bytes);
  if (p.resident) {
    p.resident_bytes = p.weight_bytes;
  } else {
    const uint64_t slots = 2 * layer_bytes;
    p.resident_bytes = room > slots ? std::min(room - slots, p.weight_bytes) : 0;
  }
  p.streamed_bytes = p.weight_bytes - p.resident_bytes;
}

// Matmul j's host parts at one piece's rows (ProjectOptions::host_parts; given: all before).
HostParts host_of(const ProjectOptions& o, size_t j, int pieces) {
  const std::vector<HostParts>& parts = pieces == 1 ? o.host_parts : o.half_host_parts;
  if (!parts.empty()) return parts[j];
  return {o.host_ns[j] / pieces, 0};
}

// A fused group's one call at one piece's rows (ProjectOptions::fused_host_parts; its first
// member's entry): measured at m / 2 for two pieces, else the call at m halved.
HostParts fused_host_of(const ProjectOptions& o, size_t first, int pieces) {
  if (pieces == 2 && !o.half_fused_host_parts.empty()) return o.half_fused_host_parts[first];
  const HostParts& h = o.fused_host_parts[first];
  return {h.before_ns / pieces, h.after_ns / pieces};
}

// The board plan of every group of the layer under `params`: device time, tasks and submits
// per layer, the host's exposed part (overlap.h) and, into *host_ns, all of its work; the
// groups' plans into `groups` when given. With o.fuse the fused plans compete (plan_group)
// where the executor may run them (fusion.h fusion_fits, on the packed bytes and slots'
// alignment the executor's plan has by default).
Result<StepFigures> plan_groups(const ModelDesc& d, const ProjectOptions& o, const timing::TimingParams& params,
                                std::vector<BatchGroup>* groups, double* host_ns = nullptr) {
  StepFigures f;
  std::vector<BatchGroup> gs = batch_groups(d);
  std::vector<GroupWork> work;
  for (BatchGroup& g : gs) {
    std::vector<std::pair<int64_t, int64_t>> shapes;
    std::vector<int64_t> widths;
    std::vector<uint64_t> bytes;
    for (int j : g.matmuls) {
      const MatmulDesc& md = d.matmuls[static_cast<size_t>(j)];
      shapes.emplace_back(md.k, md.n);
      widths.push_back(o.slice_k.empty() ? 0 : o.slice_k[static_cast<size_t>(j)]);
      auto b = packed_bytes(d.dtype, md.k, md.n, widths.back());
      if (!b) return b.error();
      bytes.push_back(*b);
    }
    g.pieces = row_pieces(d.dtype, o.m, shapes, widths);
    const bool fuse = o.fuse && g.matmuls.size() > 1 && fusion_fits(d.dtype, o.m, shapes, widths, bytes, kPackAlign);
    auto plan = plan_group(d.dtype, o.m / g.pieces, shapes, o.cores, params, widths, fuse);
    if (!plan) return plan.error();
    GroupWork w{g.pieces, plan->device_ns, {}};
    if (plan->fused && !o.fused_host_parts.empty())  // one call a piece
      w.host.push_back(fused_host_of(o, static_cast<size_t>(g.matmuls.front()), g.pieces));
    else
      for (int j : g.matmuls) w.host.push_back(host_of(o, static_cast<size_t>(j), g.pieces));
    for (const HostParts& h : w.host) g.host_ns += h.total_ns();
    work.push_back(std::move(w));
    g.device_ns = static_cast<int64_t>(plan->device_ns * g.pieces);
    g.tasks = plan->tasks * g.pieces;
    g.submits = plan->submits * g.pieces;
    g.parts = plan->parts;
    g.fused = plan->fused;
    g.stacked.clear();
    for (const matmul::Plan& mp : plan->plans) g.stacked.push_back(mp.stacked);
    f.device_ns += static_cast<double>(g.device_ns);
    f.tasks += g.tasks;
    f.submits += g.submits;
  }
  // The step's layers replayed in one schedule (they pipeline into each other, overlap.h),
  // kept per layer like the rest of f (finish multiplies by the layers).
  const HostSchedule s = schedule_layer(work, d.layers);
  f.host_exposed_ns = s.exposed_ns / d.layers;
  if (host_ns != nullptr) *host_ns = s.host_ns / d.layers;
  if (groups != nullptr) *groups = std::move(gs);
  return f;
}

// Per layer -> per step, and the step's time with the host's exposed part and the I/O's.
void finish(StepFigures& f, const ModelDesc& d, const Projection& p) {
  f.device_ns *= d.layers;
  f.host_exposed_ns *= d.layers;
  f.tasks *= d.layers;
  f.submits *= d.layers;
  f.step_ns = std::max(p.io_ns, f.device_ns + f.host_exposed_ns + p.switch_ns);  // the same windows
  f.tokens_per_s = static_cast<double>(p.m) * 1e9 / f.step_ns;
}

// The board plan (the step's figures: with o.fuse its fused groups, as the executor runs
// them), the same plan with all fixed cost per submit, and the previous plan (every matmul
// its own submit on all cores).
Status project_plans(const ModelDesc& d, const ProjectOptions& o, Projection& p) {
  double layer_host = 0;
  auto board = plan_groups(d, o, timing::TimingParams{}, &p.groups, &layer_host);
  if (!board) return board.error();
  p.tasks_per_layer = board->tasks;
  finish(*board, d, p);
  p.device_ns = board->device_ns;
  p.host_ns = layer_host * d.layers;  // the board plan's calls, each at its piece's rows
  p.host_exposed_ns = board->host_exposed_ns;
  p.host_overlapped_ns = p.host_ns - p.host_exposed_ns;
  p.tasks = board->tasks;
  p.submits = board->submits;
  timing::TimingParams all_per_submit;
  all_per_submit.submit_ns = timing::kSubmitNs + timing::kTaskNs;
  all_per_submit.task_ns = 0;
  auto ps = plan_groups(d, o, all_per_submit, nullptr);
  if (!ps) return ps.error();
  finish(*ps, d, p);
  p.per_submit = *ps;
  for (const MatmulProjection& mp : p.per_matmul) {  // blocking calls: nothing overlaps
    p.split_each.device_ns += static_cast<double>(mp.device_ns);
    p.split_each.host_exposed_ns += mp.host_ns;
    p.split_each.tasks += mp.tasks;
  }
  p.split_each.submits = static_cast<int64_t>(p.per_matmul.size());
  finish(p.split_each, d, p);
  // The groups' submits come first on every core at once: no stream hides them.
  int64_t starts = 0;  // each piece of a group is a job of its own
  for (const BatchGroup& g : p.groups) starts += g.pieces;
  p.submit_ns = static_cast<double>(starts) * d.layers * timing::kSubmitNs;
  p.fixed_ns = p.device_ns - p.dram_floor_ns - p.submit_ns;
  return Status::success();
}

}  // namespace

Result<Projection> project(const ModelDesc& d, const ProjectOptions& o) {
  if (Status st = check_project_options(d, o); !st) return st.error();
  Projection p;
  p.m = o.m;
  p.layers = d.layers;
  p.cores = o.cores;
  p.budget_bytes = o.budget_bytes;
  p.window_bytes = o.window_bytes;
  p.disk_bytes_per_s = o.disk_bytes_per_s;
  if (Status st = project_matmuls(d, o, p); !st) return st.error();
  uint64_t layer_bytes = 0;
  double layer_host = 0;
  for (const MatmulProjection& mp : p.per_matmul) {
    layer_bytes += mp.bytes;
    layer_host += mp.host_ns;
  }
  p.weight_bytes = layer_bytes * static_cast<uint64_t>(d.layers);
  place_weights(layer_bytes, d.layers, o, p);
  p.host_ns = layer_host * d.layers;
  p.io_ns = static_cast<double>(p.streamed_bytes) / o.disk_bytes_per_s * 1e9;
  p.dram_floor_ns = static_cast<double>(p.weight_bytes) / timing::kSharedDramBytesPerNs;
  if (Status st = project_plans(d, o, p); !st) return st.error();
  p.compute_ns = p.device_ns + p.host_exposed_ns + p.switch_ns;
  p.step_ns = std::max(p.io_ns, p.compute_ns);
  p.sequential_ns = p.io_ns + p.compute_ns;
  p.tokens_per_s = static_cast<double>(o.m) * 1e9 / p.step_ns;
  return p;
}

Result<std::vector<double>> measure_host_ns(DeviceRef dev, const ModelDesc& d, int64_t m, int repeats,
                                            int* submits_per_call, std::span<const int64_t> slice_k) {
  auto parts = measure_host_parts(dev, d, m, repeats, submits_per_call, slice_k);
  if (!parts) return parts.error();
  std::vector<double> out;
  for (const HostParts& h : *parts) out.push_back(h.total_ns());
  return out;
}

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

namespace {

// One call's host parts at m rows: K x the summed `ns` (one N: a matmul alone; several: a
// fused group, C's columns unpacked straight into each member's output as the executor's
// are, fusion.h member_columns), the runner on a view of a zero BO, one warm-up call (builds
// the context) and the medians of `repeats`.
Result<HostParts> measure_call(DeviceRef dev, matmul::DType dtype, int64_t m, int64_t k, std::span<const int64_t> ns,
                               int64_t width, int repeats, int& most_submits) {
  int64_t n = 0;
  for (int64_t v : ns) n += v;
  auto bytes = packed_bytes(dtype, k, n, width);
  if (!bytes) return bytes.error();
  auto bo = dev.kmd->bo_create(align_up(*bytes, kPackAlign), driver::BoUsage::data);
  if (!bo) return make_error(bo.error().code, fmt::format("a {}-byte weight buffer: {}", *bytes, bo.error().message));
  auto w = matmul::ResidentWeights::view(**bo, dtype, k, n, width);
  if (!w) return w.error();
  // Operand and output bytes as the executor hands them to the runner (activation.h).
  Activation a0;  // zeros: the PC computes nothing, the host's work does not depend on values
  a0.rows = m;
  a0.width = k;
  if (dtype == matmul::DType::fp16)
    a0.f16.assign(static_cast<size_t>(m * k), 0);
  else
    a0.i8.assign(static_cast<size_t>(m * k), 0);
  const std::vector<uint8_t> a = operand_bytes(dtype, a0);
  std::vector<uint8_t> c(static_cast<size_t>(ns.size() > 1 ? 0 : output_bytes(m, n)));
  std::vector<std::vector<uint8_t>> members;  // a fused group's: C straight to each member's (executor's fused_calls.cpp)
  std::vector<matmul::ColumnPart> parts;
  if (ns.size() > 1) parts = member_columns(ns, m, members);
  matmul::RunOptions ro;
  ro.cores = dev.cores;
  std::vector<double> before, after;
  Status st;
  const ref::detail::CpuAccounting cpu;  // the steps' CPU time, every thread's (workers.h)
  for (int r = 0; r <= repeats && st; ++r) {
    matmul::RunStats s;
    st = dev.runner->run(**w, a.data(), m, c.data(), ro, &s, parts);
    most_submits = std::max(most_submits, s.submits);
    if (r == 0) continue;
    before.push_back(static_cast<double>(s.plan_cpu_ns + s.pack_cpu_ns + s.submit_cpu_ns));
    after.push_back(static_cast<double>(s.unpack_cpu_ns));
  }
  dev.runner->forget(**w);
  if (!st) return st.error();
  return HostParts{median(std::move(before)), median(std::move(after))};
}

Status check_measure(DeviceRef dev, const ModelDesc& d, int repeats, std::span<const int64_t> slice_k) {
  if (!dev.on_npu() || dev.kmd == nullptr || dev.runner == nullptr)
    return make_error(-EINVAL, "measuring host time needs an NPU device (kmd and runner)");
  if (repeats < 1) return make_error(-EINVAL, fmt::format("repeats = {}: must be >= 1", repeats));
  if (!slice_k.empty() && slice_k.size() != d.matmuls.size())
    return make_error(-EINVAL, fmt::format("slice widths: {} given for {} matmuls per layer", slice_k.size(), d.matmuls.size()));
  return Status::success();
}

}  // namespace

Result<std::vector<HostParts>> measure_host_parts(DeviceRef dev, const ModelDesc& d, int64_t m, int repeats,
                                                  int* submits_per_call, std::span<const int64_t> slice_k) {
  if (Status st = check_measure(dev, d, repeats, slice_k); !st) return st.error();
  std::vector<HostParts> out;
  int most_submits = 0;
  for (size_t j = 0; j < d.matmuls.size(); ++j) {
    const MatmulDesc& md = d.matmuls[j];
    const int64_t n[] = {md.n};
    auto h = measure_call(dev, d.dtype, m, md.k, n, slice_k.empty() ? 0 : slice_k[j], repeats, most_submits);
    if (!h) return make_error(h.error().code, fmt::format("matmul \"{}\": {}", md.name, h.error().message));
    out.push_back(*h);
  }
  if (submits_per_call != nullptr) *submits_per_call = most_submits;
  return out;
}

Result<std::vector<HostParts>> measure_fused_host_parts(DeviceRef dev, const ModelDesc& d, int64_t m, int repeats,
                                                        std::span<const int64_t> slice_k, int pieces) {
  if (pieces < 1 || m % pieces != 0) return make_error(-EINVAL, fmt::format("{} rows in {} pieces", m, pieces));
  if (Status st = check_measure(dev, d, repeats, slice_k); !st) return st.error();
  std::vector<HostParts> out(d.matmuls.size());
  int submits = 0;
  for (const BatchGroup& g : batch_groups(d)) {
    std::vector<std::pair<int64_t, int64_t>> shapes;
    std::vector<int64_t> widths, ns;
    std::vector<uint64_t> bytes;
    for (int j : g.matmuls) {
      const MatmulDesc& md = d.matmuls[static_cast<size_t>(j)];
      shapes.emplace_back(md.k, md.n);
      ns.push_back(md.n);
      widths.push_back(slice_k.empty() ? 0 : slice_k[static_cast<size_t>(j)]);
      auto b = packed_bytes(d.dtype, md.k, md.n, widths.back());
      if (!b) return b.error();
      bytes.push_back(*b);
    }
    if (g.matmuls.size() < 2 || !fusion_fits(d.dtype, m, shapes, widths, bytes, kPackAlign)) continue;
    auto h = measure_call(dev, d.dtype, m / pieces, shapes[0].first, ns, widths[0], repeats, submits);
    const std::string& name = d.matmuls[static_cast<size_t>(g.matmuls[0])].name;
    if (!h) return make_error(h.error().code, fmt::format("the group of \"{}\" fused: {}", name, h.error().message));
    out[static_cast<size_t>(g.matmuls[0])] = *h;
  }
  return out;
}

}  // namespace ork::exec
