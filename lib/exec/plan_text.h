// The plan as ork_sched reads it (docs/execution.md "The plan", docs/sched.md section 2):
// the plan's sched::Stream written in the text format in its input order, with the lines
// that tell the chooser the executor's memory and rule (`slots`, `policy`), so that
// `ork_sched FILE` runs the executor's own chooser (lib/sched/chooser.h) and reports exactly
// the order the executor runs and its predicted_ns as the makespan; its pictures (--svg,
// --trace) draw the input order beside it.
#pragma once

#include <string>

#include "driver/common/result.h"
#include "lib/exec/exec_plan.h"

namespace ork::exec {

// The stream, led by '#' comment lines naming the model, the order, its policy, the
// predicted time and lower bound (ns = cycles) and the slots. A matmul whose name holds a
// character the format reads as a separator (blanks, '#', ',', '[', ']', ':', '=') is
// refused, named: its buffer and op names would read back as other ones.
Result<std::string> format_plan(const ExecPlan& plan, const PlanOptions& options, const std::string& model_path);

}  // namespace ork::exec
