// The vendor rknpu backend's Kmd (internal to driver/kmd): buffers and device queries in
// rknpu.cpp, the submit path in rknpu_submit.cpp (facts: docs/hardware.md sections 1 and 8).
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "driver/common/npu_cores.h"
#include "driver/kmd/kmd_common.h"

namespace ork::driver::rknpu {

// One core's slice of one SUBMIT ioctl: tasks [start, start+number) of the task BO. 8 bytes
// (a kick's number is at most 4095, the core below 3), so a three-core kick is 28 bytes of a
// checked job's flat layout where 12-byte ranges made it 40 (docs/library.md "Three lines of
// a context").
struct Range {
  uint32_t start;
  uint16_t number;
  uint8_t core;
};
static_assert(sizeof(Range) == 8);
// The ranges of one SUBMIT ioctl: one per core it runs, at most the NPU's cores.
struct Kick {
  uint32_t count = 0;
  Range ranges[hw::kNpuCores];
  std::span<const Range> view() const { return {ranges, count}; }
};

// The flat job of rknpu (RknpuKmd::lay_flat, rknpu_flat.cpp): this head, `kicks` Kicks, then
// `tasks` FlatTasks. Read by copying out (memcpy), so the bytes need no alignment of theirs.
struct FlatHead {
  uint32_t tasks = 0;       // in the task BO's order: each core's contiguous, cores ascending
  uint32_t kicks = 0;       // SUBMIT ioctls
  uint32_t core_mask = 0;   // every core the job runs
  uint32_t timeout_ms = 0;  // SubmitDesc::timeout_ms
};
// The fields of a task's rknpu_task that differ between tasks (the rest are constants).
struct FlatTask {
  uint32_t regcmd_addr;    // below 4 GiB (validate_submit)
  uint32_t regcfg_amount;  // regcmd entries less the 4-entry PC trailer
  uint32_t int_mask;
};
FlatHead flat_head(const FlatJob& flat);
Kick flat_kick(const FlatJob& flat, uint32_t k);

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
  // The flat job (rknpu_submit.cpp): its head, each SUBMIT ioctl's ranges, then each task's
  // regcmd address, word count and interrupt mask, cores in ascending order.
  Result<FlatJob> lay_flat(const SubmitDesc& desc) const override;
  Result<SubmitResult> submit_flat(const SubmitDesc& desc, const FlatJob& flat) override;
  Result<std::unique_ptr<PendingJob>> submit_async_flat(const SubmitDesc& desc, const FlatJob& flat) override;

 private:
  Status ensure_task_capacity(std::unique_ptr<Bo>& bo, size_t tasks);
  // Writes the flat job's rknpu_task records into `bo` (grown as needed) and syncs it.
  Status write_tasks(const FlatJob& flat, std::unique_ptr<Bo>& bo);
  Status submit_ranges(const Bo& tasks, std::span<const Range> ranges, uint32_t timeout_ms, uint32_t flags,
                       SubmitResult* out, int* fence_fd = nullptr);
  Result<SubmitResult> submit_blocking(const Bo& tasks, const FlatJob& flat);
  Status kick_async(RknpuPending& job, const FlatJob& flat);
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
