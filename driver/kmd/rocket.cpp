// The mainline rocket backend: CREATE_BO + mmap, one drm_rocket_job per CoreJob, PREP_BO on
// the out BOs to wait, FINI_BO/PREP_BO for cache sync, GEM_CLOSE to free (docs/hardware.md
// section 2), and open_rocket; the class is rocket_kmd.h.
#include <fmt/format.h>
#include <sys/mman.h>
#include <time.h>

#include <climits>

#include "driver/common/npu_window.h"
#include "driver/kmd/rocket_kmd.h"
#include "driver/os/debug.h"
#include "driver/os/ioctl.h"
#include "uapi/rocket_accel.h"

namespace ork::driver::rocket {
namespace {

// CPU-side waits of bo_sync(from_device): long enough for a job to finish or to be reset by
// the kernel's 500 ms job timeout (rocket_job.c).
constexpr int64_t kSyncWaitNs = 10'000'000'000;

int64_t monotonic_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

}  // namespace

Result<std::unique_ptr<Kmd>> RocketKmd::open_window(int window) const {
  if (Status st = check_window_index(window); !st) return st.error();
  auto opened = open_drm_node(os_, info_.node, KmdKind::rocket);
  if (!opened) return opened.error();
  auto kmd = std::make_unique<RocketKmd>(os_, std::move(opened->fd), info_);
  kmd->window_ = window;
  return std::unique_ptr<Kmd>(std::move(kmd));
}

Result<std::unique_ptr<Bo>> RocketKmd::bo_create(size_t bytes, BoUsage usage) {
  (void)usage;  // rocket BOs are all alike (shmem pages in the file's IOMMU domain)
  if (bytes == 0) return make_error(-EINVAL, "bo_create: bytes = 0");
  if (bytes > UINT32_MAX) {
    return make_error(-EINVAL,
                      fmt::format("bo_create: {} bytes does not fit rocket's 32-bit size", bytes));
  }
  drm_rocket_create_bo args{};
  args.size = static_cast<uint32_t>(bytes);
  int rc = ioctl_retry(os_, fd_.get(), DRM_IOCTL_ROCKET_CREATE_BO, &args);
  if (rc) {
    return make_error(
        rc, fmt::format("ROCKET_CREATE_BO of {} bytes in NPU window {} failed: {}{}", bytes, window_, errno_text(rc),
                        rc == -ENOMEM ? " (the window's 4 GiB of NPU addresses, or memory, ran out)" : ""));
  }
  size_t size = (bytes + 4095) & ~size_t{4095};  // the kernel maps whole pages
  if (args.dma_address + size > hw::kNpuWindowBytes) {
    gem_close(os_, fd_.get(), args.handle);
    return make_error(-ENOMEM, fmt::format("ROCKET_CREATE_BO gave IOVA 0x{:x}: not below 4 GiB",
                                           args.dma_address));
  }
  int err = 0;
  void* cpu = os_.mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd_.get(),
                       static_cast<off_t>(args.offset), &err);
  if (!cpu) {
    gem_close(os_, fd_.get(), args.handle);
    return make_error(err, fmt::format("mmap of a {}-byte rocket BO failed: {}", size, errno_text(err)));
  }
  note_handle(args.handle);
  return std::make_unique<Bo>(*this, args.handle, args.dma_address, size,
                              static_cast<uint8_t*>(cpu), 0);
}

void RocketKmd::bo_release(Bo& bo) noexcept {
  release_mapping(bo);
  gem_close(os_, fd_.get(), bo.handle());  // every rocket BO is a GEM handle
}

int RocketKmd::prep_bo(uint32_t handle, int64_t deadline_ns) {
  drm_rocket_prep_bo args{.handle = handle, .reserved = 0, .timeout_ns = deadline_ns};
  return ioctl_retry(os_, fd_.get(), DRM_IOCTL_ROCKET_PREP_BO, &args);
}

Status RocketKmd::bo_sync(const Bo& bo, SyncDir dir) {
  int rc;
  if (dir == SyncDir::to_device) {
    drm_rocket_fini_bo args{.handle = bo.handle(), .reserved = 0};
    rc = ioctl_retry(os_, fd_.get(), DRM_IOCTL_ROCKET_FINI_BO, &args);
  } else {
    rc = prep_bo(bo.handle(), monotonic_ns() + kSyncWaitNs);
  }
  if (rc) {
    return make_error(rc, fmt::format("rocket {} of handle {} failed: {}",
                                      dir == SyncDir::to_device ? "FINI_BO" : "PREP_BO",
                                      bo.handle(), errno_text(rc)));
  }
  return Status::success();
}

Result<SubmitResult> RocketKmd::submit(const SubmitDesc& desc) {
  if (Status st = validate_submit(*this, desc, info_.cores); !st) return st.error();
  return submit_valid(desc);
}

Result<SubmitResult> RocketKmd::submit_valid(const SubmitDesc& desc) {
  auto job = async_valid(desc);
  if (!job) return job.error();
  return wait(**job, -1);
}

Result<std::unique_ptr<PendingJob>> RocketKmd::submit_async(const SubmitDesc& desc) {
  if (Status st = validate_submit(*this, desc, info_.cores); !st) return st.error();
  return async_valid(desc);
}

Result<std::unique_ptr<PendingJob>> RocketKmd::async_valid(const SubmitDesc& desc) {
  if (desc.out_bos.empty()) {
    return make_error(-EINVAL, "submit: rocket waits on the out BOs (PREP_BO); out_bos is empty");
  }
  auto pending = std::make_unique<RocketPending>();
  pending->start = std::chrono::steady_clock::now();
  std::vector<uint32_t> in_handles;
  std::vector<uint32_t>& out_handles = pending->out_handles;
  for (const Bo* bo : desc.in_bos) in_handles.push_back(bo->handle());
  for (const Bo* bo : desc.out_bos) out_handles.push_back(bo->handle());
  // One job per CoreJob; the kernel picks its core (CoreJob::core only shapes the split).
  // Every job names every out BO, so the kernel's implicit fences order jobs that write the
  // same BO; see docs/kernel-interfaces.md.
  std::vector<std::vector<drm_rocket_task>> tasks(desc.jobs.size());
  std::vector<drm_rocket_job> jobs(desc.jobs.size());
  uint32_t total = 0;
  for (size_t j = 0; j < desc.jobs.size(); ++j) {
    for (const TaskRef& t : desc.jobs[j].tasks) {
      tasks[j].push_back({static_cast<uint32_t>(t.regcmd_iova), t.regcmd_entries});
    }
    total += static_cast<uint32_t>(tasks[j].size());
    jobs[j] = drm_rocket_job{reinterpret_cast<uintptr_t>(tasks[j].data()),
                             reinterpret_cast<uintptr_t>(in_handles.data()),
                             reinterpret_cast<uintptr_t>(out_handles.data()),
                             static_cast<uint32_t>(tasks[j].size()),
                             sizeof(drm_rocket_task),
                             static_cast<uint32_t>(in_handles.size()),
                             static_cast<uint32_t>(out_handles.size())};
  }
  drm_rocket_submit args{reinterpret_cast<uintptr_t>(jobs.data()),
                         static_cast<uint32_t>(jobs.size()), sizeof(drm_rocket_job), 0};
  int rc = ioctl_retry(os_, fd_.get(), DRM_IOCTL_ROCKET_SUBMIT, &args);
  if (rc) return make_error(rc, fmt::format("ROCKET_SUBMIT refused: {}", errno_text(rc)));
  pending->tasks = total;
  pending->timeout_ms = desc.timeout_ms;
  pending->deadline_ns = monotonic_ns() + int64_t{desc.timeout_ms} * 1'000'000;
  return std::unique_ptr<PendingJob>(std::move(pending));
}

Result<SubmitResult> RocketKmd::wait(PendingJob& pending, int64_t timeout_ms) {
  auto& job = static_cast<RocketPending&>(pending);
  if (job.finished) return make_error(-EALREADY, "rocket job: already waited");
  const auto waiting = std::chrono::steady_clock::now();
  const int64_t mine = timeout_ms < 0 ? INT64_MAX : monotonic_ns() + timeout_ms * 1'000'000;
  const bool caller_first = mine < job.deadline_ns;
  for (; job.next < job.out_handles.size(); ++job.next) {
    const uint32_t handle = job.out_handles[job.next];
    const int64_t until = caller_first ? mine : job.deadline_ns;
    int rc = prep_bo(handle, until);
    // -ETIMEDOUT before `until`: not the wait's expiry but the job's own failure (the
    // emulator reports a job that overran; the real kernel returns 0 after its reset).
    const bool expired = (rc == -ETIMEDOUT || rc == -EBUSY) && monotonic_ns() >= until;
    if (expired && caller_first)
      return make_error(-EBUSY, fmt::format("rocket job writing BO {} not finished within {} ms; still in flight",
                                            handle, timeout_ms));
    if (rc == 0) continue;
    job.finished = true;
    // The job failed: a second timeout in a row means the reset did not bring the core back.
    const bool again = timed_out_before_;
    timed_out_before_ = rc == -ETIMEDOUT || rc == -EBUSY;
    if (rc == -ETIMEDOUT || rc == -EBUSY) {
      return make_error(-ETIMEDOUT,
                        fmt::format("rocket job writing BO {} timed out: not finished within {} ms "
                                    "(the kernel resets a core after 500 ms){}",
                                    handle, job.timeout_ms,
                                    again ? "; the previous job timed out too: a core is still "
                                            "wedged after its reset"
                                          : ""));
    }
    if (rc == -EIO)
      return make_error(rc, fmt::format("rocket job writing BO {} faulted (DMA error)", handle));
    return make_error(rc, fmt::format("ROCKET_PREP_BO of BO {} failed: {}", handle, errno_text(rc)));
  }
  job.finished = true;
  timed_out_before_ = false;
  SubmitResult result;
  result.tasks_completed = job.tasks;
  result.wall_ns = elapsed_ns(job.start);
  result.wait_ns = elapsed_ns(waiting);  // the PREP_BO waits of this call
  return result;
}

}  // namespace ork::driver::rocket

namespace ork::driver {

Result<std::unique_ptr<Kmd>> open_rocket(Os& os, const std::string& node) {
  auto opened = open_drm_node(os, node, KmdKind::rocket);
  if (!opened) return opened.error();
  // The rocket uAPI has no hardware-version query: the version is the DRM driver's.
  const DrmVersion& v = opened->version;
  opened->info.driver_version = fmt::format("{}.{}.{}", v.major, v.minor, v.patch);
  opened->info.hw_version = 0;
  return std::unique_ptr<Kmd>(std::make_unique<rocket::RocketKmd>(os, std::move(opened->fd), std::move(opened->info)));
}

}  // namespace ork::driver
