// The fake kernel's Os face: open/close/mmap/munmap and the DRM core's ioctl dispatch.
#include "driver/emu/kernel/fake_kernel.h"

#include <fcntl.h>
#include <fnmatch.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "driver/emu/kernel/fake_kernel_state.h"
#include "uapi/rknpu_ioctl.h"
#include "uapi/rocket_accel.h"

namespace ork::emu {
namespace {

using Handler = int (*)(IoctlContext&);

struct IoctlDesc {
  unsigned nr;         // _IOC_NR
  size_t kernel_size;  // the driver's struct size (the DRM core zero-extends to it)
  Handler handler;
};

// DRM core ioctls every node answers, then each driver's table (nr = DRM_COMMAND_BASE + n).
constexpr IoctlDesc kCoreIoctls[] = {
    {_IOC_NR(DRM_IOCTL_VERSION), sizeof(struct drm_version), handle_drm_version},
    {_IOC_NR(DRM_IOCTL_GEM_CLOSE), sizeof(struct drm_gem_close), handle_drm_gem_close},
    {_IOC_NR(DRM_IOCTL_PRIME_HANDLE_TO_FD), sizeof(struct drm_prime_handle), handle_prime_handle_to_fd},
    {_IOC_NR(DRM_IOCTL_PRIME_FD_TO_HANDLE), sizeof(struct drm_prime_handle), handle_prime_fd_to_handle},
};
constexpr IoctlDesc kRknpuIoctls[] = {
    {DRM_COMMAND_BASE + DRM_RKNPU_ACTION, sizeof(struct rknpu_action), handle_rknpu_action},
    {DRM_COMMAND_BASE + DRM_RKNPU_SUBMIT, sizeof(struct rknpu_submit), handle_rknpu_submit},
    {DRM_COMMAND_BASE + DRM_RKNPU_MEM_CREATE, sizeof(struct rknpu_mem_create),
     handle_rknpu_mem_create},
    {DRM_COMMAND_BASE + DRM_RKNPU_MEM_MAP, sizeof(struct rknpu_mem_map), handle_rknpu_mem_map},
    {DRM_COMMAND_BASE + DRM_RKNPU_MEM_DESTROY, sizeof(struct rknpu_mem_destroy),
     handle_rknpu_mem_destroy},
    {DRM_COMMAND_BASE + DRM_RKNPU_MEM_SYNC, sizeof(struct rknpu_mem_sync), handle_rknpu_mem_sync},
};
constexpr IoctlDesc kRocketIoctls[] = {
    {DRM_COMMAND_BASE + DRM_ROCKET_CREATE_BO, sizeof(drm_rocket_create_bo),
     handle_rocket_create_bo},
    {DRM_COMMAND_BASE + DRM_ROCKET_SUBMIT, sizeof(drm_rocket_submit), handle_rocket_submit},
    {DRM_COMMAND_BASE + DRM_ROCKET_PREP_BO, sizeof(drm_rocket_prep_bo), handle_rocket_prep_bo},
    {DRM_COMMAND_BASE + DRM_ROCKET_FINI_BO, sizeof(drm_rocket_fini_bo), handle_rocket_fini_bo},
};

const IoctlDesc* find_ioctl(NodeKind kind, unsigned nr) {
  for (const IoctlDesc& desc : kCoreIoctls) {
    if (desc.nr == nr) return &desc;
  }
  if (kind == NodeKind::display) return nullptr;  // another driver: none of the NPU's ioctls
  if (kind == NodeKind::rocket) {
    for (const IoctlDesc& desc : kRocketIoctls) {
      if (desc.nr == nr) return &desc;
    }
  } else {
    for (const IoctlDesc& desc : kRknpuIoctls) {
      if (desc.nr == nr) return &desc;
    }
  }
  return nullptr;
}

// A refusal in the Os convention (driver/os/os.h): the negative errno.
constexpr int fail(int err) { return -err; }

// A raw syscall's result in the Os convention: itself, or -errno when it failed.
int sys_result(long rc) { return rc == -1 ? -errno : static_cast<int>(rc); }

// The rule point of an ioctl: the call both uAPIs make for the same purpose.
FaultPoint point_of(NodeKind kind, unsigned nr) {
  const unsigned n = nr - DRM_COMMAND_BASE;
  if (nr == _IOC_NR(DRM_IOCTL_GEM_CLOSE)) return FaultPoint::destroy;
  if (nr < DRM_COMMAND_BASE) return FaultPoint::ioctl;
  if (kind == NodeKind::rocket) {
    switch (n) {
      case DRM_ROCKET_CREATE_BO: return FaultPoint::create;
      case DRM_ROCKET_SUBMIT: return FaultPoint::submit;
      case DRM_ROCKET_PREP_BO:
      case DRM_ROCKET_FINI_BO: return FaultPoint::sync;
      default: return FaultPoint::ioctl;
    }
  }
  switch (n) {
    case DRM_RKNPU_ACTION: return FaultPoint::action;
    case DRM_RKNPU_SUBMIT: return FaultPoint::submit;
    case DRM_RKNPU_MEM_CREATE: return FaultPoint::create;
    case DRM_RKNPU_MEM_MAP: return FaultPoint::map;
    case DRM_RKNPU_MEM_DESTROY: return FaultPoint::destroy;
    case DRM_RKNPU_MEM_SYNC: return FaultPoint::sync;
    default: return FaultPoint::ioctl;
  }
}

// Consumes one injected fault, if any applies to this ioctl: the errno, else 0.
int injected_fault(Faults& faults, NodeKind kind, unsigned nr) {
  if (faults.gone) return ENODEV;
  if (int err = fire_call_rules(faults, point_of(kind, nr))) return err;
  if (faults.transient_ioctls > 0) {
    --faults.transient_ioctls;
    return faults.transient_errno;
  }
  if (faults.fail_times > 0 && faults.fail_nr == static_cast<int>(nr)) {
    --faults.fail_times;
    return faults.fail_errno;
  }
  return 0;
}

}  // namespace

FakeKernel::FakeKernel(FakeKernelConfig config)
    : state_(std::make_unique<KernelState>(std::move(config))) {
  if (state_->config.cores < 1) state_->config.cores = 1;
  if (state_->config.cores > kMaxCores) state_->config.cores = kMaxCores;
}

FakeKernel::~FakeKernel() {
  std::lock_guard lock(state_->mutex);
  state_->mappings.clear();
  for (auto& [fd, file] : state_->files) {
    file.handles.clear();
    ::syscall(SYS_close, fd);
  }
  state_->files.clear();
  for (auto& [fd, fence] : state_->fences) ::syscall(SYS_close, fd);
  state_->fences.clear();
}

bool FakeKernel::emulates(const char* path) const {
  if (!path) return false;
  const FakeKernelConfig& c = state_->config;
  if (c.rknpu && (c.rknpu_card == path || c.rknpu_render == path)) return true;
  if (!c.display_card.empty() && c.display_card == path) return true;
  return c.rocket && c.rocket_node == path;
}

int FakeKernel::open(const char* path, int flags) {
  if (!emulates(path)) return fail(ENOENT);
  {
    std::lock_guard lock(state_->mutex);
    if (state_->faults.gone) return fail(ENOENT);  // the node has vanished
    // An injected refusal (ORK_EMU_FAULTS open:eacces): a node that exists but this user
    // may not open, as on a board without the video/render group.
    if (int err = fire_call_rules(state_->faults, FaultPoint::open)) return fail(err);
  }
  if ((flags & O_ACCMODE) != O_RDWR) return fail(EACCES);  // DRM nodes are opened O_RDWR
  // A real descriptor number, so that the fd never collides with the process's own. A raw
  // syscall: under the shim ::open is the interposer.
  int fd = static_cast<int>(::syscall(SYS_openat, AT_FDCWD, "/dev/null", O_RDWR | O_CLOEXEC));
  if (fd < 0) return -errno;
  std::lock_guard lock(state_->mutex);
  const FakeKernelConfig& c = state_->config;
  File file;
  if (c.rocket && c.rocket_node == path) {
    file.kind = NodeKind::rocket;
    // Each rocket file has its own IOMMU domain over the aperture, allocated bottom-up by a
    // drm_mm (rocket_gem.c). Page 0 is kept out so that no BO has IOVA 0.
    file.space =
        std::make_shared<AddressSpace>(IovaAllocator::Direction::bottom_up, kPageBytes, c.window_bytes,
                                       &state_->weights, c.int8_engine);
  } else {
    file.kind = c.rknpu_card == path     ? NodeKind::rknpu_card
                : c.display_card == path ? NodeKind::display
                                         : NodeKind::rknpu_render;
    file.space = state_->rknpu_space(0);  // display: never used (it creates no BOs)
  }
  state_->files.emplace(fd, std::move(file));
  return fd;
}

int FakeKernel::close(int fd) {
  std::lock_guard lock(state_->mutex);
  if (state_->fences.erase(fd)) {  // a sync_file: its fence goes with its last fd
    ::syscall(SYS_close, fd);
    return 0;
  }
  auto it = state_->files.find(fd);
  if (it == state_->files.end()) {
    uint64_t ino = 0, size = 0;
    int err = 0;
    if (!fake_dmabuf(fd, &ino, &size, &err)) return fail(EBADF);
    return sys_result(::syscall(SYS_close, fd));  // a dma-buf fd: only the fd goes
  }
  // Like the DRM core's postclose: the file's handles go; BOs still mapped stay alive.
  state_->stats.handles_open_at_close += it->second.handles.size();
  state_->files.erase(it);
  ::syscall(SYS_close, fd);
  return 0;
}

int FakeKernel::ioctl(int fd, unsigned long request, void* arg) {
  std::unique_lock lock(state_->mutex);
  ++state_->stats.ioctls;
  auto it = state_->files.find(fd);
  if (it == state_->files.end()) {
    uint64_t ino = 0, size = 0;
    int err = 0;
    if (!fake_dmabuf(fd, &ino, &size, &err)) return fail(EBADF);
    const int ret = dmabuf_ioctl(*state_, request, arg);
    return ret < 0 ? ret : 0;
  }
  if (int err = injected_fault(state_->faults, it->second.kind, _IOC_NR(request))) return fail(err);
  if (_IOC_TYPE(request) != DRM_IOCTL_BASE) return fail(ENOTTY);
  const IoctlDesc* desc = find_ioctl(it->second.kind, _IOC_NR(request));
  if (!desc) return fail(EINVAL);
  // Like drm_ioctl(): copy in the caller's size, zero-extend to the driver's struct, run the
  // handler, copy the caller's size back out even on failure (SUBMIT's -ETIMEDOUT carries
  // task_counter out this way).
  size_t user_size = _IOC_SIZE(request);
  bool in = _IOC_DIR(request) & _IOC_WRITE;
  bool out = _IOC_DIR(request) & _IOC_READ;
  if (user_size && !arg) return fail(EFAULT);
  std::vector<uint8_t> kdata(std::max(user_size, desc->kernel_size), 0);
  if (in) std::memcpy(kdata.data(), arg, user_size);
  IoctlContext ctx{*state_, it->second, kdata.data()};
  int ret = desc->handler(ctx);
  if (out) std::memcpy(arg, kdata.data(), user_size);
  lock.unlock();
  // Timed mode: completion really takes the modelled time, slept without the lock.
  if (ctx.sleep_until > std::chrono::steady_clock::now())
    std::this_thread::sleep_until(ctx.sleep_until);
  return ret < 0 ? ret : 0;
}

void* FakeKernel::mmap(void* addr, size_t length, int prot, int flags, int fd, off_t offset, int* error) {
  (void)prot;
  std::lock_guard lock(state_->mutex);
  auto it = state_->files.find(fd);
  if (it == state_->files.end()) return map_dmabuf(length, prot, flags, fd, offset, error);
  auto refuse = [error](int err) -> void* { return *error = -err, nullptr; };
  if (state_->faults.gone) return refuse(ENODEV);
  if (int err = fire_call_rules(state_->faults, FaultPoint::mmap)) return refuse(err);
  (void)addr;  // a hint only; MAP_FIXED is refused below
  if (length == 0 || (flags & MAP_FIXED) || !(flags & MAP_SHARED)) return refuse(EINVAL);
  BoObject* bo = state_->find_by_offset(static_cast<uint64_t>(offset));
  if (!bo || length > bo->bytes) return refuse(EINVAL);
  // drm_vma_node_is_allowed(): only a file holding a handle may map the object.
  std::shared_ptr<BoObject> owned = state_->lookup_any(it->second, bo);
  if (!owned) return refuse(EACCES);
  // Every mapping of a BO is its host pages: the same address each time (an emulator
  // simplification; a kernel would hand out distinct virtual addresses).
  Mapping& mapping = state_->mappings[bo->host];
  mapping.bo = std::move(owned);
  ++mapping.count;
  return bo->host;
}

int FakeKernel::munmap(void* addr, size_t length) {
  (void)length;
  std::lock_guard lock(state_->mutex);
  if (auto d = state_->dmabuf_mappings.find(static_cast<const uint8_t*>(addr)); d != state_->dmabuf_mappings.end()) {
    ::syscall(SYS_munmap, addr, d->second);
    state_->dmabuf_mappings.erase(d);
    return 0;
  }
  auto it = state_->mappings.find(static_cast<const uint8_t*>(addr));
  if (it == state_->mappings.end()) return fail(EINVAL);
  if (--it->second.count == 0) state_->mappings.erase(it);
  return 0;
}

int FakeKernel::poll(struct pollfd* fds, nfds_t nfds, int timeout_ms) {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point until =
      timeout_ms < 0 ? Clock::time_point::max() : Clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    std::unique_lock lock(state_->mutex);
    const Clock::time_point now = Clock::now();
    Clock::time_point next = Clock::time_point::max();  // the earliest fence still to signal
    int ready = 0;
    for (nfds_t i = 0; i < nfds; ++i) {
      fds[i].revents = 0;
      auto it = state_->fences.find(fds[i].fd);
      if (it == state_->fences.end()) {
        // A DRM file has nothing to read here (no events); anything else is not ours.
        if (!state_->files.count(fds[i].fd)) fds[i].revents = POLLNVAL;
      } else if (it->second->signals && it->second->ready_at <= now && !state_->faults.hold_jobs) {
        fds[i].revents = static_cast<short>(fds[i].events & (POLLIN | POLLRDNORM));
      } else if (it->second->signals) {
        // A held job is looked at again every millisecond: the hold is lifted by a test.
        next = std::min(next, state_->faults.hold_jobs ? now + std::chrono::milliseconds(1) : it->second->ready_at);
      }
      if (fds[i].revents) ++ready;
    }
    if (ready || timeout_ms == 0 || now >= until) return ready;
    // Fast mode: an unsignalled fence is a wedged job; its timeout is reported, not slept.
    if (next == Clock::time_point::max() && state_->config.timing == TimingMode::fast) return 0;
    lock.unlock();
    std::this_thread::sleep_until(std::min(next, until));
  }
}

std::vector<std::string> FakeKernel::list_nodes(const char* glob_pattern) {
  const FakeKernelConfig& c = state_->config;
  std::vector<std::string> nodes;
  for (const std::string* node : {&c.display_card, &c.rknpu_card, &c.rknpu_render, &c.rocket_node}) {
    bool present = node == &c.display_card ? !node->empty() : node == &c.rocket_node ? c.rocket : c.rknpu;
    if (present && fnmatch(glob_pattern, node->c_str(), 0) == 0) nodes.push_back(*node);
  }
  return nodes;
}

bool FakeKernel::owns_fd(int fd) const {
  {
    std::lock_guard lock(state_->mutex);
    if (state_->files.count(fd) != 0 || state_->fences.count(fd) != 0) return true;
  }
  uint64_t ino = 0, size = 0;
  int err = 0;
  return fake_dmabuf(fd, &ino, &size, &err);  // the emulated dma-bufs answer their ioctls here
}

bool FakeKernel::owns_mapping(const void* addr) const {
  std::lock_guard lock(state_->mutex);
  const auto* p = static_cast<const uint8_t*>(addr);
  return state_->mappings.count(p) != 0 || state_->dmabuf_mappings.count(p) != 0;
}

// mmap of an emulated dma-buf fd (the dma-buf's own mmap): shared, inside its size (with the
// lock held by the caller).
void* FakeKernel::map_dmabuf(size_t length, int prot, int flags, int fd, off_t offset, int* error) {
  uint64_t ino = 0, size = 0;
  int err = 0;
  if (!fake_dmabuf(fd, &ino, &size, &err)) return *error = -EBADF, nullptr;
  // dma_buf_mmap_internal(): a mapping past the end is -EINVAL.
  if (length == 0 || offset < 0 || (flags & MAP_FIXED) || !(flags & MAP_SHARED) ||
      static_cast<uint64_t>(offset) + length > ((size + kPageBytes - 1) & ~(kPageBytes - 1)))
    return *error = -EINVAL, nullptr;
  const long addr = ::syscall(SYS_mmap, nullptr, length, prot, MAP_SHARED, fd, offset);
  if (addr == -1) return *error = -errno, nullptr;
  state_->dmabuf_mappings[reinterpret_cast<const uint8_t*>(addr)] = length;
  return reinterpret_cast<void*>(addr);
}

const FakeKernelConfig& FakeKernel::config() const { return state_->config; }
Faults& FakeKernel::faults() { return state_->faults; }

KernelStats FakeKernel::stats() const {
  std::lock_guard lock(state_->mutex);
  return state_->stats;
}

uint64_t FakeKernel::chain_ns() const {
  std::lock_guard lock(state_->mutex);
  return state_->stats.chain_ns;
}

size_t FakeKernel::live_bo_count() const {
  std::lock_guard lock(state_->mutex);
  return state_->objects.size();
}

std::optional<WindowUsage> FakeKernel::window_usage(int node_fd, int domain) const {
  std::lock_guard lock(state_->mutex);
  auto it = state_->files.find(node_fd);
  if (it == state_->files.end() || !it->second.space || domain < 0 || domain >= kRknpuDomains) return std::nullopt;
  const bool rocket = it->second.kind == NodeKind::rocket;
  if (rocket && domain != 0) return std::nullopt;  // a rocket file has one domain, its own
  const auto& space = rocket ? it->second.space : state_->rknpu_domains[static_cast<size_t>(domain)];
  if (!space) return std::nullopt;  // never named yet: the driver has not made it
  const IovaAllocator& a = space->iova;
  return WindowUsage{a.window_bytes(), a.used_bytes(), a.largest_gap()};
}

Result<uint64_t> window_bytes_from_env() {
  const char* text = std::getenv("ORK_EMU_WINDOW");
  if (text == nullptr || *text == '\0') return hw::kNpuWindowBytes;
  char* end = nullptr;
  errno = 0;
  const unsigned long long n = std::strtoull(text, &end, 10);
  uint64_t unit = 1;
  if (*end == 'K' || *end == 'k') unit = uint64_t{1} << 10;
  if (*end == 'M' || *end == 'm') unit = uint64_t{1} << 20;
  if (*end == 'G' || *end == 'g') unit = uint64_t{1} << 30;
  if (unit != 1) ++end;
  const bool number = end != text && *end == '\0' && errno == 0 && text[0] >= '0' && text[0] <= '9';
  if (!number || n > hw::kNpuWindowBytes / unit || n * unit < (uint64_t{1} << 20) || n * unit > hw::kNpuWindowBytes)
    return make_error(-EINVAL, std::string("ORK_EMU_WINDOW=") + text +
                                   ": must be a size from 1M to 4G (bytes, or with K, M or G), the emulated NPU's "
                                   "address window per IOMMU domain or rocket file");
  return n * unit;
}

size_t FakeKernel::open_fence_count() const {
  std::lock_guard lock(state_->mutex);
  return state_->fences.size();
}

WeightCache::Stats FakeKernel::weight_cache_stats() const { return state_->weights.stats(); }  // its own lock

size_t FakeKernel::open_file_count() const {
  std::lock_guard lock(state_->mutex);
  return state_->files.size();
}

}  // namespace ork::emu
