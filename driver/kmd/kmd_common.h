// Helpers both kernel backends share (not a public header).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "driver/common/errno_text.h"
#include "driver/common/result.h"
#include "driver/kmd/kmd.h"
#include "driver/os/os.h"

namespace ork::driver {

// An fd of an Os, closed through that Os when it goes.
class UniqueFd {
 public:
  UniqueFd(Os& os, int fd) : os_(&os), fd_(fd) {}
  ~UniqueFd() { reset(); }
  UniqueFd(UniqueFd&& other) noexcept : os_(other.os_), fd_(other.fd_) { other.fd_ = -1; }
  UniqueFd& operator=(UniqueFd&&) = delete;
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  int get() const { return fd_; }
  void reset();

 private:
  Os* os_;
  int fd_;
};

// Opens a device node read-write (DRM nodes need O_RDWR), close-on-exec.
Result<UniqueFd> open_node(Os& os, const std::string& node);

struct DrmVersion {
  std::string name;  // "rknpu", "rocket"
  std::string desc;
  int major = 0, minor = 0, patch = 0;
};

// DRM_IOCTL_VERSION, asked twice like libdrm's drmGetVersion (lengths, then strings), but
// through ioctl_retry so that it runs over any Os.
Result<DrmVersion> query_drm_version(Os& os, int fd, const std::string& node);

// The emulator marks its DRM desc with this tag (driver/emu/kernel/drm_core.cpp); it is
// visible through the LD_PRELOAD shim as well.
bool is_emulated(const DrmVersion& version);

// A device node opened for one backend: its DRM driver name checked against the backend's
// ("rknpu", "rocket"; -ENODEV otherwise), the core count read (core_count) and the parts of
// DeviceInfo both backends fill alike; the version is kept for the backend's own fields.
struct OpenedNode {
  UniqueFd fd;
  DeviceInfo info;
  DrmVersion version;
};
Result<OpenedNode> open_drm_node(Os& os, const std::string& node, KmdKind kind);

// open_window's argument: 0..hw::kMaxNpuWindows - 1, else -EINVAL naming it.
Status check_window_index(int window);

// RK3588 has 3 cores (VND rknpu_drv.c). ORK_CORES=1..3 lowers the count; another value is an
// error that names the variable.
Result<int> core_count(int hardware_cores);

// The checks both backends make before any ioctl: cores exist and appear once, task lists
// are non-empty, regcmd addresses are 32-bit and 16-byte aligned, counts hold the trailer.
// Also: every BO the job names is `self`'s, i.e. in the job's window (Kmd::window).
Status validate_submit(const Kmd& self, const SubmitDesc& desc, int cores);



// dma-buf sharing, the same on both uAPIs (the DRM core's PRIME ioctls; include/uapi/dma_buf.h).
// GEM_CLOSE of a handle (imports on both; every rocket BO).
void gem_close(Os& os, int drm_fd, uint32_t handle) noexcept;
// bo_export: the BO keeps a dma-buf fd of its own (made on the first export), the caller
// gets another.
Result<int> export_bo(Os& os, int drm_fd, Bo& bo);
// DMA_BUF_IOCTL_SYNC around CPU access to a shared BO; no-op for one that is not shared.
Status dmabuf_sync(Os& os, const Bo& bo, bool start, bool write);
// The common part of bo_release for a shared BO: its own dma-buf fd.
void close_dmabuf(Os& os, const Bo& bo) noexcept;  // "ETIMEDOUT: Connection timed out"

// What both backends are: a DRM file of an Os. It holds the node's fd and the device's
// info, and answers the parts of Kmd that the DRM core provides alike on both uAPIs
// (dma-buf sharing through PRIME, the node's fd).
class DrmKmd : public Kmd {
 public:
  DrmKmd(Os& os, UniqueFd fd, DeviceInfo info) : os_(os), fd_(std::move(fd)), info_(std::move(info)) {}

  const DeviceInfo& info() const override { return info_; }
  int node_fd() const override { return fd_.get(); }
  Result<int> bo_export(Bo& bo) override { return export_bo(os_, fd_.get(), bo); }
  Result<std::unique_ptr<Bo>> bo_import(int fd, size_t bytes) override {
    return import_dmabuf(os_, fd_.get(), fd, bytes);
  }
  Status dmabuf_sync(const Bo& bo, bool start, bool write) override {
    return driver::dmabuf_sync(os_, bo, start, write);
  }

 protected:
  // The first part of bo_release on both uAPIs: the CPU mapping, the BO's own dma-buf fd and
  // the handle's bookkeeping go; the caller then frees the handle its uAPI's way.
  void release_mapping(Bo& bo) noexcept;

  Os& os_;
  UniqueFd fd_;
  DeviceInfo info_;
};

inline int64_t elapsed_ns(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() -
                                                              start)
      .count();
}

}  // namespace ork::driver
