// The vendor rknpu backend's submit path: a task BO of rknpu_task entries, SUBMIT in PC mode
// with per-core task ranges, blocking or NONBLOCK with a fence out, and the wait on fences
// (facts: docs/hardware.md sections 1 and 8).
#include <fmt/format.h>
#include <poll.h>

#include <algorithm>

#include "driver/kmd/rknpu_kmd.h"
#include "driver/os/debug.h"
#include "driver/os/ioctl.h"
#include "uapi/rknpu_ioctl.h"

namespace ork::driver::rknpu {
namespace {

// PC mode, blocking, with ping-pong as MTX and librknnrt submit (flags 5), known to run on
// silicon. Asynchronous jobs add NONBLOCK | FENCE_OUT (rknpu_submit_ioctl in the vendor's
// rknpu_job.c: the ioctl returns once the job is queued, fence_fd is a sync_file signalled
// from the job's completion interrupt).
constexpr uint32_t kSubmitFlags = RKNPU_JOB_PC | RKNPU_JOB_BLOCK | RKNPU_JOB_PINGPONG;
constexpr uint32_t kAsyncFlags = kSubmitFlags | RKNPU_JOB_NONBLOCK | RKNPU_JOB_FENCE_OUT;

}  // namespace

// subcore_task: 1 or 2 cores read entry [core], 3 cores entry [core + 2] (VND rknpu_job.c).
Status RknpuKmd::submit_ranges(const Bo& task_bo, std::span<const Range> ranges, uint32_t timeout_ms,
                               uint32_t flags, SubmitResult* out, int* fence_fd) {
  rknpu_submit args{};
  args.flags = flags;
  args.timeout = timeout_ms;
  args.task_obj_addr = task_bo.obj_addr();
  // The kernel switches the NPU to this domain before the job (VND rknpu_job.c
  // rknpu_submit_ioctl): the job's regcmd, A, weights and C are all this window's BOs.
  args.iommu_domain_id = static_cast<uint32_t>(window_);
  args.task_start = ranges.front().start;
  args.fence_fd = -1;
  for (const Range& r : ranges) {
    size_t index =
        ranges.size() == 3 ? static_cast<size_t>(r.core) + 2 : static_cast<size_t>(r.core);
    args.subcore_task[index] = {r.start, r.number};
    args.core_mask |= 1u << r.core;
    args.task_number += r.number;
  }
  // task_counter is the kernel's progress report (IOWR: copied back on failure too). A
  // sentinel tells a job that ran and failed (counter written) from an ioctl refused before
  // any job ran (counter untouched), so an EIO of the second kind is not called a job fault.
  constexpr uint32_t kNoReport = UINT32_MAX;
  args.task_counter = kNoReport;
  int rc = ioctl_retry(os_, fd_.get(), DRM_IOCTL_RKNPU_SUBMIT, &args);
  if (flags & RKNPU_JOB_NONBLOCK) {  // queued, not run: nothing to count yet
    if (rc) return make_error(rc, fmt::format("RKNPU_SUBMIT (NONBLOCK) refused: {}", errno_text(rc)));
    if (fence_fd) *fence_fd = args.fence_fd;
    return Status::success();
  }
  const bool reported = args.task_counter != kNoReport;
  if (!reported) args.task_counter = 0;
  out->tasks_completed += rc ? args.task_counter : args.task_number;
  const bool again = timed_out_before_;
  timed_out_before_ = rc == -ETIMEDOUT;
  if (rc == -ETIMEDOUT) {
    return make_error(rc,
                      fmt::format("RKNPU_SUBMIT (core_mask 0x{:x}) timed out after {} ms: {} of "
                                  "{} tasks completed; the kernel soft-reset the NPU{}",
                                  args.core_mask, timeout_ms, args.task_counter, args.task_number,
                                  again ? "; the previous submit timed out too: a core is still "
                                          "wedged after its reset"
                                        : ""));
  }
  if (rc == -EIO && reported) {
    return make_error(rc, fmt::format("RKNPU_SUBMIT (core_mask 0x{:x}): the job faulted (DMA or "
                                      "configuration error) after {} of {} tasks",
                                      args.core_mask, args.task_counter, args.task_number));
  }
  if (rc) {
    return make_error(rc, fmt::format("RKNPU_SUBMIT (core_mask 0x{:x}) failed before any job ran: {}",
                                      args.core_mask, errno_text(rc)));
  }
  out->hw_elapse_ns = std::max<int64_t>(out->hw_elapse_ns, 0) + args.hw_elapse_time;
  return Status::success();
}

Result<SubmitResult> RknpuKmd::submit_blocking(const Bo& tasks, const FlatJob& flat) {
  auto start = std::chrono::steady_clock::now();
  const FlatHead head = flat_head(flat);
  SubmitResult result;
  for (uint32_t k = 0; k < head.kicks; ++k) {
    const Kick kick = flat_kick(flat, k);
    if (Status st = submit_ranges(tasks, kick.view(), head.timeout_ms, kSubmitFlags, &result); !st) return st.error();
  }
  result.wall_ns = elapsed_ns(start);
  return result;
}

Result<SubmitResult> RknpuKmd::submit(const SubmitDesc& desc) {
  if (Status st = validate_submit(*this, desc, info_.cores); !st) return st.error();
  auto flat = lay_flat(desc);
  if (!flat) return flat.error();
  return submit_flat(desc, *flat);
}

// The per-call path of a checked job: the flat job's task records into the one task BO of
// blocking submits, and its ioctls; nothing of the descriptor is read, nothing allocated.
Result<SubmitResult> RknpuKmd::submit_flat(const SubmitDesc& desc, const FlatJob& flat) {
  if (stuck_cores_ & flat_head(flat).core_mask) {  // reap the overrun job first: a NONBLOCK submit does (rknpu_kmd.h)
    auto job = submit_async_flat(desc, flat);
    if (!job) return job.error();
    return wait(**job, -1);
  }
  if (Status st = write_tasks(flat, task_bo_); !st) return st.error();
  return submit_blocking(*task_bo_, flat);
}

Status RknpuKmd::kick_async(RknpuPending& job, const FlatJob& flat) {
  SubmitResult unused;
  const uint32_t kicks = flat_head(flat).kicks;
  for (uint32_t k = 0; k < kicks; ++k) {
    const Kick kick = flat_kick(flat, k);
    int fence = -1;
    if (Status st = submit_ranges(*job.tasks, kick.view(), job.timeout_ms, kAsyncFlags, &unused, &fence); !st)
      return st;
    job.fences.emplace_back(os_, fence);
    for (const Range& r : kick.view()) stuck_cores_ &= ~(1u << r.core);  // this submit reaped them
    if (fence < 0) return make_error(-EIO, "RKNPU_SUBMIT (NONBLOCK | FENCE_OUT) returned no fence fd");
  }
  return Status::success();
}

Result<std::unique_ptr<PendingJob>> RknpuKmd::submit_async(const SubmitDesc& desc) {
  if (Status st = validate_submit(*this, desc, info_.cores); !st) return st.error();
  auto flat = lay_flat(desc);
  if (!flat) return flat.error();
  return submit_async_flat(desc, *flat);
}

// The asynchronous path of a checked job: the flat job's task records into the job's own task
// BO (a spare one reused), and its NONBLOCK ioctls; nothing of the descriptor is read.
Result<std::unique_ptr<PendingJob>> RknpuKmd::submit_async_flat(const SubmitDesc&, const FlatJob& flat) {
  const FlatHead head = flat_head(flat);
  auto job = std::make_unique<RknpuPending>();
  job->start = std::chrono::steady_clock::now();
  job->timeout_ms = head.timeout_ms;
  job->deadline = job->start + std::chrono::milliseconds(head.timeout_ms);
  job->core_mask = head.core_mask;
  job->task_number = head.tasks;
  if (!spare_tasks_.empty()) {
    job->tasks = std::move(spare_tasks_.back());
    spare_tasks_.pop_back();
  }
  if (Status st = write_tasks(flat, job->tasks); !st) return st.error();
  if (fences_) {
    Status st = kick_async(*job, flat);
    if (st) return std::unique_ptr<PendingJob>(std::move(job));
    // -EINVAL on the first kick with nothing queued: FENCE_OUT is not built in (the vendor's
    // #else branch). Later kicks failing would leave earlier ones queued: report those.
    if (st.error().code != -EINVAL || job->fences.size() != 0) return st.error();
    auto blocking = submit_blocking(*job->tasks, flat);
    if (!blocking && blocking.error().code == -EINVAL) return blocking.error();  // not the fences
    fences_ = false;
    debug_log("kmd", "rknpu: FENCE_OUT refused (no CONFIG_ROCKCHIP_RKNPU_FENCE): async jobs block at submit");
    job->outcome = std::move(blocking);
    return std::unique_ptr<PendingJob>(std::move(job));
  }
  job->outcome = submit_blocking(*job->tasks, flat);
  return std::unique_ptr<PendingJob>(std::move(job));
}

Result<SubmitResult> RknpuKmd::wait(PendingJob& pending, int64_t timeout_ms) {
  auto& job = static_cast<RknpuPending&>(pending);
  if (job.finished) return make_error(-EALREADY, "rknpu job: already waited");
  using Clock = std::chrono::steady_clock;
  for (UniqueFd& fence : job.fences) {
    while (fence.get() >= 0) {
      // Poll for the caller's time or up to the job's deadline, whichever comes first. A
      // zero return for the deadline's poll means the job overran (the fake kernel's fast
      // mode reports an overrun without sleeping, so the clock is not asked again).
      const auto left = std::chrono::ceil<std::chrono::milliseconds>(job.deadline - Clock::now()).count();
      const int64_t to_deadline = std::max<int64_t>(left, 0);
      const bool caller_first = timeout_ms >= 0 && timeout_ms < to_deadline;
      pollfd p{.fd = fence.get(), .events = POLLIN, .revents = 0};
      int r = os_.poll(&p, 1, static_cast<int>(caller_first ? timeout_ms : to_deadline));
      if (r == -EINTR) continue;
      if (r < 0) return make_error(r, fmt::format("poll on an rknpu fence failed: {}", errno_text(r)));
      if (r > 0) {
        fence.reset();
        continue;
      }
      if (caller_first)
        return make_error(-EBUSY, fmt::format("rknpu job (core_mask 0x{:x}) not finished within {} ms; still in flight",
                                              job.core_mask, timeout_ms));
      job.finished = true;
      stuck_cores_ |= job.core_mask;
      Status reset_status = reset();  // stop the cores now; the kernel reaps the job at the next NONBLOCK submit
      return make_error(-ETIMEDOUT, fmt::format("rknpu NONBLOCK job (core_mask 0x{:x}, {} tasks) timed out after {} ms; "
                                                "the NPU was soft-reset{}",
                                                job.core_mask, job.task_number, job.timeout_ms,
                                                reset_status ? "" : " (ACT_RESET failed: " + reset_status.error().message + ")"));
    }
  }
  job.finished = true;
  spare_tasks_.push_back(std::move(job.tasks));
  if (job.outcome) return std::move(*job.outcome);
  SubmitResult result;
  result.tasks_completed = job.task_number;
  result.hw_elapse_ns = -1;  // a NONBLOCK job's hw_elapse_time stays in the kernel's copy of the args
  result.wall_ns = elapsed_ns(job.start);
  return result;
}

}  // namespace ork::driver::rknpu
