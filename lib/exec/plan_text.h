// The plan as ork_sched reads it (docs/execution.md "The plan", docs/sched.md section 2):
// the plan's sched::Stream written in the text format with its ops in the order the
// executor runs them, so that `ork_sched FILE` prices that order as its input order (its
// makespan_input is the plan's predicted_ns: the same simulate_order on the same ops) and
// its pictures (--svg, --trace) draw it beside the order ork_sched would choose itself.
#pragma once

#include <string>

#include "driver/common/result.h"
#include "lib/exec/plan.h"

namespace ork::exec {

// The stream with its ops permuted into plan.order (start / wait pairs relinked by
// finalize_stream), led by '#' comment lines naming the model, the order, its policy, the
// predicted time and lower bound (ns = cycles) and the slots. A matmul whose name holds a
// character the format reads as a separator (blanks, '#', ',', '[', ']', ':', '=') is
// refused, named: its buffer and op names would read back as other ones.
Result<std::string> format_plan(const ExecPlan& plan, const PlanOptions& options, const std::string& model_path);

}  // namespace ork::exec
