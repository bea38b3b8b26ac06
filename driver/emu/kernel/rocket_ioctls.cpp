// The mainline rocket driver's ioctls, emulated (facts: docs/hardware.md section 2; the
// behaviour of rocket_job.c / rocket_gem.c as summarised in docs/kernel-interfaces.md).
#include <chrono>
#include <cstring>
#include <set>
#include <vector>

#include "driver/emu/kernel/fake_kernel_state.h"
#include "driver/os/debug.h"
#include "uapi/rocket_accel.h"

namespace ork::emu {
namespace {

using Clock = std::chrono::steady_clock;                      // CLOCK_MONOTONIC in libstdc++
constexpr auto kJobTimeout = std::chrono::milliseconds(500);  // rocket_job.c JOB_TIMEOUT_MS

struct JobRef {
  std::vector<drm_rocket_task> tasks;
  std::vector<std::shared_ptr<BoObject>> out_bos;
};

int lookup_handles(IoctlContext& ctx, uint64_t user, uint32_t count,
                   std::vector<std::shared_ptr<BoObject>>* bos) {
  if (count && !user) return -EFAULT;
  const auto* handles = reinterpret_cast<const uint32_t*>(user);
  for (uint32_t i = 0; i < count; ++i) {
    std::shared_ptr<BoObject> bo = ctx.kernel.lookup(ctx.file, handles[i]);
    if (!bo) return -ENOENT;  // drm_gem_objects_lookup
    if (bos) bos->push_back(std::move(bo));
  }
  return 0;
}

// rocket_ioctl_submit_job + rocket_copy_tasks: the checks a job must pass to be queued.
int copy_job(IoctlContext& ctx, const drm_rocket_job& job, JobRef* out) {
  if (job.task_count == 0) return -EINVAL;
  if (job.task_struct_size < sizeof(drm_rocket_task)) return -EINVAL;
  if (!job.tasks) return -EFAULT;
  for (uint32_t i = 0; i < job.task_count; ++i) {
    drm_rocket_task task;
    std::memcpy(
        &task,
        reinterpret_cast<const uint8_t*>(job.tasks) + static_cast<size_t>(i) * job.task_struct_size,
        sizeof(task));
    if (task.regcmd_count == 0) return -EINVAL;
    out->tasks.push_back(task);
  }
  if (int rc = lookup_handles(ctx, job.in_bo_handles, job.in_bo_handle_count, nullptr)) return rc;
  return lookup_handles(ctx, job.out_bo_handles, job.out_bo_handle_count, &out->out_bos);
}

// The drm_sched entity picks the least-loaded core's scheduler. Jobs finish inside the
// submit here, so "load" is approximated by the jobs each core has run: successive jobs
// spread over the cores (see docs/kernel-interfaces.md for what the real entity may do).
int pick_core(const KernelState& k) {
  int best = 0;
  for (int c = 1; c < k.config.cores; ++c) {
    if (k.stats.rocket_jobs[static_cast<size_t>(c)] <
        k.stats.rocket_jobs[static_cast<size_t>(best)])
      best = c;
  }
  return best;
}

// One task per PC kick (rocket_job_hw_submit: TASK_NUMBER 1), re-kicked from the IRQ.
// `touched`: BOs an earlier job of this SUBMIT wrote. A BO's fences accumulate, and
// PREP_BO waits for all of them: its outcome is the first failure among this submit's jobs.
void run_job(IoctlContext& ctx, JobRef& job, std::set<const BoObject*>& touched) {
  KernelState& k = ctx.kernel;
  const Clock::time_point submitted = Clock::now();  // the modelled time starts here
  int core = pick_core(k);
  ++k.stats.rocket_jobs[static_cast<size_t>(core)];
  k.begin_job(core);
  timing::CoreWork work{.core = core};  // for the timing model (driver/emu/npu/timeline.h)
  int status = 0;
  for (const drm_rocket_task& task : job.tasks) {
    ChainResult r = k.run_chain(ctx.file.space->memory, core, task.regcmd, task.regcmd_count, 1);
    add_chain(work, r);
    if (r.status != CoreStatus::ok) {
      driver::debug_log("emu", "rocket core {}: regcmd 0x{:x} failed: {}", core, task.regcmd,
                        r.message);
      // A wedge times out after 500 ms; a DMA error does too on the real kernel (its IRQ
      // handler only WARNs on the DMA bits). Either way the core is reset.
      status = r.status == CoreStatus::wedged ? -ETIMEDOUT : -EIO;
      k.reset_core(core);
      break;
    }
  }
  // Timed mode: the job is ready when its core's timeline says (or after the timeout).
  Clock::time_point ready = Clock::now();
  if (k.config.timing == TimingMode::timed) {
    ready = status ? ready + Clock::duration(kJobTimeout)
                   : k.timeline.schedule(std::span<const timing::CoreWork>(&work, 1), true, submitted).done;
  }
  for (auto& bo : job.out_bos) {
    bool first_writer = touched.insert(bo.get()).second;
    if (first_writer || bo->job_status == 0) bo->job_status = status;
    if (first_writer || ready > bo->ready_at) bo->ready_at = ready;
  }
}

}  // namespace

int handle_rocket_create_bo(IoctlContext& ctx) {
  auto* args = static_cast<drm_rocket_create_bo*>(ctx.arg);
  if (args->size == 0) return -EINVAL;
  uint32_t handle = 0;
  // rocket BOs are shmem pages with cached CPU mappings: PREP_BO / FINI_BO sync them.
  if (int rc = ctx.kernel.create_bo(ctx.file, args->size, 0, /*cached=*/true, &handle)) return rc;
  std::shared_ptr<BoObject> bo = ctx.kernel.lookup(ctx.file, handle);
  args->handle = handle;
  args->dma_address = bo->iova;
  args->offset = bo->mmap_offset();
  return 0;
}

int handle_rocket_submit(IoctlContext& ctx) {
  auto* args = static_cast<drm_rocket_submit*>(ctx.arg);
  if (args->job_count == 0) return 0;
  if (args->job_struct_size < sizeof(drm_rocket_job) || args->reserved) return -EINVAL;
  if (!args->jobs) return -EFAULT;
  ++ctx.kernel.stats.submits;
  std::set<const BoObject*> touched;
  for (uint32_t i = 0; i < args->job_count; ++i) {
    drm_rocket_job job;
    std::memcpy(&job,
                reinterpret_cast<const uint8_t*>(args->jobs) +
                    static_cast<size_t>(i) * args->job_struct_size,
                sizeof(job));
    JobRef ref;
    if (int rc = copy_job(ctx, job, &ref)) {
      // The quirk: rocket_ioctl_submit ignores each job's result, so a bad job is dropped
      // and the ioctl still returns 0.
      ++ctx.kernel.stats.rocket_jobs_dropped;
      driver::debug_log("emu", "rocket: job {} dropped ({}), ioctl returns 0", i, rc);
      continue;
    }
    run_job(ctx, ref, touched);
  }
  return 0;
}

int handle_rocket_prep_bo(IoctlContext& ctx) {
  auto* args = static_cast<drm_rocket_prep_bo*>(ctx.arg);
  if (args->reserved) return -EINVAL;
  std::shared_ptr<BoObject> bo = ctx.kernel.lookup(ctx.file, args->handle);
  if (!bo) return -ENOENT;
  ++ctx.kernel.stats.syncs;
  bo->sync_to_cpu(0, bo->bytes);  // dma_sync_sgtable_for_cpu: done whether the wait succeeds
  Clock::time_point deadline{std::chrono::nanoseconds(args->timeout_ns)};
  Clock::time_point now = Clock::now();
  // Timed mode (or a test's hold, Faults::hold_jobs): the job is still "running".
  const Clock::time_point ready = ctx.kernel.faults.hold_jobs ? Clock::time_point::max() : bo->ready_at;
  if (ready > now) {
    if (ready > deadline) {
      ctx.sleep_until = deadline;
      return deadline > now ? -ETIMEDOUT : -EBUSY;  // like rocket_ioctl_prep_bo
    }
    ctx.sleep_until = bo->ready_at;
  }
  // The real kernel returns 0 here even for a job that timed out or faulted (the fence is
  // signalled by the reset, its error is not looked at). The emulator reports the failure.
  return bo->job_status;
}

int handle_rocket_fini_bo(IoctlContext& ctx) {
  auto* args = static_cast<drm_rocket_fini_bo*>(ctx.arg);
  if (args->reserved) return -EINVAL;
  std::shared_ptr<BoObject> bo = ctx.kernel.lookup(ctx.file, args->handle);
  if (!bo) return -ENOENT;
  bo->sync_to_device(0, bo->bytes);  // dma_sync_sgtable_for_device
  ++ctx.kernel.stats.syncs;
  return 0;
}

}  // namespace ork::emu
