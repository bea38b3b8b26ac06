// The mainline rocket backend: CREATE_BO + mmap, FINI_BO/PREP_BO for cache sync, GEM_CLOSE to
// free (docs/hardware.md section 2), and open_rocket; the submit path (one drm_rocket_job per
// CoreJob, PREP_BO on the out BOs to wait) is rocket_submit.cpp; the class is rocket_kmd.h.
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

}  // namespace

int64_t monotonic_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

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
