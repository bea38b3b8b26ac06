// A stacked int4 plan in the fewest tasks (docs/execution.md "Stacked K-slices"): the C'
// columns of its S full slices, S x np, in ceil(S x np / 8192) tasks (a task writes at most
// kMaxColumnsPerTask columns, DPU DATA_CUBE_CHANNEL: docs/hardware.md section 5), spread over
// the cores as evenly as those tasks allow. make_plan's stacked plan splits the columns
// evenly over the cores first and each core's share into tasks after, which costs a task a
// core whenever a share is not a whole number of tasks (7B's down at decode: 9 tasks on 3
// cores where 7 hold its 50176 columns).
#pragma once

#include "driver/common/result.h"
#include "lib/matmul/plan.h"

namespace ork::matmul {

// Rebuilds the tasks of `plan`, a stacked plan whose every slice is full, on at most `cores`
// cores: T = ceil(S x np / 8192) tasks, core c given n_c of them (T split evenly over the
// cores, the first cores one more), and a column range as near an equal share as n_c tasks
// of at most 8192 columns hold (the cores with fewer tasks filled first; the rest shared by
// the others), split into its n_c tasks evenly. Each task's rows are those of the slices its
// columns belong to, as in make_plan's. Fails naming a plan that is not stacked or has a
// narrower last slice, and a core count outside 1..3.
Status stack_in_fewest_tasks(Plan& plan, int cores);

}  // namespace ork::matmul
