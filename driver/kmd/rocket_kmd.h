// The mainline rocket backend's Kmd (internal to driver/kmd), as rknpu_kmd.h is the vendor
// backend's: buffers, cache sync, submits and waits in rocket.cpp (facts: docs/hardware.md
// section 2).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <vector>

#include "driver/kmd/kmd_common.h"

namespace ork::driver::rocket {

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
  Result<SubmitResult> submit_valid(const SubmitDesc& desc) override;
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

 private:
  int prep_bo(uint32_t handle, int64_t deadline_ns);
  Result<std::unique_ptr<PendingJob>> async_valid(const SubmitDesc& desc);  // submit_async, checked

  // The last job timed out (so the kernel reset its core): a second timeout in a row means
  // the reset did not bring the core back, and the message says so.
  bool timed_out_before_ = false;
};

}  // namespace ork::driver::rocket
