#include "driver/kmd/kmd_common.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <fmt/format.h>

#include <cstdlib>
#include <cstring>
#include <set>

#include "driver/common/npu_cores.h"
#include "driver/common/npu_window.h"
#include "driver/os/debug.h"
#include "driver/os/ioctl.h"
#include "uapi/dma_buf.h"
#include "uapi/rknpu_ioctl.h"

namespace ork::driver {

void UniqueFd::reset() {
  if (fd_ >= 0) os_->close(fd_);
  fd_ = -1;
}

Result<UniqueFd> open_node(Os& os, const std::string& node) {
  int fd = os.open(node.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) return make_error(fd, fmt::format("cannot open {}: {}", node, errno_text(fd)));
  return UniqueFd(os, fd);
}

Result<DrmVersion> query_drm_version(Os& os, int fd, const std::string& node) {
  struct drm_version v {};
  int rc = ioctl_retry(os, fd, DRM_IOCTL_VERSION, &v);
  if (rc) return make_error(rc, fmt::format("{}: DRM_VERSION failed: {}", node, errno_text(rc)));
  DrmVersion out;
  out.name.resize(v.name_len);
  out.desc.resize(v.desc_len);
  std::string date(v.date_len, '\0');
  v.name = out.name.data();
  v.desc = out.desc.data();
  v.date = date.data();
  rc = ioctl_retry(os, fd, DRM_IOCTL_VERSION, &v);
  if (rc) return make_error(rc, fmt::format("{}: DRM_VERSION failed: {}", node, errno_text(rc)));
  out.major = v.version_major;
  out.minor = v.version_minor;
  out.patch = v.version_patchlevel;
  return out;
}

Result<OpenedNode> open_drm_node(Os& os, const std::string& node, KmdKind kind) {
  auto fd = open_node(os, node);
  if (!fd) return fd.error();
  auto version = query_drm_version(os, fd->get(), node);
  if (!version) return version.error();
  const std::string want = kmd_kind_name(kind);
  if (version->name != want) {
    return make_error(-ENODEV, fmt::format("{} is DRM driver '{}', not '{}'", node, version->name, want));
  }
  // Neither uAPI is asked for a core count here: the RK3588's (npu_cores.h) is the fact,
  // ORK_CORES may lower it.
  auto cores = core_count(hw::kNpuCores);
  if (!cores) return cores.error();
  DeviceInfo info;
  info.kind = kind;
  info.node = node;
  info.driver_name = version->name;
  info.cores = *cores;
  info.emulated = is_emulated(*version);
  return OpenedNode{std::move(fd.value()), std::move(info), std::move(version.value())};
}

bool is_emulated(const DrmVersion& version) {
  return version.desc.find("[ork-emu]") != std::string::npos;
}

Result<int> core_count(int hardware_cores) {
  const char* env = std::getenv("ORK_CORES");
  if (!env || !*env) return hardware_cores;
  char* end = nullptr;
  long value = std::strtol(env, &end, 10);
  if (*end != '\0' || value < 1 || value > hardware_cores) {
    return make_error(-EINVAL, fmt::format("ORK_CORES = '{}': must be a whole number from 1 to {}",
                                           env, hardware_cores));
  }
  return static_cast<int>(value);
}

namespace {

Status validate_task(const TaskRef& t, int core, size_t index) {
  auto bad = [&](std::string what) {
    return Status(make_error(-EINVAL, fmt::format("core {} task {}: {}", core, index, what)));
  };
  if (t.regcmd_iova == 0) return bad("regcmd IOVA is 0");
  if (t.regcmd_iova >= hw::kNpuWindowBytes) {
    return bad(fmt::format("regcmd IOVA 0x{:x} is not below 4 GiB (NPU addresses are 32-bit)",
                           t.regcmd_iova));
  }
  // PC BASE_ADDRESS keeps bits 31:4 only (docs/hardware.md section 3).
  if (t.regcmd_iova % 16)
    return bad(fmt::format("regcmd IOVA 0x{:x} is not 16-byte aligned", t.regcmd_iova));
  if (t.regcmd_entries <= RKNPU_PC_DATA_EXTRA_AMOUNT) {
    return bad(
        fmt::format("regcmd_entries = {}: a task needs its register writes plus the "
                    "4-entry PC trailer",
                    t.regcmd_entries));
  }
  if (t.int_mask == 0) return bad("int_mask = 0: no completion interrupt would ever match");
  return Status::success();
}

}  // namespace

Status validate_submit(const Kmd& self, const SubmitDesc& desc, int cores) {
  if (desc.jobs.empty()) return make_error(-EINVAL, "submit: no core jobs (jobs is empty)");
  if (desc.timeout_ms == 0) return make_error(-EINVAL, "submit: timeout_ms = 0");
  std::set<int> seen;
  for (const CoreJob& job : desc.jobs) {
    if (job.core < 0 || job.core >= cores) {
      return make_error(-EINVAL, fmt::format("submit: core {} does not exist (this device uses "
                                             "cores 0..{})",
                                             job.core, cores - 1));
    }
    if (!seen.insert(job.core).second) {
      return make_error(-EINVAL,
                        fmt::format("submit: core {} has two jobs (one per core)", job.core));
    }
    if (job.tasks.empty()) {
      return make_error(-EINVAL, fmt::format("submit: core {} has an empty task list", job.core));
    }
    for (size_t i = 0; i < job.tasks.size(); ++i) {
      if (Status st = validate_task(job.tasks[i], job.core, i); !st) return st;
    }
  }
  for (const auto* list : {&desc.in_bos, &desc.out_bos}) {
    for (const Bo* bo : *list) {
      if (!bo) return make_error(-EINVAL, "submit: a null BO in in_bos/out_bos");
      // rknpu: the job runs in one IOMMU domain and sees no other's mappings; rocket: a
      // job's handles are its file's. Either way the NPU would fault or read another buffer.
      if (&bo->owner() != &self)
        return make_error(-EINVAL, fmt::format("submit: a job in NPU window {} names a {}-byte BO of window {}: a job "
                                               "reads and writes only its own window's buffers",
                                               self.window(), bo->size(), bo->owner().window()));
    }
  }
  return Status::success();
}

uint64_t Kmd::next_serial() {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

Result<FlatJob> FlatJob::make(size_t bytes) {
  if (bytes > UINT32_MAX)
    return make_error(-E2BIG, fmt::format("a flat job of {} bytes: more than the {} its 32-bit size holds (a job of "
                                          "that many tasks is refused, not truncated)",
                                          bytes, UINT32_MAX));
  return FlatJob(static_cast<uint32_t>(bytes));
}

Result<CheckedSubmit> Kmd::check(SubmitDesc desc) const {
  if (Status st = validate_submit(*this, desc, info().cores); !st) return st.error();
  auto flat = lay_flat(desc);
  if (!flat) return flat.error();
  return CheckedSubmit(std::move(desc), serial_, std::move(*flat));
}

// The one check left per call: the job was checked by this Kmd. Its SubmitDesc cannot have
// changed since (CheckedSubmit hands it out const), and what the checks read of it (cores,
// tasks, the BOs' owners) is fixed for the Kmd's life; so is its flat layout, made from it.
Result<SubmitResult> Kmd::submit_checked(const CheckedSubmit& job) {
  if (job.by_ != serial_)
    return make_error(-EINVAL, job.by_ == 0 ? "submit: a job that was never checked"
                                            : "submit: a job checked by another device's kernel interface");
  return submit_flat(job.desc_, job.flat_);
}

Result<std::unique_ptr<PendingJob>> Kmd::submit_async_checked(const CheckedSubmit& job) {
  if (job.by_ != serial_)
    return make_error(-EINVAL, job.by_ == 0 ? "submit: a job that was never checked"
                                            : "submit: a job checked by another device's kernel interface");
  return submit_async_flat(job.desc_, job.flat_);
}

Status check_window_index(int window) {
  if (window >= 0 && window < hw::kMaxNpuWindows) return Status::success();
  return make_error(-EINVAL, fmt::format("NPU window {}: must be 0..{} (the vendor driver's {} IOMMU domains)", window,
                                         hw::kMaxNpuWindows - 1, hw::kMaxNpuWindows));
}

const char* kmd_kind_name(KmdKind kind) { return kind == KmdKind::rknpu ? "rknpu" : "rocket"; }

const char* async_mode_name(AsyncMode mode) {
  switch (mode) {
    case AsyncMode::fence: return "fence";
    case AsyncMode::blocking: return "blocking";
    case AsyncMode::prep_bo: return "prep_bo";
  }
  return "unknown";
}

}  // namespace ork::driver

namespace ork::driver {

void Kmd::note_handle(uint32_t handle) {
  std::lock_guard lock(handles_mutex_);
  handles_.insert(handle);
}

void Kmd::drop_handle(uint32_t handle) {
  std::lock_guard lock(handles_mutex_);
  handles_.erase(handle);
}

bool Kmd::has_handle(uint32_t handle) const {
  std::lock_guard lock(handles_mutex_);
  return handles_.count(handle) != 0;
}

void gem_close(Os& os, int drm_fd, uint32_t handle) noexcept {
  drm_gem_close args{.handle = handle, .pad = 0};
  if (int rc = ioctl_retry(os, drm_fd, DRM_IOCTL_GEM_CLOSE, &args))
    debug_log("kmd", "GEM_CLOSE of handle {} failed: {}", handle, errno_text(rc));
}

namespace {

Result<int> handle_to_fd(Os& os, int drm_fd, uint32_t handle) {
  drm_prime_handle args{.handle = handle, .flags = DRM_CLOEXEC | DRM_RDWR, .fd = -1};
  if (int rc = ioctl_retry(os, drm_fd, DRM_IOCTL_PRIME_HANDLE_TO_FD, &args))
    return make_error(rc, fmt::format("PRIME_HANDLE_TO_FD of handle {} failed: {}", handle, errno_text(rc)));
  return args.fd;
}

// PRIME_FD_TO_HANDLE; the errors name the fd.
Result<uint32_t> prime_fd_to_handle(Os& os, int drm_fd, int fd) {
  if (fd < 0) return make_error(-EBADF, fmt::format("dma-buf fd {}: not a file descriptor", fd));
  drm_prime_handle args{.handle = 0, .flags = 0, .fd = fd};
  int rc = ioctl_retry(os, drm_fd, DRM_IOCTL_PRIME_FD_TO_HANDLE, &args);
  if (rc == -EBADF) return make_error(rc, fmt::format("dma-buf fd {}: not an open file descriptor", fd));
  if (rc == -EINVAL) return make_error(rc, fmt::format("dma-buf fd {}: not a dma-buf", fd));
  if (rc) return make_error(rc, fmt::format("PRIME_FD_TO_HANDLE of fd {} failed: {}", fd, errno_text(rc)));
  return args.handle;
}

// The refusal of a dma-buf whose handle this file already holds.
Error already_held(int fd, uint32_t handle) {
  return make_error(-EEXIST, fmt::format("dma-buf fd {} is already buffer object {} of this device (exported by it "
                                         "or imported before): use that buffer",
                                         fd, handle));
}

// A BO over `handle`: a dma-buf fd of its own and the CPU mapping of `bytes` (page-rounded)
// through the dma-buf; on failure the handle is closed.
Result<std::unique_ptr<Bo>> map_import(Os& os, int drm_fd, Kmd& kmd, uint32_t handle, size_t bytes) {
  auto own = handle_to_fd(os, drm_fd, handle);
  if (!own) {
    gem_close(os, drm_fd, handle);
    return own.error();
  }
  const size_t size = (bytes + 4095) & ~size_t{4095};
  // dma_buf_mmap refuses a mapping past the dma-buf's size with EINVAL (dma-buf.c).
  int err = 0;
  void* cpu = os.mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, *own, 0, &err);
  if (!cpu) {
    os.close(*own);
    gem_close(os, drm_fd, handle);
    if (err == -EINVAL)
      return make_error(-EINVAL, fmt::format("the dma-buf is smaller than the {} bytes asked for", bytes));
    return make_error(err, fmt::format("mapping {} bytes of the dma-buf failed: {}", size, errno_text(err)));
  }
  auto bo = std::make_unique<Bo>(kmd, handle, 0, size, static_cast<uint8_t*>(cpu), 0);
  bo->set_dmabuf(*own, true);
  return bo;
}

}  // namespace

Result<std::unique_ptr<Bo>> Kmd::import_dmabuf(Os& os, int drm_fd, int fd, size_t bytes) {
  if (bytes == 0) return make_error(-EINVAL, "bo_import: bytes = 0");
  auto handle = prime_fd_to_handle(os, drm_fd, fd);
  if (!handle) return handle.error();
  if (has_handle(*handle)) return already_held(fd, *handle);
  auto bo = map_import(os, drm_fd, *this, *handle, bytes);
  if (bo) note_handle(*handle);
  return bo;
}

Result<int> export_bo(Os& os, int drm_fd, Bo& bo) {
  if (bo.dmabuf_fd() < 0) {
    auto own = handle_to_fd(os, drm_fd, bo.handle());
    if (!own) return own.error();
    bo.set_dmabuf(*own, false);
  }
  return handle_to_fd(os, drm_fd, bo.handle());
}

Status dmabuf_sync(Os& os, const Bo& bo, bool start, bool write) {
  if (bo.dmabuf_fd() < 0) return Status::success();
  ork_dma_buf_sync args{.flags = static_cast<__u64>((start ? ORK_DMA_BUF_SYNC_START : ORK_DMA_BUF_SYNC_END) |
                                                    (write ? ORK_DMA_BUF_SYNC_WRITE : ORK_DMA_BUF_SYNC_READ))};
  if (int rc = ioctl_retry(os, bo.dmabuf_fd(), ORK_DMA_BUF_IOCTL_SYNC, &args))
    return make_error(rc, fmt::format("DMA_BUF_IOCTL_SYNC ({} {}) of handle {} failed: {}", start ? "start" : "end",
                                      write ? "write" : "read", bo.handle(), errno_text(rc)));
  return Status::success();
}

void DrmKmd::release_mapping(Bo& bo) noexcept {
  if (int rc = os_.munmap(bo.map(), bo.size())) {
    debug_log("kmd", "{}: munmap of handle {} failed: {}", kmd_kind_name(info_.kind), bo.handle(), errno_text(rc));
  }
  close_dmabuf(os_, bo);
  drop_handle(bo.handle());
}

void close_dmabuf(Os& os, const Bo& bo) noexcept {
  if (bo.dmabuf_fd() < 0) return;
  if (int rc = os.close(bo.dmabuf_fd()))
    debug_log("kmd", "closing the dma-buf fd of handle {} failed: {}", bo.handle(), errno_text(rc));
}

}  // namespace ork::driver
