// The board projection (docs/execution.md "Board projection"): the modelled time of one
// step (a decode token at M = 1, or M prefill rows) of a model's matmuls on the RK3588,
// from three parts, each stated:
//   device  the timing model's time of every group of the board plan below (per-core task
//           chains on shared DRAM plus one submit per core; driver/timing/timing_model.h), on
//           `cores`;
//   host    the host's own time per matmul call (plan lookup, packing A, the submit and
//           wait ioctls, unpacking C), measured as CPU time on the emulator with a PC that
//           does no work (measure_host_parts; a fused group's one call as such,
//           measure_fused_host_parts) or given; only the part the NPU's jobs do not
//           hide is added, from the schedule of the executor's host work and NPU jobs over
//           the step's layers (overlap.h);
//   I/O     the weight bytes that do not stay resident, at the disk rate.
// The board plan: each group of a layer's matmuls (q/k/v, o, gate/up, down) is one chained
// submit per core, its tasks placed on the cores by lib/sched's list scheduler
// (board_plan.h); groups run one after another (each needs the previous one's output), a
// group in two row pieces when its M-tiles split evenly (row_pieces), and a step enters each
// NPU window it uses once, so compute = device + exposed host + switch; the scheduled order overlaps I/O with compute, so a step takes max(I/O, compute)
// (the sequential order: their sum). The residency rule: the whole model stays resident
// when its weights fit the budget (host RAM for weights) and its layers, each whole, fit at
// most max_windows NPU address windows (lib/exec/windows.h; a step then switches windows
// `windows` times, each at kWindowSwitchNs); otherwise it streams through one window: two of
// its largest layers are kept as streaming slots, the rest of what fits is pinned, and
// everything else is read from disk every step.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "driver/common/npu_window.h"
#include "driver/common/result.h"
#include "lib/exec/executor.h"
#include "lib/exec/model.h"
#include "lib/exec/overlap.h"

namespace ork::exec {

// What one switch of NPU window costs the model, ns: an assumption, never measured. On the
// vendor driver a SUBMIT in another IOMMU domain detaches the NPU's IOMMU from the old domain
// and attaches the new one before the job (rknpu_iommu.c rknpu_iommu_switch_domain: page
// table base written, TLB zapped), with no job of the old domain in flight (the executor
// drains at a layer's edge: a layer reads the previous one's whole output). 100 us is taken
// as a generous bound for two IOMMU register programs and a TLB flush through an ioctl; a
// board measures it (docs/board.md "What a board must confirm").
inline constexpr double kWindowSwitchNs = 100e3;

struct ProjectOptions {
  int64_t m = 1;                    // rows per step: 1 decode, 128 prefill
  int cores = 3;
  double disk_bytes_per_s = 1.2e9;  // docs/io.md's measured rate on this machine
  uint64_t budget_bytes = 0;        // host RAM the weights may take
  uint64_t window_bytes = 0;        // each NPU address window (KmdInfo::window_bytes)
  int max_windows = hw::kMaxNpuWindows;  // windows a resident model may span (1: the old one-window rule)
  std::vector<double> host_ns;      // per matmul of a layer (desc order): host time per call
  // Per matmul, host_ns split at the device (overlap.h): at m rows, and at m / 2 rows for the
  // groups the executor runs in two row pieces (row_pieces, board_plan.h). Empty: the
  // call's host time (halved for a piece) all before the device.
  std::vector<HostParts> host_parts, half_host_parts;
  // Per matmul of a layer (desc order), read at a group's first member only: the host parts
  // of the group run as one fused matmul at m rows (measure_fused_host_parts: A packed once,
  // C's columns unpacked straight into each member's output), the one call
  // the executor makes for a group the board plan fuses; and at m / 2 rows for a fused group
  // in two row pieces (one call a piece; empty: half the call at m rows). Empty: a fused
  // group is priced as its members' calls (host_of), each packing A (an upper bound).
  std::vector<HostParts> fused_host_parts, half_fused_host_parts;
  // int4: per matmul of a layer (desc order), the K-slice width its weights are packed with
  // (lib/matmul/int4_bound.h; matmul::PlanOptions::slice_k). Empty: the dtype's for all.
  std::vector<int64_t> slice_k;
  // The groups that read one A priced as one fused matmul where the executor runs them so
  // (PlanOptions::fuse, its default; fusion.h), the fastest-fewest of fused and unfused
  // kept. false: every group unfused (ork_run --no-fuse).
  bool fuse = true;
};

struct MatmulProjection {
  std::string name;
  int64_t k = 0, n = 0;
  uint64_t bytes = 0;     // packed weight bytes of one layer's tensor
  int64_t device_ns = 0;  // modelled, one submit
  double host_ns = 0;
  int64_t tasks = 0;      // NPU tasks of its plan (each pays the model's fixed task cost)
  int64_t slice_k = 0;    // K per slice of its plan (int4: the weights' width)
};

// A group of a layer's matmuls that read the same input and do not depend on each other
// (q/k/v; gate/up; a matmul alone): its board plan (board_plan.h), tasks placed on the cores
// by the list scheduler, one chained submit per core.
struct BatchGroup {
  std::vector<int> matmuls;
  int64_t device_ns = 0;  // the group's plan on the timing model
  int64_t tasks = 0, submits = 0;
  std::vector<int> parts;  // per matmul: its column parts
  std::vector<bool> stacked;  // per matmul: its int4 K-slices run stacked (matmul::Plan::stacked)
  int pieces = 1;          // row pieces (row_pieces): device_ns is all of them
  bool fused = false;      // run as one fused matmul (board_plan.h fusable; parts and stacked: its one plan)
  double host_ns = 0;      // the host's work of one piece: its members' calls, or the fused call's
};

// A step's figures under one plan or one reading of the timing model.
struct StepFigures {
  double device_ns = 0, step_ns = 0, tokens_per_s = 0;
  double host_exposed_ns = 0;  // the host's time the NPU does not hide (overlap.h)
  int64_t tasks = 0, submits = 0;
};

struct Projection {
  int64_t m = 1;
  int layers = 0, cores = 3;
  std::vector<MatmulProjection> per_matmul;  // one layer, each matmul split over all cores
  // Per step (all layers), the board plan (the groups below):
  double device_ns = 0, host_ns = 0, io_ns = 0;
  // Of host_ns, the part the NPU's jobs hide and the part they do not, from the schedule of
  // the executor's host work and NPU jobs (overlap.h).
  double host_overlapped_ns = 0, host_exposed_ns = 0;
  double compute_ns = 0;     // device + exposed host + switch
  double step_ns = 0;        // max(io, compute): the scheduled order
  double sequential_ns = 0;  // io + compute: load, then compute, no overlap
  double tokens_per_s = 0;   // m per step
  int64_t submits = 0;       // per step: one per core with work per group
  int64_t tasks = 0;         // per step, all cores
  int64_t tasks_per_layer = 0;
  // The weight bytes once through the shared DRAM limit (timing_model.h kSharedDramBytesPerNs):
  // no plan of these matmuls is faster on the model.
  double dram_floor_ns = 0;
  // Where the board plan's device time goes: the floor, the submits at the groups' starts
  // (no core streams then), and the rest: fixed task cost no other core's stream hid, and
  // cores idle while another finishes.
  double submit_ns = 0, fixed_ns = 0;
  uint64_t weight_bytes = 0, resident_bytes = 0, streamed_bytes = 0, budget_bytes = 0, window_bytes = 0;
  bool resident = false;     // the whole model stays resident
  int windows = 1;           // NPU windows the weights use (layers whole in each)
  int64_t window_switches = 0;  // per step: windows > 1 enters each once (kWindowSwitchNs each)
  double switch_ns = 0;         // their cost, per step, part of compute_ns
  double disk_bytes_per_s = 0;
  std::vector<BatchGroup> groups;
  // The same plan made and priced with all of the fitted fixed cost per submit (none per
  // task): the other end of the split docs/timing-model.md names as an assumption.
  StepFigures per_submit;
  // The previous plan: one submit per matmul, each split over all cores (per_matmul).
  StepFigures split_each;
};

// The groups of `desc`'s layer: consecutive matmuls with the same inputs, none in another's
// `after` or inputs.
std::vector<BatchGroup> batch_groups(const ModelDesc& desc);

// Checks the options (m, cores, rate, host_ns size) and computes the projection.
Result<Projection> project(const ModelDesc& desc, const ProjectOptions& options);

// Host time per call of each of the layer's matmuls at m rows, on `device` (meant to be the
// emulator with a PC that does no work, so the device's part is ~0): weights are views of
// zero BOs of the packed size, one warm-up call (builds the context), then `repeats` calls;
// the median of the runner's plan + pack + submit + unpack CPU time (RunStats' *_cpu_ns:
// every thread that did the step's work, lib/ref/workers.h CpuAccounting), not its wall
// time, which on a loaded machine is mostly threads waiting for a core. *submits_per_call: the
// submits one call made (the largest over the matmuls).
// `slice_k` as ProjectOptions::slice_k (the views take those widths).
Result<std::vector<double>> measure_host_ns(DeviceRef device, const ModelDesc& desc, int64_t m, int repeats,
                                            int* submits_per_call = nullptr, std::span<const int64_t> slice_k = {});
// The same, each call's time split at the device: before = plan + pack + submit, after =
// unpack (each the median of its own repeats).
Result<std::vector<HostParts>> measure_host_parts(DeviceRef device, const ModelDesc& desc, int64_t m, int repeats,
                                                  int* submits_per_call = nullptr, std::span<const int64_t> slice_k = {});

// Per matmul of a layer (desc order), ProjectOptions::fused_host_parts at m rows: at the first
// member of each group the executor may run fused at m rows (batch_groups; fusion_fits on the
// packed bytes at kPackAlign) the host parts of that one call at m / `pieces` rows (2: one row
// piece's call, ProjectOptions::half_fused_host_parts), measured as measure_host_parts
// measures a matmul's (the runner on a view of a zero BO of K x the members' N summed, the
// medians of `repeats` calls after a warm-up), C's columns unpacked straight into each
// member's output as the executor does (fusion.h member_columns); {0, 0} elsewhere.
Result<std::vector<HostParts>> measure_fused_host_parts(DeviceRef device, const ModelDesc& desc, int64_t m, int repeats,
                                                        std::span<const int64_t> slice_k = {}, int pieces = 1);

}  // namespace ork::exec
