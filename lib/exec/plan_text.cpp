// The plan in ork_sched's text format (plan_text.h).
#include "lib/exec/plan_text.h"

#include <fmt/format.h>

#include "lib/sched/parse.h"

namespace ork::exec {

Result<std::string> format_plan(const ExecPlan& plan, const PlanOptions& o, const std::string& model_path) {
  for (const sched::Buffer& b : plan.stream.buffers)
    if (b.name.find_first_of(" \t\r\n\v\f#,[]:=") != std::string::npos)
      return make_error(-EINVAL, fmt::format("the plan cannot be written in ork_sched's text format: buffer \"{}\" "
                                             "(a matmul name) holds a blank or one of # , [ ] : =", b.name));
  // A comment says a newline ends it: a model path cannot break the file.
  std::string path = model_path;
  for (char& c : path)
    if (c == '\n' || c == '\r') c = ' ';
  std::string head = fmt::format(
      "# ork_run plan of {}: {} tokens of m = {}, order {} (policy {}), ops in the plan's input order\n"
      "# predicted_ns {} lower_bound_ns {} (1 cycle = 1 ns; `ork_sched FILE` chooses the order the executor runs,\n"
      "# at this makespan, with the executor's own chooser: the 'slots' and 'policy' lines below)\n"
      "# slots {} of {} bytes in all, budget {} bytes, NPU window {} bytes, list cap {} bytes, pinned {} bytes\n",
      path, o.tokens, o.m, order_name(plan.order_kind), plan.policy, plan.predicted_ns, plan.lower_bound_ns,
      plan.slot_bytes.size(), plan.slot_total, o.budget_bytes, o.window_bytes, plan.cap_bytes, plan.pinned_bytes);
  sched::append_stream_text(head, plan.stream);  // the stream's text after the header, not a copy of both
  return head;
}

}  // namespace ork::exec
