// Each device's queue of asynchronous jobs (job_queue.h): completion in submission order, the
// unpack of each matmul's C at completion, release, and the device closing.
#include "lib/api/job_queue.h"

#include <algorithm>
#include <chrono>

#include <fmt/format.h>

#include "lib/api/batch.h"
#include "lib/api/device.h"
#include "lib/api/error.h"

namespace ork::api {
namespace {

using Clock = std::chrono::steady_clock;

// Milliseconds left until `deadline` (-1 stays "no limit"), never below 0.
int64_t left_ms(Clock::time_point deadline, bool forever) {
  if (forever) return -1;
  return std::max<int64_t>(0, std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now()).count());
}

// After the matmul job's outcome `result`: the C of every step scattered (unless the job
// failed or was discarded) and its CPU access ended.
ork_status finish_steps(ork_job& job, ork_status result) {
  for (JobStep& s : job.steps) {
    if (result == ORK_OK && !job.discard) scatter_output(s.c_ref, s.c_op, s.c_scratch);
    if (s.c_started) {
      const ork_status end = buffer_end_cpu(*s.c_ref.buffer, true, "ork_job_wait");
      if (result == ORK_OK) result = end;
      s.c_started = false;
    }
  }
  return result;
}

}  // namespace

void JobQueueDeleter::operator()(JobQueue* q) const { delete q; }

void JobQueue::add(ork_job* job) {
  live_.insert(job);
  if (job->state == JobState::in_flight) inflight_.push_back(job);
}

void JobQueue::settle(ork_job& job, ork_status status) {
  job.status = status;
  job.error = status == ORK_OK ? std::string() : std::string(ork_last_error());
  if (status == ORK_OK && job.meter && !job.discard) job.meter->finish(job.stats_out);
  job.state = JobState::done;
  job.mm.reset();
  job.meter.reset();
  for (JobStep& s : job.steps) {
    s.c_use.reset();
    s.c_scratch = {};
  }
}

bool JobQueue::complete_front(int64_t timeout_ms) {
  ork_job& job = *inflight_.front();
  ork_status status = ORK_OK;
  if (job.mm && job.discard) {
    job.mm->drain();  // released unwaited: C not written (unless a new call completed it)
  } else if (job.mm) {
    const Status r = job.mm->complete(timeout_ms);
    if (!r && r.error().code == -EBUSY) return false;  // still running: stays in flight
    if (!r && job.mm->failed_on_device())  // C is undefined after a failed job: not unpacked
      status = fail(r.error().code == -ETIMEDOUT ? ORK_E_TIMEOUT : ORK_E_DEVICE,
                    fmt::format("ork_job_wait: {}", r.error().message));
    else if (!r)
      status = fail(r.error());
    job.meter->run = job.mm->stats();
  }
  inflight_.pop_front();
  settle(job, finish_steps(job, status));
  return true;
}

ork_status JobQueue::complete_through(ork_job* job, int64_t timeout_ms) {
  if (job->state != JobState::in_flight) return ORK_OK;
  const bool forever = timeout_ms < 0;
  const auto deadline = Clock::now() + std::chrono::milliseconds(forever ? 0 : timeout_ms);
  while (job->state == JobState::in_flight) {
    if (inflight_.empty()) break;  // not reached: an in-flight job is queued
    if (!complete_front(left_ms(deadline, forever)))
      return fail(ORK_E_TIMEOUT, fmt::format("ork_job_wait: the job is still in flight after {} ms (wait again)",
                                             timeout_ms));
  }
  return ORK_OK;
}

void JobQueue::complete_all() {
  while (!inflight_.empty()) complete_front(-1);
}

void JobQueue::release(ork_job* job) {
  if (job->state == JobState::in_flight) {
    job->discard = true;
    complete_through(job, -1);
  }
  live_.erase(job);
}

void JobQueue::drop_weights(const ork_weights* weights) {
  complete_all();
  for (ork_batch* b : batches_) batch_weights_gone(*b, weights);
}

void JobQueue::close() {
  for (ork_job* j : inflight_) j->discard = true;
  complete_all();
  for (ork_job* j : live_) {
    if (!j->waited) j->state = JobState::closed;
    j->device = nullptr;
  }
  live_.clear();
  for (ork_batch* b : batches_) batch_device_closed(*b);
  batches_.clear();
}

}  // namespace ork::api
