// The vendor rknpu backend: MEM_CREATE/MAP + mmap, MEM_SYNC, a task BO of rknpu_task entries,
// SUBMIT in PC mode with per-core task ranges (facts: rk3588-npu.md sections 1 and 8).
#include <fmt/format.h>
#include <sys/mman.h>

#include <algorithm>

#include "driver/kmd/kmd_common.h"
#include "driver/os/debug.h"
#include "driver/os/ioctl.h"
#include "uapi/rknpu_ioctl.h"

namespace ork::driver {
namespace {

// Data and regcmd BOs: cacheable, through the IOMMU (so IOVAs, not physical addresses); the
// task BO also needs KERNEL_MAPPING because the kernel reads the tasks (VND rknpu_job.c).
constexpr uint32_t kDataFlags = RKNPU_MEM_CACHEABLE | RKNPU_MEM_IOMMU;
constexpr uint32_t kTaskFlags = kDataFlags | RKNPU_MEM_KERNEL_MAPPING;
// PC mode, blocking, with ping-pong as MTX and librknnrt submit (flags 5), known to run on
// silicon.
constexpr uint32_t kSubmitFlags = RKNPU_JOB_PC | RKNPU_JOB_BLOCK | RKNPU_JOB_PINGPONG;
constexpr uint32_t kEnableMask = 0xd;    // CNA|CORE|DPU (MTX); not written to HW
constexpr uint32_t kIntClear = 0x1ffff;  // clear all (rk3588-npu.md section 3)
constexpr uint32_t kMaxTasksPerKick = RKNPU_RK3588_MAX_SUBMIT_NUMBER;

// One core's slice of one SUBMIT ioctl: tasks [start, start+number) of the task BO.
struct Range {
  int core;
  uint32_t start;
  uint32_t number;
};

class RknpuKmd final : public Kmd {
 public:
  RknpuKmd(Os& os, UniqueFd fd, DeviceInfo info)
      : os_(os), fd_(std::move(fd)), info_(std::move(info)) {}
  ~RknpuKmd() override { task_bo_.reset(); }  // before fd_ closes

  const DeviceInfo& info() const override { return info_; }
  Result<std::unique_ptr<Bo>> bo_create(size_t bytes, BoUsage usage) override;
  Status bo_sync(const Bo& bo, SyncDir dir) override;
  Result<SubmitResult> submit(const SubmitDesc& desc) override;
  Result<int> bo_export(Bo& bo) override { return export_bo(os_, fd_.get(), bo); }
  Result<std::unique_ptr<Bo>> bo_import(int fd, size_t bytes) override;
  Status dmabuf_sync(const Bo& bo, bool start, bool write) override {
    return driver::dmabuf_sync(os_, bo, start, write);
  }
  Status reset() override;
  int node_fd() const override { return fd_.get(); }

  Result<uint32_t> action(uint32_t action, uint32_t value);
  // Reads the driver and hardware versions into info() (done once, at open).
  Status query_versions();

 protected:
  void bo_release(Bo& bo) noexcept override;

 private:
  Status ensure_task_capacity(size_t tasks);
  Status submit_ranges(const std::vector<Range>& ranges, uint32_t timeout_ms, SubmitResult* out);
  void destroy_handle(uint32_t handle, uint64_t obj_addr) noexcept;

  Os& os_;
  UniqueFd fd_;
  DeviceInfo info_;
  std::unique_ptr<Bo> task_bo_;  // grows; holds the rknpu_task array of every submit
};

Result<uint32_t> RknpuKmd::action(uint32_t action, uint32_t value) {
  rknpu_action args{.flags = action, .value = value};
  int rc = ioctl_retry(os_, fd_.get(), DRM_IOCTL_RKNPU_ACTION, &args);
  if (rc) return make_error(rc, fmt::format("RKNPU_ACTION {} failed: {}", action, errno_text(rc)));
  return args.value;
}

void RknpuKmd::destroy_handle(uint32_t handle, uint64_t obj_addr) noexcept {
  rknpu_mem_destroy args{.handle = handle, .reserved = 0, .obj_addr = obj_addr};
  int rc = ioctl_retry(os_, fd_.get(), DRM_IOCTL_RKNPU_MEM_DESTROY, &args);
  if (rc) debug_log("kmd", "rknpu: MEM_DESTROY of handle {} failed: {}", handle, errno_text(rc));
}

Result<std::unique_ptr<Bo>> RknpuKmd::bo_create(size_t bytes, BoUsage usage) {
  if (bytes == 0) return make_error(-EINVAL, "bo_create: bytes = 0");
  rknpu_mem_create args{};
  args.flags = usage == BoUsage::tasks ? kTaskFlags : kDataFlags;
  args.size = bytes;
  int rc = ioctl_retry(os_, fd_.get(), DRM_IOCTL_RKNPU_MEM_CREATE, &args);
  if (rc) {
    return make_error(
        rc, fmt::format("RKNPU_MEM_CREATE of {} bytes failed: {}", bytes, errno_text(rc)));
  }
  if (args.dma_addr + args.size > (1ull << 32)) {
    destroy_handle(args.handle, args.obj_addr);
    return make_error(-ENOMEM, fmt::format("RKNPU_MEM_CREATE gave IOVA 0x{:x}+{}: not below 4 GiB, "
                                           "and NPU address registers are 32-bit",
                                           args.dma_addr, args.size));
  }
  rknpu_mem_map map{.handle = args.handle, .reserved = 0, .offset = 0};
  rc = ioctl_retry(os_, fd_.get(), DRM_IOCTL_RKNPU_MEM_MAP, &map);
  void* cpu = MAP_FAILED;
  if (rc == 0) {
    cpu = os_.mmap(nullptr, args.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd_.get(),
                   static_cast<off_t>(map.offset));
    if (cpu == MAP_FAILED) rc = -errno;
  }
  if (rc) {
    destroy_handle(args.handle, args.obj_addr);
    return make_error(
        rc, fmt::format("mapping a {}-byte rknpu BO failed: {}", args.size, errno_text(rc)));
  }
  note_handle(args.handle);
  return std::make_unique<Bo>(*this, args.handle, args.dma_addr, args.size,
                              static_cast<uint8_t*>(cpu), args.obj_addr);
}

void RknpuKmd::bo_release(Bo& bo) noexcept {
  if (os_.munmap(bo.map(), bo.size()) != 0) {
    debug_log("kmd", "rknpu: munmap of handle {} failed: errno {}", bo.handle(), errno);
  }
  close_dmabuf(os_, bo);
  drop_handle(bo.handle());
  // An import has no rknpu object of ours (no obj_addr): the DRM core's GEM_CLOSE frees it.
  if (bo.imported()) {
    gem_close(os_, fd_.get(), bo.handle());
  } else {
    destroy_handle(bo.handle(), bo.obj_addr());
  }
}

Result<std::unique_ptr<Bo>> RknpuKmd::bo_import(int fd, size_t bytes) {
  if (bytes == 0) return make_error(-EINVAL, "bo_import: bytes = 0");
  auto handle = prime_fd_to_handle(os_, fd_.get(), fd);
  if (!handle) return handle.error();
  if (has_handle(*handle)) return already_held(fd, *handle);
  auto bo = map_import(os_, fd_.get(), *this, *handle, bytes);
  if (bo) note_handle(*handle);
  return bo;
}


Status RknpuKmd::bo_sync(const Bo& bo, SyncDir dir) {
  if (bo.imported())  // MEM_SYNC takes the obj_addr cookie, which no ioctl gives for an import
    return make_error(-EINVAL, fmt::format("RKNPU_MEM_SYNC of handle {}: an imported BO has no rknpu object; "
                                           "bracket CPU access with dmabuf_sync",
                                           bo.handle()));
  rknpu_mem_sync args{};
  args.flags = dir == SyncDir::to_device ? RKNPU_MEM_SYNC_TO_DEVICE : RKNPU_MEM_SYNC_FROM_DEVICE;
  args.obj_addr = bo.obj_addr();
  args.offset = 0;
  args.size = bo.size();
  int rc = ioctl_retry(os_, fd_.get(), DRM_IOCTL_RKNPU_MEM_SYNC, &args);
  if (rc)
    return make_error(
        rc, fmt::format("RKNPU_MEM_SYNC of handle {} failed: {}", bo.handle(), errno_text(rc)));
  return Status::success();
}

Status RknpuKmd::query_versions() {
  auto drv = action(RKNPU_GET_DRV_VERSION, 0);
  if (!drv) return drv.error();
  auto hw = action(RKNPU_GET_HW_VERSION, 0);
  if (!hw) return hw.error();
  // GET_DRV_VERSION = major*10000 + minor*100 + patch (0.9.8 -> 908).
  info_.driver_version = fmt::format("{}.{}.{}", *drv / 10000, *drv / 100 % 100, *drv % 100);
  info_.hw_version = *hw;
  return Status::success();
}

Status RknpuKmd::reset() {
  auto r = action(RKNPU_ACT_RESET, 0);
  return r ? Status::success() : Status(r.error());
}

Status RknpuKmd::ensure_task_capacity(size_t tasks) {
  size_t bytes = tasks * sizeof(rknpu_task);
  if (task_bo_ && task_bo_->size() >= bytes) return Status::success();
  size_t grown = std::max<size_t>(bytes, task_bo_ ? task_bo_->size() * 2 : 4096);
  task_bo_.reset();
  auto bo = bo_create(grown, BoUsage::tasks);
  if (!bo) return bo.error();
  task_bo_ = std::move(bo.value());
  return Status::success();
}

// subcore_task: 1 or 2 cores read entry [core], 3 cores entry [core + 2] (VND rknpu_job.c).
Status RknpuKmd::submit_ranges(const std::vector<Range>& ranges, uint32_t timeout_ms,
                               SubmitResult* out) {
  rknpu_submit args{};
  args.flags = kSubmitFlags;
  args.timeout = timeout_ms;
  args.task_obj_addr = task_bo_->obj_addr();
  args.task_start = ranges.front().start;
  args.fence_fd = -1;
  for (const Range& r : ranges) {
    size_t index =
        ranges.size() == 3 ? static_cast<size_t>(r.core) + 2 : static_cast<size_t>(r.core);
    args.subcore_task[index] = {r.start, r.number};
    args.core_mask |= 1u << r.core;
    args.task_number += r.number;
  }
  int rc = ioctl_retry(os_, fd_.get(), DRM_IOCTL_RKNPU_SUBMIT, &args);
  out->tasks_completed += rc ? args.task_counter : args.task_number;
  if (rc == -ETIMEDOUT) {
    return make_error(rc,
                      fmt::format("RKNPU_SUBMIT (core_mask 0x{:x}) timed out after {} ms: {} of "
                                  "{} tasks completed; the kernel soft-reset the NPU",
                                  args.core_mask, timeout_ms, args.task_counter, args.task_number));
  }
  if (rc == -EIO) {
    return make_error(rc, fmt::format("RKNPU_SUBMIT (core_mask 0x{:x}): the job faulted (DMA or "
                                      "configuration error) after {} of {} tasks",
                                      args.core_mask, args.task_counter, args.task_number));
  }
  if (rc) return make_error(rc, fmt::format("RKNPU_SUBMIT refused: {}", errno_text(rc)));
  out->hw_elapse_ns = std::max<int64_t>(out->hw_elapse_ns, 0) + args.hw_elapse_time;
  return Status::success();
}

Result<SubmitResult> RknpuKmd::submit(const SubmitDesc& desc) {
  if (Status st = validate_submit(desc, info_.cores); !st) return st.error();
  auto start = std::chrono::steady_clock::now();
  std::vector<const CoreJob*> jobs;
  size_t total = 0;
  for (const CoreJob& job : desc.jobs) {
    jobs.push_back(&job);
    total += job.tasks.size();
  }
  std::sort(jobs.begin(), jobs.end(), [](auto* a, auto* b) { return a->core < b->core; });
  if (Status st = ensure_task_capacity(total); !st) return st.error();
  // Task BO layout: each core's tasks contiguous, cores in ascending order.
  auto* tasks = reinterpret_cast<rknpu_task*>(task_bo_->map());
  std::vector<uint32_t> first(jobs.size());
  uint32_t next = 0;
  size_t longest = 0;
  for (size_t j = 0; j < jobs.size(); ++j) {
    first[j] = next;
    longest = std::max(longest, jobs[j]->tasks.size());
    for (const TaskRef& t : jobs[j]->tasks) {
      tasks[next] = rknpu_task{0,
                               next,
                               kEnableMask,
                               t.int_mask,
                               kIntClear,
                               0,
                               t.regcmd_entries - RKNPU_PC_DATA_EXTRA_AMOUNT,
                               0,
                               t.regcmd_iova};
      ++next;
    }
  }
  if (Status st = bo_sync(*task_bo_, SyncDir::to_device); !st) return st.error();
  SubmitResult result;
  // At most 4095 tasks per core per SUBMIT (the PC's 12-bit task counter); longer lists go
  // in chunks. Core sets {0,2} and {1,2} (masks 5, 6) are refused by the vendor kernel, so
  // such a chunk is submitted one core at a time.
  for (size_t base = 0; base < longest; base += kMaxTasksPerKick) {
    std::vector<Range> ranges;
    for (size_t j = 0; j < jobs.size(); ++j) {
      size_t n = jobs[j]->tasks.size();
      if (base >= n) continue;
      ranges.push_back({jobs[j]->core, static_cast<uint32_t>(first[j] + base),
                        static_cast<uint32_t>(std::min<size_t>(n - base, kMaxTasksPerKick))});
    }
    uint32_t mask = 0;
    for (const Range& r : ranges) mask |= 1u << r.core;
    std::vector<std::vector<Range>> groups;
    if (mask == 5 || mask == 6) {
      for (const Range& r : ranges) groups.push_back({r});
    } else {
      groups.push_back(ranges);
    }
    for (const auto& group : groups) {
      if (Status st = submit_ranges(group, desc.timeout_ms, &result); !st) return st.error();
    }
  }
  result.wall_ns = elapsed_ns(start);
  return result;
}

}  // namespace

Result<std::unique_ptr<Kmd>> open_rknpu(Os& os, const std::string& node) {
  auto fd = open_node(os, node);
  if (!fd) return fd.error();
  auto version = query_drm_version(os, fd->get(), node);
  if (!version) return version.error();
  if (version->name != "rknpu") {
    return make_error(-ENODEV,
                      fmt::format("{} is DRM driver '{}', not 'rknpu'", node, version->name));
  }
  auto cores = core_count(3);
  if (!cores) return cores.error();
  DeviceInfo info;
  info.kind = KmdKind::rknpu;
  info.node = node;
  info.driver_name = version->name;
  info.cores = *cores;
  info.emulated = is_emulated(*version);
  auto kmd = std::make_unique<RknpuKmd>(os, std::move(fd.value()), info);
  if (Status st = kmd->query_versions(); !st) return st.error();
  return std::unique_ptr<Kmd>(std::move(kmd));
}

}  // namespace ork::driver
