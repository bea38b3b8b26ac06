// The vendor rknpu backend's Kmd (internal to driver/kmd): buffers and device queries in
// rknpu.cpp, the submit path in rknpu_submit.cpp (facts: docs/hardware.md sections 1 and 8).
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <vector>

#include "driver/kmd/kmd_common.h"

namespace ork::driver::rknpu {

// One core's slice of one SUBMIT ioctl: tasks [start, start+number) of the task BO.
struct Range {
  int core;
  uint32_t start;
  uint32_t number;
};
using Kick = std::vector<Range>;  // the ranges of one SUBMIT ioctl

// An asynchronous job: its own task array (the kernel reads it when the job reaches a core,
// which may be after later submits), one fence per SUBMIT ioctl, and the deadline.
struct RknpuPending final : PendingJob {
  std::unique_ptr<Bo> tasks;
  std::vector<UniqueFd> fences;  // in kick order; reset as each signals
  uint32_t task_number = 0;
  uint32_t core_mask = 0;
  uint32_t timeout_ms = 0;
  std::chrono::steady_clock::time_point start, deadline;
  // AsyncMode::blocking: the job already ran inside submit_async; this is its outcome.
  std::optional<Result<SubmitResult>> outcome;
};

class RknpuKmd final : public DrmKmd {
 public:
  RknpuKmd(Os& os, UniqueFd fd, DeviceInfo info) : DrmKmd(os, std::move(fd), std::move(info)) {}
  ~RknpuKmd() override { task_bo_.reset(); }  // before fd_ closes

  Result<std::unique_ptr<Bo>> bo_create(size_t bytes, BoUsage usage) override;
  Status bo_sync(const Bo& bo, SyncDir dir) override;
  Result<SubmitResult> submit(const SubmitDesc& desc) override;
  Result<SubmitResult> submit_valid(const SubmitDesc& desc) override;
  Status reset() override;
  Result<std::unique_ptr<PendingJob>> submit_async(const SubmitDesc& desc) override;
  Result<SubmitResult> wait(PendingJob& job, int64_t timeout_ms) override;
  AsyncMode async_mode() const override { return fences_ ? AsyncMode::fence : AsyncMode::blocking; }
  Result<std::unique_ptr<Kmd>> open_window(int window) const override;

  Result<uint32_t> action(uint32_t action, uint32_t value);
  // Reads the driver and hardware versions into info() (done once, at open).
  Status query_versions();

 protected:
  void bo_release(Bo& bo) noexcept override;

 private:
  Status ensure_task_capacity(std::unique_ptr<Bo>& bo, size_t tasks);
  // Writes desc's tasks into `bo` (grown as needed) and returns the SUBMIT ioctls to make.
  Result<std::vector<Kick>> lay_tasks(const SubmitDesc& desc, std::unique_ptr<Bo>& bo);
  Status submit_ranges(const Bo& tasks, const Kick& ranges, uint32_t timeout_ms, uint32_t flags,
                       SubmitResult* out, int* fence_fd = nullptr);
  Result<SubmitResult> submit_blocking(const Bo& tasks, const std::vector<Kick>& kicks, uint32_t timeout_ms);
  Status kick_async(RknpuPending& job, const std::vector<Kick>& kicks);
  void destroy_handle(uint32_t handle, uint64_t obj_addr) noexcept;

  std::unique_ptr<Bo> task_bo_;  // grows; holds the rknpu_task array of every blocking submit
  std::vector<std::unique_ptr<Bo>> spare_tasks_;  // task arrays of finished async jobs
  // false once FENCE_OUT was refused (a kernel without CONFIG_ROCKCHIP_RKNPU_FENCE: the
  // vendor's #else branch returns -EINVAL before queueing anything).
  bool fences_ = true;
  // Cores whose last NONBLOCK job overran: the vendor kernel keeps such a job as the core's
  // current one until the next NONBLOCK submit to that core reaps it (rknpu_job_timeout_clean);
  // a blocking SUBMIT would queue behind it and time out too. So the next job goes NONBLOCK.
  uint32_t stuck_cores_ = 0;
  // The last submit timed out (so the kernel soft-reset the NPU): a second timeout in a row
  // means the reset did not bring the core back, and the message says so.
  bool timed_out_before_ = false;
};

}  // namespace ork::driver::rknpu
