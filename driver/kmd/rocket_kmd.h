// The mainline rocket backend's Kmd (internal to driver/kmd), as rknpu_kmd.h is the vendor
// backend's: buffers, cache sync, submits and waits in rocket.cpp (facts: docs/hardware.md
// section 2).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "driver/kmd/kmd_common.h"

namespace ork::driver::rocket {

// CLOCK_MONOTONIC in ns: PREP_BO's timeout_ns is an absolute time on this clock.
int64_t monotonic_ns();

// The flat job of rocket (RocketKmd::lay_flat, rocket_submit.cpp): this head, then `jobs`
// task counts, `ins` and `outs` BO handles, and `tasks` drm_rocket_tasks, all 32-bit words,
// so the kernel reads the handles and tasks where they are.
struct RocketFlatHead {
  uint32_t jobs = 0, ins = 0, outs = 0, tasks = 0;
  uint32_t timeout_ms = 0;
};

// An asynchronous rocket job: the uAPI has no syncobj or fence out (drm_rocket_submit has
// no such field; rocket_accel.h), so completion is observed through the out BOs'
// reservation fences with PREP_BO, each out BO in turn, until the job's deadline.
struct RocketPending final : PendingJob {
  std::vector<uint32_t> out_handles;
  size_t next = 0;  // out BOs before this one were seen idle
  uint32_t tasks = 0;
  uint32_t timeout_ms = 0;
  std::chrono::steady_clock::time_point start;
  int64_t deadline_ns = 0;  // CLOCK_MONOTONIC, absolute (PREP_BO's timeout_ns)
};

class RocketKmd final : public DrmKmd {
 public:
  RocketKmd(Os& os, UniqueFd fd, DeviceInfo info) : DrmKmd(os, std::move(fd), std::move(info)) {}

  Result<std::unique_ptr<Bo>> bo_create(size_t bytes, BoUsage usage) override;
  Status bo_sync(const Bo& bo, SyncDir dir) override;
  Result<SubmitResult> submit(const SubmitDesc& desc) override;
  // rocket has no reset ioctl: its kernel resets a core when a job times out (500 ms).
  Status reset() override { return Status::success(); }
  Result<std::unique_ptr<PendingJob>> submit_async(const SubmitDesc& desc) override;
  Result<SubmitResult> wait(PendingJob& job, int64_t timeout_ms) override;
  AsyncMode async_mode() const override { return AsyncMode::prep_bo; }
  // A window is an open file: the node again, with its own IOMMU domain (rocket_drv.c opens
  // one per file; docs/kernel-interfaces.md "Windows").
  Result<std::unique_ptr<Kmd>> open_window(int window) const override;

 protected:
  void bo_release(Bo& bo) noexcept override;
  Result<FlatJob> lay_flat(const SubmitDesc& desc) const override;
  Result<SubmitResult> submit_flat(const SubmitDesc& desc, const FlatJob& flat) override;
  Result<std::unique_ptr<PendingJob>> submit_async_flat(const SubmitDesc& desc, const FlatJob& flat) override;

 private:
  int prep_bo(uint32_t handle, int64_t deadline_ns);
  // ROCKET_SUBMIT of the flat job: its jobs made on the stack, pointing into `flat`.
  Status kick(const FlatJob& flat);
  // PREP_BO on `outs[next..]` until the job's deadline or, when it comes first, the caller's
  // `timeout_ms` (-1: none): -EBUSY then, still in flight; `finished` once the job is seen
  // to end, done or failed.
  Status wait_outs(std::span<const uint32_t> outs, size_t& next, int64_t deadline_ns, uint32_t job_timeout_ms,
                   int64_t timeout_ms, bool& finished);

  // The last job timed out (so the kernel reset its core): a second timeout in a row means
  // the reset did not bring the core back, and the message says so.
  bool timed_out_before_ = false;
};

}  // namespace ork::driver::rocket
