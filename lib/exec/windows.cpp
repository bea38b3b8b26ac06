// A plan over several NPU windows (windows.h).
#include "lib/exec/windows.h"

#include <algorithm>

#include <fmt/format.h>

namespace ork::exec {
namespace {

// Each layer's bytes as its slots take them.
std::vector<uint64_t> layer_bytes(const PackedModel& model, uint64_t align) {
  const ModelDesc& d = model.desc;
  std::vector<uint64_t> bytes(static_cast<size_t>(d.layers), 0);
  for (int l = 0; l < d.layers; ++l)
    for (size_t j = 0; j < d.matmuls.size(); ++j) bytes[static_cast<size_t>(l)] += align_up(model.tensor(l, static_cast<int>(j)).bytes, align);
  return bytes;
}

// Layers in order into windows of `window` bytes: the window of each layer (-1 for a layer
// larger than a window, which build_plan refuses first).
std::vector<int> fill_windows(const std::vector<uint64_t>& layers, uint64_t window) {
  std::vector<int> of(layers.size(), -1);
  int w = 0;
  uint64_t used = 0;
  for (size_t l = 0; l < layers.size(); ++l) {
    if (layers[l] > window) return of;
    if (used + layers[l] > window) {
      ++w;
      used = 0;
    }
    used += layers[l];
    of[l] = w;
  }
  return of;
}

}  // namespace

int windows_needed(const PackedModel& model, uint64_t window_bytes, uint64_t align) {
  const std::vector<int> of = fill_windows(layer_bytes(model, align), window_bytes);
  return of.empty() || of.back() < 0 ? 1 : of.back() + 1;
}

int windows_found(const PackedModel& model, const PlanOptions& o) {
  const uint64_t align = std::max<uint64_t>(kPackAlign, o.io_align);
  uint64_t total = 0;
  for (uint64_t b : layer_bytes(model, align)) total += b;
  if (!o.pin || o.tokens < 2 || total > o.budget_bytes || total <= o.window_bytes) return 1;
  const int n = windows_needed(model, o.window_bytes, align);
  return n <= hw::kMaxNpuWindows ? n : 1;
}

Result<WindowPlacement> place_windows(const PackedModel& model, const ExecPlan& plan, const PlanOptions& o) {
  WindowPlacement p;
  p.layer_window.assign(static_cast<size_t>(model.desc.layers), 0);
  p.slot_window.assign(plan.slot_bytes.size(), 0);
  p.slot_bytes.assign(1, plan.slot_total);
  if (o.windows == 1) return p;
  if (o.windows < 1 || o.windows > hw::kMaxNpuWindows)
    return make_error(-EINVAL, fmt::format("{} NPU windows: must be 1..{}", o.windows, hw::kMaxNpuWindows));
  const uint64_t align = std::max<uint64_t>(kPackAlign, o.io_align);
  p.layer_window = fill_windows(layer_bytes(model, align), o.window_bytes);
  p.windows = p.layer_window.back() + 1;
  if (p.windows > o.windows)
    return make_error(-EINVAL, fmt::format("the model's layers need {} NPU windows of {} bytes, {} given", p.windows,
                                           o.window_bytes, o.windows));
  if (std::find(plan.pinned.begin(), plan.pinned.end(), false) != plan.pinned.end())
    return make_error(-EINVAL, fmt::format("{} NPU windows hold a model only while it stays resident: every tensor pinned, "
                                           "which needs more than one token (--tokens {}) and the weights within the budget "
                                           "({} bytes)", o.windows, o.tokens, o.budget_bytes));
  p.slot_bytes.assign(static_cast<size_t>(p.windows), 0);
  std::vector<int> seen(plan.slot_bytes.size(), -1);  // a pinned tensor's slot is its own
  for (const Step& s : plan.op_steps) {
    if (s.kind != Step::load) continue;
    const int w = p.layer_window[static_cast<size_t>(s.layer)];
    int& slot = seen[static_cast<size_t>(s.slot)];
    if (slot >= 0 && slot != w)
      return make_error(-EINVAL, fmt::format("slot {} is read by layers in windows {} and {}", s.slot, slot, w));
    if (slot < 0) p.slot_bytes[static_cast<size_t>(w)] += plan.slot_bytes[static_cast<size_t>(s.slot)];
    slot = w;
    p.slot_window[static_cast<size_t>(s.slot)] = w;
  }
  return p;
}

}  // namespace ork::exec
