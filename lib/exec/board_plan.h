// The board plan of one group of a layer's matmuls (docs/execution.md "Board projection"):
// the matmuls that read the same input and do not wait for each other (q/k/v, gate/up, or a
// matmul alone) become NPU tasks, and lib/sched's list scheduler places the tasks on the
// cores (cores are its slices) instead of every matmul being split over every core. Each
// core's tasks of the group are one chained submit; the group is priced with the emulator's
// timing model (per-core chains on shared DRAM: driver/timing/core_sim.h), so one core's
// fixed task cost overlaps the other cores' weight streams.
//
// What is chosen: per matmul, how many column parts its plan has (matmul::make_plan with
// `cores` = parts: 1 keeps it whole, e.g. k or v on one core; 3 is today's split) and, for
// int4, whether its full K-slices run stacked (matmul::PlanOptions::stack: the columns of
// several slices in one task), also in the fewest tasks (matmul::stack_in_fewest_tasks),
// every combination tried, and of the ones within kFewerTasksTolerance of the least modelled
// time the one with the fewest tasks kept. Each combination is placed twice: its tasks one by
// one by the scheduler, longest first, and on the cores its plans name.
//
// Fused (docs/execution.md "Fused groups"): the matmuls of a group that read one A may also be
// priced as one matmul of K x the sum of their N, their weights side by side slice by slice
// (fusable), with 1..3 column parts like any matmul; C's columns then go back to each member
// by ranges. Only when asked (`fuse`): by the executor with PlanOptions::fuse (its default;
// fusion.h) and by the projection that prices its plan (project.h).
#pragma once

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "driver/common/result.h"
#include "driver/timing/timing_model.h"
#include "lib/matmul/plan.h"

namespace ork::exec {

// One task of the group: which matmul of the group, its task in that matmul's plan.
struct PlacedTask {
  int matmul = 0;  // index into the group's shapes
  int task = 0;    // index into plans[matmul].tasks
};

struct GroupPlan {
  std::vector<int> parts;                       // per matmul: column parts of its plan
  std::vector<matmul::Plan> plans;              // per matmul, tasks' cores as placed
  std::vector<std::vector<PlacedTask>> cores;   // per core: its chain, in order
  int64_t tasks = 0;
  int64_t submits = 0;      // cores with work: one chained submit each
  double device_ns = 0;     // the timing model's time of the group (submits included)
  double weight_bytes = 0;  // weight DMA of all tasks
  // The group as one fused matmul (fusable): `plans` and `parts` hold its one plan, of K x
  // the sum of the members' N, and member j's columns of its C are [columns[j],
  // columns[j + 1]). Not fused: `columns` is empty.
  bool fused = false;
  std::vector<int64_t> columns;
};

// Whether the group's matmuls can run as one fused matmul of K x (N1 + N2 + ...): two or
// more members of one K sliced alike (int4: their widths may differ where they give the same
// slices, as 7B's q/k/v at 1344..1408 all give three of 1216; the fused plan takes the first
// member's width), every N a multiple of the dtype's weight atom. Each member's native
// weights are then, K-slice by K-slice, N-blocks outermost
// ([S][N/wa][W/32][wa][32], docs/hardware.md section 5, lib/matmul/layout.h), so slice s of
// the fused weights is every member's slice s one after another, each one contiguous range of
// its own packed tensor (fusion.h fused_pieces: the executor reads them to those places). One
// slice: the members' packed weights member after member. 7B's int4 q/k/v (three slices of
// 1216 at K = 3584) and gate/up fuse so; every down (one member) does not.
bool fusable(matmul::DType dtype, int64_t m, std::span<const std::pair<int64_t, int64_t>> shapes,
             std::span<const int64_t> slice_k = {});

// Plans within this fraction of the fastest one's modelled time count as equal, and of
// those the one with the fewest tasks is kept (the fastest of them on a tie). 1.4 % is the
// timing model's median error on a published figure left out of its fit (docs/timing-model.md,
// leave-one-out: min 0.0 / median 1.4 / max 19.3 %), so the model cannot tell such plans
// apart; and a task's fixed cost is the part it is least sure of (only the sum of the per-submit
// and per-task costs is measured, their split is an assumption), which a plan of fewer tasks
// depends on less. The plans it keeps are listed in docs/execution.md ("Fewer tasks").
inline constexpr double kFewerTasksTolerance = 0.014;

// Every plan of the group (every combination of its matmuls' plans: column parts, stacked
// or not, in the fewest tasks or not), each placed both ways and priced as plan_group does;
// with `fuse` and a fusable group, also the fused matmul's plans (fused = true); the error
// plan_group names.
Result<std::vector<GroupPlan>> group_candidates(matmul::DType dtype, int64_t m,
                                                std::span<const std::pair<int64_t, int64_t>> shapes, int cores,
                                                const timing::TimingParams& params = {},
                                                std::span<const int64_t> slice_k = {}, bool fuse = false);

// The candidate plan_group keeps: of those within kFewerTasksTolerance of the fastest, the
// fewest tasks, the fastest on a tie. `candidates` must not be empty.
size_t choose_group_plan(std::span<const GroupPlan> candidates);

// The plan of a group of matmuls (K, N each) at m rows on `cores`, priced with `params`
// (the fitted constants, or another split of the fixed cost). `slice_k`: per matmul, int4's
// K-slice width its weights were packed with (matmul::PlanOptions::slice_k; empty or 0: the
// dtype's). `fuse`: the fused plans compete too (group_candidates). Fails naming a shape no
// plan takes.
Result<GroupPlan> plan_group(matmul::DType dtype, int64_t m, std::span<const std::pair<int64_t, int64_t>> shapes,
                             int cores, const timing::TimingParams& params = {},
                             std::span<const int64_t> slice_k = {}, bool fuse = false);

// The board plan of one matmul alone (a group of one) on `cores`: its plan, tasks placed on
// plan cores 0..cores-1. The C API plans its int4 calls with it (lib/api/backend_npu.cpp),
// so a call stacks its K-slices exactly where the executor's plan would.
Result<matmul::Plan> plan_alone(matmul::DType dtype, int64_t m, int64_t k, int64_t n, int cores, int64_t slice_k = 0);

// How many row pieces the group runs as (1 or 2): the executor hands a group's rows to the
// NPU in two halves, each its own chained job of the same plan at m / 2 rows, when every
// member's plan at m rows has its M-tiles split evenly by the halves (m / 2 a multiple of
// its rows per M-tile, so each half streams the weights as often as its tiles did) and
// each half's A and C start on a whole byte. The host then packs the second half's A and
// unpacks the first half's C while the NPU runs the other half (docs/execution.md "Host
// and device overlapped"); a plan with one M-tile (decode, most int8 prefill) stays whole,
// since halving it would stream every weight twice.
int row_pieces(matmul::DType dtype, int64_t m, std::span<const std::pair<int64_t, int64_t>> shapes,
               std::span<const int64_t> slice_k = {});

// The timing model's demand of one task of a plan (weight DMA, feature and output bytes,
// MACs; driver/timing/timing_model.h make_demand).
timing::TaskDemand plan_task_demand(const matmul::Plan& plan, const matmul::Task& task);

}  // namespace ork::exec
