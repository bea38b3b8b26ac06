// The board projection (project.h).
#include "lib/exec/project.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>

#include <fmt/format.h>

#include "lib/exec/pack_file.h"
#include "lib/exec/plan.h"
#include "driver/common/npu_cores.h"
#include "driver/emu/npu/timing.h"

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
      groups.push_back({{static_cast<int>(j)}, 0});
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
  return Status::success();
}

// One layer's matmuls, each with its bytes, modelled device time and host time.
Status project_matmuls(const ModelDesc& d, const ProjectOptions& o, Projection& p) {
  for (size_t j = 0; j < d.matmuls.size(); ++j) {
    const MatmulDesc& md = d.matmuls[j];
    auto bytes = packed_bytes(d.dtype, md.k, md.n);
    if (!bytes) return bytes.error();
    MatmulProjection mp{md.name, md.k, md.n, align_up(*bytes, kPackAlign),
                        modelled_matmul_ns(d.dtype, o.m, md.k, md.n, o.cores), o.host_ns[j]};
    if (auto plan = matmul::make_plan(matmul::Shape{o.m, md.k, md.n}, matmul::PlanOptions{.dtype = d.dtype, .cores = o.cores}))
      mp.tasks = static_cast<int64_t>(plan->tasks.size());
    if (mp.device_ns <= 0) return make_error(-EINVAL, fmt::format("matmul \"{}\" ({} x {} x {}): no plan", md.name, o.m, md.k, md.n));
    p.tasks += mp.tasks * d.layers;
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

// The same token with the parallel matmuls of a layer in one batch per group.
void project_batched(const ModelDesc& d, const ProjectOptions& o, Projection& p) {
  p.groups = batch_groups(d);
  double batched_layer = 0;
  for (BatchGroup& g : p.groups) {
    std::vector<std::pair<int64_t, int64_t>> shapes;
    for (int j : g.matmuls) shapes.emplace_back(d.matmuls[static_cast<size_t>(j)].k, d.matmuls[static_cast<size_t>(j)].n);
    g.device_ns = modelled_group_ns(d.dtype, o.m, shapes, o.cores);
    batched_layer += static_cast<double>(g.device_ns);
  }
  p.batched_device_ns = batched_layer * d.layers;
  p.batched_step_ns = std::max(p.io_ns, p.batched_device_ns + p.host_ns + p.switch_ns);
  p.batched_tokens_per_s = static_cast<double>(o.m) * 1e9 / p.batched_step_ns;
  p.batched_submits = static_cast<int64_t>(p.groups.size()) * d.layers;
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
  double layer_device = 0, layer_host = 0;
  for (const MatmulProjection& mp : p.per_matmul) {
    layer_bytes += mp.bytes;
    layer_device += static_cast<double>(mp.device_ns);
    layer_host += mp.host_ns;
  }
  const double layers = d.layers;
  p.weight_bytes = layer_bytes * static_cast<uint64_t>(d.layers);
  place_weights(layer_bytes, d.layers, o, p);
  p.device_ns = layer_device * layers;
  p.host_ns = layer_host * layers;
  p.io_ns = static_cast<double>(p.streamed_bytes) / o.disk_bytes_per_s * 1e9;
  p.compute_ns = p.device_ns + p.host_ns + p.switch_ns;
  p.step_ns = std::max(p.io_ns, p.compute_ns);
  p.sequential_ns = p.io_ns + p.compute_ns;
  p.tokens_per_s = static_cast<double>(o.m) * 1e9 / p.step_ns;
  p.submits = static_cast<int64_t>(d.matmuls.size()) * d.layers;
  p.dram_floor_ns = static_cast<double>(p.weight_bytes) / emu::kSharedDramBytesPerNs;
  project_batched(d, o, p);
  return p;
}

Result<std::vector<double>> measure_host_ns(DeviceRef dev, const ModelDesc& d, int64_t m, int repeats,
                                            int* submits_per_call) {
  if (dev.kmd == nullptr || dev.runner == nullptr) return make_error(-EINVAL, "measuring host time needs an NPU device (kmd and runner)");
  if (repeats < 1) return make_error(-EINVAL, fmt::format("repeats = {}: must be >= 1", repeats));
  std::vector<double> out;
  int most_submits = 0;
  for (const MatmulDesc& md : d.matmuls) {
    auto bytes = packed_bytes(d.dtype, md.k, md.n);
    if (!bytes) return bytes.error();
    auto bo = dev.kmd->bo_create(align_up(*bytes, kPackAlign), driver::BoUsage::data);
    if (!bo) return make_error(bo.error().code, fmt::format("matmul \"{}\": a {}-byte weight buffer: {}", md.name, *bytes,
                                                            bo.error().message));
    auto w = matmul::ResidentWeights::view(**bo, d.dtype, md.k, md.n);
    if (!w) return w.error();
    // Operand and output bytes as the executor hands them to the runner (activation.h).
    Activation a0;  // zeros: the PC computes nothing, the host's work does not depend on values
    a0.rows = m;
    a0.width = md.k;
    if (d.dtype == matmul::DType::fp16)
      a0.f16.assign(static_cast<size_t>(m * md.k), 0);
    else
      a0.i8.assign(static_cast<size_t>(m * md.k), 0);
    const std::vector<uint8_t> a = operand_bytes(d.dtype, a0);
    std::vector<uint8_t> c(static_cast<size_t>(output_bytes(m, md.n)));
    matmul::RunOptions ro;
    ro.cores = dev.cores;
    std::vector<double> times;
    Status st;
    for (int r = 0; r <= repeats && st; ++r) {
      matmul::RunStats s;
      st = dev.runner->run(**w, a.data(), m, c.data(), ro, &s);
      most_submits = std::max(most_submits, s.submits);
      if (r > 0) times.push_back(static_cast<double>(s.plan_ns + s.pack_ns + s.submit_ns + s.unpack_ns));
    }
    dev.runner->forget(**w);
    if (!st) return make_error(st.error().code, fmt::format("matmul \"{}\": {}", md.name, st.error().message));
    std::sort(times.begin(), times.end());
    out.push_back(times[times.size() / 2]);
  }
  if (submits_per_call != nullptr) *submits_per_call = most_submits;
  return out;
}

}  // namespace ork::exec
