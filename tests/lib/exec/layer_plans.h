// Shared by the lib/exec tests that run int4 layers: the board plan of each group of a packed
// model's layer 0, as the executor chains it (DeviceCalls: plan_group at the tensors' own
// widths), and how many of its matmuls run in the fewest-task layout
// (matmul::stack_in_fewest_tasks: fewer tasks than make_plan's stacked split on as many parts).
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <utility>
#include <vector>

#include "lib/exec/board_plan.h"
#include "lib/exec/pack_file.h"
#include "lib/exec/project.h"

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

}  // namespace ork::exec::testing
