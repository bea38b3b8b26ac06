// dma-buf in the fake kernel: the DRM core's PRIME ioctls on every node, and the dma-buf
// fds they hand out. A dma-buf is a memfd named kDmabufName: exporting a BO moves its host
// pages into one (same address, so every mapping and the NPU's view stay valid), importing
// maps it, so the bytes are shared between emulated devices of one process, as between a
// GPU and the NPU on a board. docs/kernel-interfaces.md "dma-buf".
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "driver/emu/kernel/fake_kernel_state.h"
#include "uapi/dma_buf.h"

namespace ork::emu {
namespace {

// Moves `bo`'s host pages into a new memfd, keeping their address: 0 or -errno.
int make_dmabuf(BoObject& bo) {
  const int fd = static_cast<int>(::syscall(SYS_memfd_create, kDmabufName, MFD_CLOEXEC | MFD_ALLOW_SEALING));
  if (fd < 0) return -errno;
  auto fail = [&](int err) {
    ::syscall(SYS_close, fd);
    return -err;
  };
  if (::syscall(SYS_ftruncate, fd, bo.bytes) != 0) return fail(errno);
  for (uint64_t done = 0; done < bo.bytes;) {
    const long n = ::syscall(SYS_pwrite64, fd, bo.host + done, bo.bytes - done, done);
    if (n <= 0) return fail(n == 0 ? EIO : errno);
    done += static_cast<uint64_t>(n);
  }
  // A dma-buf never changes size: sealed, so nobody can truncate it under a mapping.
  if (::syscall(SYS_fcntl, fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0) return fail(errno);
  const long addr = ::syscall(SYS_mmap, bo.host, bo.bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0);
  if (addr == -1) return fail(errno);
  struct stat st {};
  if (::syscall(SYS_fstat, fd, &st) != 0) return fail(errno);
  bo.memfd = fd;
  bo.dmabuf_ino = st.st_ino;
  return 0;
}

BoObject* object_of_dmabuf(KernelState& k, uint64_t ino) {
  for (auto& [id, bo] : k.objects)
    if (bo->dmabuf_ino == ino) return bo;
  return nullptr;
}

}  // namespace

bool fake_dmabuf(int fd, uint64_t* ino, uint64_t* size, int* err) {
  struct stat st {};
  if (fd < 0 || ::syscall(SYS_fstat, fd, &st) != 0) {
    *err = EBADF;
    return false;
  }
  char link[128] = {};
  const std::string path = "/proc/self/fd/" + std::to_string(fd);
  const long n = ::syscall(SYS_readlinkat, AT_FDCWD, path.c_str(), link, sizeof(link) - 1);
  const std::string want = std::string("/memfd:") + kDmabufName;
  if (n < 0 || std::strncmp(link, want.c_str(), want.size()) != 0) {
    *err = EINVAL;  // dma_buf_get() of a file that is not a dma-buf
    return false;
  }
  *ino = st.st_ino;
  *size = static_cast<uint64_t>(st.st_size);
  *err = 0;
  return true;
}

int handle_prime_handle_to_fd(IoctlContext& ctx) {
  auto* args = static_cast<drm_prime_handle*>(ctx.arg);
  if (args->flags & ~static_cast<uint32_t>(DRM_CLOEXEC | DRM_RDWR)) return -EINVAL;
  std::shared_ptr<BoObject> bo = ctx.kernel.lookup(ctx.file, args->handle);
  if (!bo) return -ENOENT;  // drm_gem_prime_handle_to_fd: no such handle
  if (bo->memfd < 0)
    if (int rc = make_dmabuf(*bo); rc != 0) return rc;
  const int fd = static_cast<int>(
      ::syscall(SYS_fcntl, bo->memfd, (args->flags & DRM_CLOEXEC) ? F_DUPFD_CLOEXEC : F_DUPFD, 0));
  if (fd < 0) return -errno;
  args->fd = fd;
  ++ctx.kernel.stats.dmabuf_exports;
  return 0;
}

int handle_prime_fd_to_handle(IoctlContext& ctx) {
  auto* args = static_cast<drm_prime_handle*>(ctx.arg);
  uint64_t ino = 0, size = 0;
  int err = 0;
  if (!fake_dmabuf(args->fd, &ino, &size, &err)) return -err;
  // The DRM core's prime lookup: a dma-buf this file holds gets its handle back; one this
  // device knows (exported by it, or imported through another file) its object.
  for (const auto& [handle, object] : ctx.file.handles) {
    if (object->dmabuf_ino == ino) {
      args->handle = handle;
      ++ctx.kernel.stats.dmabuf_imports;
      return 0;
    }
  }
  std::shared_ptr<BoObject> obj;
  if (BoObject* known = object_of_dmabuf(ctx.kernel, ino)) {
    for (auto& [fd, file] : ctx.kernel.files)
      if (!obj) obj = ctx.kernel.lookup_any(file, known);
    for (auto& [addr, m] : ctx.kernel.mappings)
      if (!obj && m.bo.get() == known) obj = m.bo;
  }
  if (!obj) {
    const long addr = ::syscall(SYS_mmap, nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, args->fd, 0);
    if (addr == -1) return -errno;
    const int keep = static_cast<int>(::syscall(SYS_fcntl, args->fd, F_DUPFD_CLOEXEC, 0));
    if (keep < 0) {
      const int e = errno;
      ::syscall(SYS_munmap, addr, size);
      return -e;
    }
    auto* host = reinterpret_cast<uint8_t*>(addr);
    obj = std::make_shared<BoObject>(ctx.kernel, ctx.file.space, ctx.kernel.next_bo_id++, size, host, host, 0, 0,
                                     /*imported=*/true);
    obj->memfd = keep;
    obj->dmabuf_ino = ino;
  }
  args->handle = ctx.file.next_handle++;
  ctx.file.handles.emplace(args->handle, std::move(obj));
  ++ctx.kernel.stats.dmabuf_imports;
  return 0;
}

int dmabuf_ioctl(KernelState& kernel, unsigned long request, void* arg) {
  if (request != ORK_DMA_BUF_IOCTL_SYNC) return -ENOTTY;
  if (!arg) return -EFAULT;
  ork_dma_buf_sync sync{};
  std::memcpy(&sync, arg, sizeof(sync));
  // dma_buf_ioctl(): unknown bits, or neither READ nor WRITE, are -EINVAL.
  if ((sync.flags & ~static_cast<__u64>(ORK_DMA_BUF_SYNC_VALID_FLAGS_MASK)) || !(sync.flags & ORK_DMA_BUF_SYNC_RW))
    return -EINVAL;
  ++kernel.stats.dmabuf_syncs;
  return 0;
}

}  // namespace ork::emu
