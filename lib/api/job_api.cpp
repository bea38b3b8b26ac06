// ork_matmul_submit, ork_job_wait, ork_job_release (ork.h "Asynchronous jobs and
// batches"): the checks of the sync call, then the call split at the kernel wait.
#include <memory>
#include <mutex>

#include <fmt/format.h>

#include "lib/api/device.h"
#include "lib/api/error.h"
#include "lib/api/job_queue.h"
#include "lib/api/matmul_t.h"
#include "lib/api/weights.h"

namespace ork::api {
namespace {

// A's CPU access ends as soon as it is packed: the caller may reuse A once submit returns.
void end_input(TensorCall& t) {
  if (t.a_started) buffer_end_cpu(*t.a_ref.buffer, false, t.call);
  t.a_started = false;
  t.a_use.reset();
  t.a_scratch = {};
}

// The step writing the call's C, taking over C's hold, scratch and CPU access from `t`.
JobStep output_step(TensorCall& t) {
  JobStep s;
  s.c_op = t.c_op;
  s.c_ref = t.c_ref;
  s.c_use = std::move(t.c_use);
  s.c_scratch = std::move(t.c_scratch);  // the vector's storage moves with it: t.c stays valid
  s.c = t.c;
  s.c_started = t.c_started;
  t.c_started = false;
  return s;
}

}  // namespace

// The NPU backend's submit (backend.h): the call as a matmul job (lib/matmul/job.h) on the
// runner's context: A packed (a job still in flight on that context completes first), the
// first slice group handed to the kernel.
ork_status submit_npu_call(driver::Kmd& kmd, matmul::MatmulRunner& runner, matmul::WeightsRef rw,
                           const matmul::RunOptions& ro, TensorCall& t, ork_job& job) {
  matmul::RunStats st;
  auto ctx = runner.acquire(rw, t.m, ro, st);
  if (!ctx) return fail(ctx.error());
  auto mm = std::make_unique<matmul::Job>(kmd, st);
  if (auto s = mm->add(std::move(*ctx), t.a, t.c); !s) return fail(s.error());
  end_input(t);
  job.steps.push_back(output_step(t));  // t.c's scratch moves with its storage: the job's C stays valid
  if (auto s = mm->submit(); !s) return fail(s.error());
  job.mm = std::move(mm);
  return ORK_OK;
}

namespace {

ork_status matmul_submit(ork_device* device, const ork_weights* weights, const ork_tensor* a, int64_t m,
                         const ork_tensor* c, const ork_matmul_options* options, ork_job** out) {
  constexpr const char* fn = "ork_matmul_submit";
  if (out == nullptr) return fail(ORK_E_INVALID_ARGUMENT, fmt::format("{}: out is NULL", fn));
  *out = nullptr;
  if (device == nullptr) return fail(ORK_E_INVALID_ARGUMENT, fmt::format("{}: device is NULL", fn));
  std::lock_guard lock(device->mutex);
  TensorCall t;
  if (auto s = begin_tensor_call(fn, device, weights, a, m, c, options, &t); s != ORK_OK) return s;
  auto job = std::make_unique<ork_job>();
  job->device = device;
  job->meter = std::make_unique<CallMeter>(*device);
  job->stats_out = t.opt.stats;
  // Handed to the NPU, or (cpu) run here, the job born complete.
  if (auto s = device->backend->submit(*weights, t, *job); s != ORK_OK) {
    const std::string why = ork_last_error();
    for (JobStep& st : job->steps)
      if (st.c_started) buffer_end_cpu(*st.c_ref.buffer, true, fn);
    finish_tensor_call(t, s);
    return fail(s, why);
  }
  jobs_of(*device).add(job.get());
  *out = job.release();
  return ok();
}

ork_status job_wait(ork_job* job, int64_t timeout_ms) {
  constexpr const char* fn = "ork_job_wait";
  if (job == nullptr) return fail(ORK_E_INVALID_ARGUMENT, fmt::format("{}: job is NULL", fn));
  if (!handle_live(HandleKind::job, job))  // checked before anything reads it (handles.h)
    return fail(ORK_E_INVALID_ARGUMENT, fmt::format("{}: not a live job (released already?)", fn));
  if (timeout_ms < -1)
    return fail(ORK_E_INVALID_ARGUMENT, fmt::format("{}: timeout_ms = {}: give -1 (no limit) or >= 0", fn, timeout_ms));
  const auto closed = [&] {
    return fail(ORK_E_INVALID_ARGUMENT, fmt::format("{}: the job's device was closed before the job was waited "
                                                    "(the close waited for it and discarded its result)", fn));
  };
  // The job's state changes under its device's mutex (another thread's submit or wait may
  // complete it), so it is read only with the mutex held; `device` changes only when the
  // device closes, which the caller may not race with a wait on the same job.
  ork_device* device = job->device;
  if (device == nullptr) return closed();
  std::lock_guard lock(device->mutex);
  if (job->state == JobState::closed || job->device == nullptr) return closed();
  if (job->waited) return fail(ORK_E_INVALID_ARGUMENT, fmt::format("{}: the job was already waited", fn));
  if (auto s = jobs_of(*device).complete_through(job, timeout_ms); s != ORK_OK) return s;
  job->waited = true;
  return job->status == ORK_OK ? ok() : fail(job->status, job->error);
}

void job_release(ork_job* job) {
  if (job == nullptr) return;
  if (!handle_dies(HandleKind::job, job)) {
    (void)fail(ORK_E_INVALID_ARGUMENT, "ork_job_release: not a live job (released already?): ignored");
    return;
  }
  if (job->device != nullptr) {
    std::lock_guard lock(job->device->mutex);
    jobs_of(*job->device).release(job);
  }
  delete job;
}

}  // namespace
}  // namespace ork::api

extern "C" {

ORK_API ork_status ork_matmul_submit(ork_device* device, const ork_weights* weights, const ork_tensor* a, int64_t m,
                                     const ork_tensor* c, const ork_matmul_options* options, ork_job** out) {
  return ork::api::guarded([&] { return ork::api::matmul_submit(device, weights, a, m, c, options, out); });
}

ORK_API ork_status ork_job_wait(ork_job* job, int64_t timeout_ms) {
  return ork::api::guarded([&] { return ork::api::job_wait(job, timeout_ms); });
}

ORK_API void ork_job_release(ork_job* job) {
  try {
    ork::api::job_release(job);
  } catch (...) {  // nothing crosses the C API; the job's memory is freed regardless
  }
}

}  // extern "C"
