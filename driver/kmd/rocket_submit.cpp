// The mainline rocket backend's submit path: one drm_rocket_job per CoreJob in one
// ROCKET_SUBMIT, PREP_BO on the out BOs to wait (docs/hardware.md section 2), and the flat
// job (Kmd::lay_flat; rocket_kmd.h RocketFlatHead) a checked job is submitted from.
#include <fmt/format.h>

#include <climits>
#include <cstring>

#include "driver/common/npu_cores.h"
#include "driver/kmd/rocket_kmd.h"
#include "driver/os/ioctl.h"
#include "uapi/rocket_accel.h"

namespace ork::driver::rocket {
namespace {

RocketFlatHead rocket_head(const FlatJob& flat) {
  RocketFlatHead head;
  std::memcpy(&head, flat.data(), sizeof head);
  return head;
}

// The 32-bit words after the head: task counts, in handles, out handles, then the tasks.
const uint32_t* rocket_words(const FlatJob& flat) {
  return reinterpret_cast<const uint32_t*>(flat.data() + sizeof(RocketFlatHead));
}

std::span<const uint32_t> rocket_outs(const FlatJob& flat, const RocketFlatHead& head) {
  return {rocket_words(flat) + head.jobs + head.ins, head.outs};
}

}  // namespace

// `desc` is valid (validate_submit): at most one job per core.
Result<FlatJob> RocketKmd::lay_flat(const SubmitDesc& desc) const {
  size_t tasks = 0;  // counted wide: the flat size is checked before any count is narrowed
  for (const CoreJob& job : desc.jobs) tasks += job.tasks.size();
  static_assert(sizeof(drm_rocket_task) == 2 * sizeof(uint32_t) && sizeof(RocketFlatHead) % 4 == 0);
  const size_t words = desc.jobs.size() + desc.in_bos.size() + desc.out_bos.size() + 2 * tasks;
  auto made = FlatJob::make(sizeof(RocketFlatHead) + words * sizeof(uint32_t));
  if (!made) return made.error();
  FlatJob& flat = *made;
  const RocketFlatHead head{.jobs = static_cast<uint32_t>(desc.jobs.size()),
                            .ins = static_cast<uint32_t>(desc.in_bos.size()),
                            .outs = static_cast<uint32_t>(desc.out_bos.size()),
                            .tasks = static_cast<uint32_t>(tasks),
                            .timeout_ms = desc.timeout_ms};
  std::memcpy(flat.data(), &head, sizeof head);
  std::byte* at = flat.data() + sizeof head;
  auto put = [&at](uint32_t word) {
    std::memcpy(at, &word, sizeof word);
    at += sizeof word;
  };
  for (const CoreJob& job : desc.jobs) put(static_cast<uint32_t>(job.tasks.size()));
  for (const Bo* bo : desc.in_bos) put(bo->handle());
  for (const Bo* bo : desc.out_bos) put(bo->handle());
  for (const CoreJob& job : desc.jobs)
    for (const TaskRef& t : job.tasks) {
      put(static_cast<uint32_t>(t.regcmd_iova));  // below 4 GiB (validate_submit)
      put(t.regcmd_entries);
    }
  return made;
}

// One job per CoreJob; the kernel picks its core (CoreJob::core only shapes the split).
// Every job names every out BO, so the kernel's implicit fences order jobs that write the
// same BO; see docs/kernel-interfaces.md.
Status RocketKmd::kick(const FlatJob& flat) {
  const RocketFlatHead head = rocket_head(flat);
  if (head.outs == 0) return make_error(-EINVAL, "submit: rocket waits on the out BOs (PREP_BO); out_bos is empty");
  const uint32_t* counts = rocket_words(flat);
  const uint32_t* ins = counts + head.jobs;
  const uint32_t* outs = ins + head.ins;
  const uint32_t* task = outs + head.outs;
  drm_rocket_job jobs[hw::kNpuCores]{};
  for (uint32_t j = 0; j < head.jobs; ++j) {
    jobs[j] = drm_rocket_job{reinterpret_cast<uintptr_t>(task), reinterpret_cast<uintptr_t>(ins),
                             reinterpret_cast<uintptr_t>(outs), counts[j], sizeof(drm_rocket_task), head.ins,
                             head.outs};
    task += 2 * size_t{counts[j]};
  }
  drm_rocket_submit args{reinterpret_cast<uintptr_t>(jobs), head.jobs, sizeof(drm_rocket_job), 0};
  int rc = ioctl_retry(os_, fd_.get(), DRM_IOCTL_ROCKET_SUBMIT, &args);
  if (rc) return make_error(rc, fmt::format("ROCKET_SUBMIT refused: {}", errno_text(rc)));
  return Status::success();
}

Result<SubmitResult> RocketKmd::submit(const SubmitDesc& desc) {
  if (Status st = validate_submit(*this, desc, info_.cores); !st) return st.error();
  auto flat = lay_flat(desc);
  if (!flat) return flat.error();
  return submit_flat(desc, *flat);
}

// The per-call path of a checked job: the submit and the waits read only the flat job, and
// allocate nothing.
Result<SubmitResult> RocketKmd::submit_flat(const SubmitDesc&, const FlatJob& flat) {
  const auto start = std::chrono::steady_clock::now();
  const RocketFlatHead head = rocket_head(flat);
  if (Status st = kick(flat); !st) return st.error();
  const int64_t deadline_ns = monotonic_ns() + int64_t{head.timeout_ms} * 1'000'000;
  const auto waiting = std::chrono::steady_clock::now();
  size_t next = 0;
  bool finished = false;
  if (Status st = wait_outs(rocket_outs(flat, head), next, deadline_ns, head.timeout_ms, -1, finished); !st)
    return st.error();
  SubmitResult result;
  result.tasks_completed = head.tasks;
  result.wall_ns = elapsed_ns(start);
  result.wait_ns = elapsed_ns(waiting);  // the PREP_BO waits of this call
  return result;
}

Result<std::unique_ptr<PendingJob>> RocketKmd::submit_async(const SubmitDesc& desc) {
  if (Status st = validate_submit(*this, desc, info_.cores); !st) return st.error();
  auto flat = lay_flat(desc);
  if (!flat) return flat.error();
  return submit_async_flat(desc, *flat);
}

// The asynchronous path of a checked job: its submit and the out BOs it waits on, read from
// the flat job only.
Result<std::unique_ptr<PendingJob>> RocketKmd::submit_async_flat(const SubmitDesc&, const FlatJob& flat) {
  auto pending = std::make_unique<RocketPending>();
  pending->start = std::chrono::steady_clock::now();
  if (Status st = kick(flat); !st) return st.error();
  const RocketFlatHead head = rocket_head(flat);
  const std::span<const uint32_t> outs = rocket_outs(flat, head);
  pending->out_handles.assign(outs.begin(), outs.end());
  pending->tasks = head.tasks;
  pending->timeout_ms = head.timeout_ms;
  pending->deadline_ns = monotonic_ns() + int64_t{head.timeout_ms} * 1'000'000;
  return std::unique_ptr<PendingJob>(std::move(pending));
}

Status RocketKmd::wait_outs(std::span<const uint32_t> outs, size_t& next, int64_t deadline_ns,
                            uint32_t job_timeout_ms, int64_t timeout_ms, bool& finished) {
  const int64_t mine = timeout_ms < 0 ? INT64_MAX : monotonic_ns() + timeout_ms * 1'000'000;
  const bool caller_first = mine < deadline_ns;
  for (; next < outs.size(); ++next) {
    const uint32_t handle = outs[next];
    const int64_t until = caller_first ? mine : deadline_ns;
    int rc = prep_bo(handle, until);
    // -ETIMEDOUT before `until`: not the wait's expiry but the job's own failure (the
    // emulator reports a job that overran; the real kernel returns 0 after its reset).
    const bool expired = (rc == -ETIMEDOUT || rc == -EBUSY) && monotonic_ns() >= until;
    if (expired && caller_first)
      return make_error(-EBUSY, fmt::format("rocket job writing BO {} not finished within {} ms; still in flight",
                                            handle, timeout_ms));
    if (rc == 0) continue;
    finished = true;
    // The job failed: a second timeout in a row means the reset did not bring the core back.
    const bool again = timed_out_before_;
    timed_out_before_ = rc == -ETIMEDOUT || rc == -EBUSY;
    if (rc == -ETIMEDOUT || rc == -EBUSY) {
      return make_error(-ETIMEDOUT,
                        fmt::format("rocket job writing BO {} timed out: not finished within {} ms "
                                    "(the kernel resets a core after 500 ms){}",
                                    handle, job_timeout_ms,
                                    again ? "; the previous job timed out too: a core is still "
                                            "wedged after its reset"
                                          : ""));
    }
    if (rc == -EIO) return make_error(rc, fmt::format("rocket job writing BO {} faulted (DMA error)", handle));
    return make_error(rc, fmt::format("ROCKET_PREP_BO of BO {} failed: {}", handle, errno_text(rc)));
  }
  finished = true;
  timed_out_before_ = false;
  return Status::success();
}

Result<SubmitResult> RocketKmd::wait(PendingJob& pending, int64_t timeout_ms) {
  auto& job = static_cast<RocketPending&>(pending);
  if (job.finished) return make_error(-EALREADY, "rocket job: already waited");
  const auto waiting = std::chrono::steady_clock::now();
  if (Status st = wait_outs(job.out_handles, job.next, job.deadline_ns, job.timeout_ms, timeout_ms, job.finished); !st)
    return st.error();
  SubmitResult result;
  result.tasks_completed = job.tasks;
  result.wall_ns = elapsed_ns(job.start);
  result.wait_ns = elapsed_ns(waiting);  // the PREP_BO waits of this call
  return result;
}

}  // namespace ork::driver::rocket
