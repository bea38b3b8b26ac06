// Shared by the lib/exec tests that run int4 layers: the board plan of each group of a packed
// model's layer 0, as the executor chains it (DeviceCalls: plan_group at the tensors' own
// widths), and how many of its matmuls run in the fewest-task layout
// (matmul::stack_in_fewest_tasks: fewer tasks than make_plan's stacked split on as many parts);
// one plan built and run on emu and on emu-rocket (plan_and_run_on_both); and one synthetic
// int4 layer run so at decode against the CPU reference (run_int4_layer), each test keeping its
// own assertions on what the run reports.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "driver/emu/kernel/fake_kernel.h"
#include "lib/api/device.h"
#include "lib/exec/board_plan.h"
#include "lib/exec/chain_reference.h"
#include "lib/exec/executor.h"
#include "lib/exec/pack_file.h"
#include "lib/exec/project.h"
#include "lib/exec/synthetic.h"
#include "tests/lib/exec/exec_util.h"

namespace ork::exec::testing {

struct LayerPlans {
  std::vector<GroupPlan> groups;
  int64_t tasks = 0;
  int fewest = 0;
};

inline LayerPlans layer_plans(const PackedModel& model, int64_t m, int cores) {
  LayerPlans out;
  for (const BatchGroup& bg : batch_groups(model.desc)) {
    std::vector<std::pair<int64_t, int64_t>> shapes;
    std::vector<int64_t> widths;
    for (int j : bg.matmuls) {
      shapes.emplace_back(model.desc.matmuls[static_cast<size_t>(j)].k, model.desc.matmuls[static_cast<size_t>(j)].n);
      widths.push_back(model.tensor(0, j).slice_k);
    }
    auto g = plan_group(model.desc.dtype, m, shapes, cores, {}, widths);
    EXPECT_TRUE(g) << g.error().message;
    if (!g) return out;
    for (size_t j = 0; j < shapes.size(); ++j) {
      const matmul::Plan& p = g->plans[j];
      auto split = matmul::make_plan({m, shapes[j].first, shapes[j].second},
                                     {.dtype = model.desc.dtype, .cores = g->parts[j], .slice_k = widths[j], .stack = true});
      EXPECT_TRUE(split);
      if (split && p.stacked && p.tasks.size() < split->tasks.size()) ++out.fewest;
    }
    out.tasks += g->tasks;
    out.groups.push_back(std::move(*g));
  }
  return out;
}

// One device's run of a plan: what the executor returned and the int4 cells the emulated NPU
// clamped during the run (int16 partials saturated).
struct DeviceRun {
  std::string device;
  RunOutput out;
  uint64_t saturated_cells = 0;
};

// Builds the plan of `o` for `model` (the plan does not depend on the device) and runs it from
// `path` on emu, then emu-rocket, each on 3 cores with RunOptions' defaults (two matmuls in
// flight, each group as its board plan). Call under ASSERT_NO_FATAL_FAILURE: a step that fails
// stops the test.
inline void plan_and_run_on_both(const std::string& path, const PackedModel& model, const PlanOptions& o,
                                 std::vector<DeviceRun>& out) {
  auto plan = build_plan(model, o);
  ASSERT_TRUE(plan) << plan.error().message;
  for (const char* device : {"emu", "emu-rocket"}) {
    auto dev = api::open_device(device);
    ASSERT_TRUE(dev) << dev.error().message;
    const uint64_t clamped = (*dev)->fake->stats().int4_saturated_cells;
    auto run = run_plan(path, model, *plan, o, api::exec_device(**dev, 3), RunOptions{});
    ASSERT_TRUE(run) << device << ": " << run.error().message;
    out.push_back({device, std::move(*run), (*dev)->fake->stats().int4_saturated_cells - clamped});
  }
}

// One device's run of an int4 layer: what the executor reports, the int4 cells the emulated
// NPU clamped during the run, and the chain against the reference.
struct Int4LayerRun {
  std::string device;
  RunStats stats;
  uint64_t saturated_cells = 0;
  Status same = Status::success();
};

struct Int4Layer {
  PackedModel model;
  LayerPlans plans;  // on 3 cores at M = 1, the plans the runs chain
  std::vector<Int4LayerRun> runs;  // emu, then emu-rocket
};

// Writes the synthetic model `name` (one layer, int4, ork_pack's `seed`) to `file` in the
// scratch directory, takes the CPU reference of two decode tokens, then builds and runs the
// plan (M = 1, 3 cores, every tensor resident, two matmuls in flight) on emu and emu-rocket.
// Call under ASSERT_NO_FATAL_FAILURE: a step that fails stops the test.
inline void run_int4_layer(const char* name, const std::string& file, uint64_t seed, Int4Layer& out) {
  auto d = synthetic_desc(name, 1, matmul::DType::int4);
  ASSERT_TRUE(d);
  const std::string path = scratch(file);
  ASSERT_TRUE(write_synthetic(path, *d, seed));
  auto model = read_packed(path);
  ASSERT_TRUE(model) << model.error().message;
  out.model = std::move(*model);
  out.plans = layer_plans(out.model, 1, 3);
  auto want = reference_chain(path, out.model, 1, 2);
  ASSERT_TRUE(want) << want.error().message;
  PlanOptions o;
  o.m = 1;
  o.tokens = 2;
  o.cores = 3;
  o.budget_bytes = out.model.weight_bytes() * 2;
  std::vector<DeviceRun> runs;
  ASSERT_NO_FATAL_FAILURE(plan_and_run_on_both(path, out.model, o, runs));
  for (DeviceRun& r : runs)
    out.runs.push_back({r.device, r.out.stats, r.saturated_cells, compare_chains(out.model, r.out.chain, *want)});
}

}  // namespace ork::exec::testing
