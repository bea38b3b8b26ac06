// libork's side of the golden comparison: the planner and the emitter, called as the
// runner calls them, on one core (the public captures are one-core, one-task programs).
#include "ork_stream.h"

#include "lib/matmul/emit.h"
#include "lib/matmul/plan.h"

namespace golden {

OrkStream ork_task_stream(const OrkRequest& r) {
  namespace M = ork::matmul;
  OrkStream out;
  M::PlanOptions opt;
  if (r.dtype == "int8") {
    opt.dtype = M::DType::int8;
  } else if (r.dtype == "fp16") {
    opt.dtype = M::DType::fp16;
  } else if (r.dtype == "int4") {
    opt.dtype = M::DType::int4;
  } else {
    out.error = "dtype " + r.dtype + ": the golden tests know int8, fp16 and int4";
    return out;
  }
  opt.cores = 1;
  opt.fp16_out = r.fp16_out;
  auto plan = M::make_plan(M::Shape{r.m, r.k, r.n}, opt);
  if (!plan.ok()) {
    out.error = "make_plan: " + plan.error().message;
    return out;
  }
  if (plan->tasks.size() != 1) {
    out.error = "the plan has " + std::to_string(plan->tasks.size()) + " tasks, the capture one";
    return out;
  }
  M::BufferIovas io;
  io.a = r.feature_iova;
  io.b = r.weight_iova;
  io.c = {r.output_iova};
  auto cc = M::emit_core(*plan, plan->tasks, io, /*regcmd_iova=*/0x10000);
  if (!cc.ok()) {
    out.error = "emit_core: " + cc.error().message;
    return out;
  }
  out.words.assign(cc->entries.begin(), cc->entries.begin() + cc->task_entries[0]);
  return out;
}

}  // namespace golden
