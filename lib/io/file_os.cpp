// The real FileOs: thin wrappers that turn libc's (-1, errno) into -errno.
#include "lib/io/file_os.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include <fmt/format.h>

#include "ork_config.h"
#if ORK_HAVE_URING
#include <liburing.h>
#endif

namespace ork::io {
namespace {

int neg_errno() { return errno > 0 ? -errno : -EIO; }

// Reads one unsigned decimal from a sysfs file; -ENOENT when the file is missing.
int read_sysfs_u32(const std::string& path, uint32_t* out) {
  FILE* f = std::fopen(path.c_str(), "r");
  if (f == nullptr) return -ENOENT;
  unsigned value = 0;
  const int got = std::fscanf(f, "%u", &value);
  std::fclose(f);
  if (got != 1 || value == 0) return -EINVAL;
  *out = value;
  return 0;
}

class RealFileOs final : public FileOs {
 public:
  // A read-only open takes regular files only, without blocking on a FIFO
  // (driver/common/safe_file.h open_regular_input): -EINVAL for anything else, which
  // open_error names.
  int open(const char* path, int flags) override {
    if ((flags & O_ACCMODE) == O_RDONLY) {
      auto fd = open_regular_input(path, flags);
      return fd ? *fd : fd.error().code;
    }
    int fd;
    do {
      fd = ::open(path, flags | O_CLOEXEC);
    } while (fd < 0 && errno == EINTR);
    return fd < 0 ? neg_errno() : fd;
  }
  int close(int fd) override { return ::close(fd) < 0 ? neg_errno() : 0; }
  ssize_t pread(int fd, void* buf, size_t length, off_t offset) override {
    const ssize_t n = ::pread(fd, buf, length, offset);
    return n < 0 ? neg_errno() : n;
  }
  int file_size(int fd, uint64_t* size_bytes) override {
    struct stat st {};
    if (::fstat(fd, &st) < 0) return neg_errno();
    *size_bytes = static_cast<uint64_t>(st.st_size);
    return 0;
  }
  int dio_align(int fd, DioAlign* out) override;
  int logical_block_size(int fd, uint32_t* bytes) override;
  int fadvise(int fd, off_t offset, off_t length, int advice) override {
    return -::posix_fadvise(fd, offset, length, advice);  // returns a positive errno itself
  }
  void* mmap_file(int fd, size_t length, int* error) override {
    void* p = ::mmap(nullptr, length, PROT_READ, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
      *error = neg_errno();
      return nullptr;
    }
    return p;
  }
  int munmap(void* addr, size_t length) override {
    return ::munmap(addr, length) < 0 ? neg_errno() : 0;
  }
#if ORK_HAVE_URING
  int uring_queue_init(unsigned entries, io_uring* ring, unsigned flags) override {
    return io_uring_queue_init(entries, ring, flags);
  }
  int uring_register_buffers(io_uring* ring, const iovec* iovecs, unsigned count) override {
    return io_uring_register_buffers(ring, iovecs, count);
  }
  int uring_register_files(io_uring* ring, const int* fds, unsigned count) override {
    return io_uring_register_files(ring, fds, count);
  }
#else
  int uring_queue_init(unsigned, io_uring*, unsigned) override { return -ENOSYS; }
  int uring_register_buffers(io_uring*, const iovec*, unsigned) override { return -ENOSYS; }
  int uring_register_files(io_uring*, const int*, unsigned) override { return -ENOSYS; }
#endif
};

// STATX_DIOALIGN and the stx_dio_* fields come from linux/stat.h (6.1), which glibc's
// <sys/stat.h> includes when present.
int RealFileOs::dio_align(int fd, DioAlign* out) {
  struct statx stx {};
  if (::statx(fd, "", AT_EMPTY_PATH, STATX_DIOALIGN, &stx) < 0) return neg_errno();
  if ((stx.stx_mask & STATX_DIOALIGN) == 0) return -EOPNOTSUPP;
  out->mem_bytes = stx.stx_dio_mem_align;
  out->offset_bytes = stx.stx_dio_offset_align;
  return 0;
}

// /sys/dev/block/MAJ:MIN/queue/logical_block_size; a partition has no queue/ of its own,
// so its parent's is tried next.
int RealFileOs::logical_block_size(int fd, uint32_t* bytes) {
  struct stat st {};
  if (::fstat(fd, &st) < 0) return neg_errno();
  const std::string dev =
      fmt::format("/sys/dev/block/{}:{}", major(st.st_dev), minor(st.st_dev));
  if (read_sysfs_u32(dev + "/queue/logical_block_size", bytes) == 0) return 0;
  return read_sysfs_u32(dev + "/../queue/logical_block_size", bytes);
}

}  // namespace

FileOs& real_file_os() {
  static RealFileOs os;
  return os;
}

}  // namespace ork::io
