// A plan over several NPU windows (docs/execution.md "Windows"): a model larger than one
// window stays resident in host RAM, its layers spread over windows (rknpu IOMMU domains,
// rocket open files; driver/kmd/kmd.h Kmd::open_window), each window holding at most
// PlanOptions::window_bytes of slots. A layer never straddles two windows: a job reads only
// its own window's buffers, and the executor drains the device at a layer's edge anyway (a
// layer's input is the previous layer's whole output), which is where the NPU may switch
// windows with no job of the old one in flight.
#pragma once

#include <cstdint>
#include <vector>

#include "driver/common/result.h"
#include "lib/exec/pack_file.h"
#include "lib/exec/exec_plan.h"

namespace ork::exec {

struct WindowPlacement {
  int windows = 1;                   // windows used
  std::vector<int> layer_window;     // per layer
  std::vector<int> slot_window;      // per slot of the plan
  std::vector<uint64_t> slot_bytes;  // per window: its slots' bytes (<= window_bytes)
};

// The fewest windows of `window_bytes` that hold every layer's tensors (each `align`-rounded,
// as the slots are), layers in order, a layer whole in one window.
int windows_needed(const PackedModel& model, uint64_t window_bytes, uint64_t align);

// The windows a run finds when none are given: the fewest that hold the whole model when it
// stays resident (more than one token, pinning on, its weights within the budget) and one
// window does not hold it, up to hw::kMaxNpuWindows; else 1 (the model streams through one).
int windows_found(const PackedModel& model, const PlanOptions& options);

// Where each layer and slot of `plan` goes. options.windows == 1: all in window 0. More: every
// tensor must be pinned (the whole model resident: more than one token, and the weights
// within the budget), else refused naming why; layers fill window 0 up to window_bytes, then
// window 1, ...; more windows needed than options.windows is refused too.
Result<WindowPlacement> place_windows(const PackedModel& model, const ExecPlan& plan, const PlanOptions& options);

}  // namespace ork::exec
