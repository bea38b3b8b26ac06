// The vendor rknpu backend, its buffers and device queries: MEM_CREATE/MAP + mmap, MEM_SYNC,
// MEM_DESTROY, ACTION (versions, reset), and open_rknpu. The submit path (task BO, SUBMIT,
// fences) is rknpu_submit.cpp; the class both share is rknpu_kmd.h.
#include <fmt/format.h>
#include <sys/mman.h>

#include <algorithm>
#include <optional>

#include "driver/common/npu_window.h"
#include "driver/kmd/rknpu_kmd.h"
#include "driver/os/debug.h"
#include "driver/os/ioctl.h"
#include "uapi/rknpu_ioctl.h"

namespace ork::driver::rknpu {
namespace {

// Data and regcmd BOs: cacheable, through the IOMMU (so IOVAs, not physical addresses); the
// task BO also needs KERNEL_MAPPING because the kernel reads the tasks (VND rknpu_job.c).
constexpr uint32_t kDataFlags = RKNPU_MEM_CACHEABLE | RKNPU_MEM_IOMMU;
constexpr uint32_t kTaskFlags = kDataFlags | RKNPU_MEM_KERNEL_MAPPING;

}  // namespace

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
  args.iommu_domain_id = window_;  // the BO's IOVA in this window's IOMMU domain (VND rknpu_gem.c)
  int rc = ioctl_retry(os_, fd_.get(), DRM_IOCTL_RKNPU_MEM_CREATE, &args);
  if (rc) {
    return make_error(
        rc, fmt::format("RKNPU_MEM_CREATE of {} bytes in NPU window {} failed: {}{}", bytes, window_, errno_text(rc),
                        rc == -ENOMEM ? " (the window's 4 GiB of NPU addresses, or memory, ran out)" : ""));
  }
  if (args.dma_addr + args.size > hw::kNpuWindowBytes) {
    destroy_handle(args.handle, args.obj_addr);
    return make_error(-ENOMEM, fmt::format("RKNPU_MEM_CREATE gave IOVA 0x{:x}+{}: not below 4 GiB, "
                                           "and NPU address registers are 32-bit",
                                           args.dma_addr, args.size));
  }
  rknpu_mem_map map{.handle = args.handle, .reserved = 0, .offset = 0};
  rc = ioctl_retry(os_, fd_.get(), DRM_IOCTL_RKNPU_MEM_MAP, &map);
  const char* step = "RKNPU_MEM_MAP";  // the message names the step that failed
  void* cpu = nullptr;
  if (rc == 0) {
    step = "mmap";
    cpu = os_.mmap(nullptr, args.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd_.get(),
                   static_cast<off_t>(map.offset), &rc);
  }
  if (rc) {
    destroy_handle(args.handle, args.obj_addr);
    return make_error(rc, fmt::format("{} of a {}-byte rknpu BO failed: {}", step, args.size, errno_text(rc)));
  }
  note_handle(args.handle);
  return std::make_unique<Bo>(*this, args.handle, args.dma_addr, args.size,
                              static_cast<uint8_t*>(cpu), args.obj_addr);
}

void RknpuKmd::bo_release(Bo& bo) noexcept {
  release_mapping(bo);
  // An import has no rknpu object of ours (no obj_addr): the DRM core's GEM_CLOSE frees it.
  if (bo.imported()) {
    gem_close(os_, fd_.get(), bo.handle());
  } else {
    destroy_handle(bo.handle(), bo.obj_addr());
  }
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


// The same node again, its BOs and jobs in IOMMU domain `window` (MEM_CREATE's and SUBMIT's
// iommu_domain_id). The domain is the device's state, not the file's: each submit switches
// the NPU to its job's domain (VND rknpu_job.c), so jobs of two windows must not overlap
// (docs/kernel-interfaces.md "Windows": the executor drains at a window's edge).
Result<std::unique_ptr<Kmd>> RknpuKmd::open_window(int window) const {
  if (Status st = check_window_index(window); !st) return st.error();
  auto opened = open_drm_node(os_, info_.node, KmdKind::rknpu);
  if (!opened) return opened.error();
  auto kmd = std::make_unique<RknpuKmd>(os_, std::move(opened->fd), info_);
  kmd->window_ = window;
  return std::unique_ptr<Kmd>(std::move(kmd));
}

}  // namespace ork::driver::rknpu

namespace ork::driver {

Result<std::unique_ptr<Kmd>> open_rknpu(Os& os, const std::string& node) {
  auto opened = open_drm_node(os, node, KmdKind::rknpu);
  if (!opened) return opened.error();
  auto kmd = std::make_unique<rknpu::RknpuKmd>(os, std::move(opened->fd), std::move(opened->info));
  if (Status st = kmd->query_versions(); !st) return st.error();
  return std::unique_ptr<Kmd>(std::move(kmd));
}

}  // namespace ork::driver
