// The file-system boundary of lib/io: every syscall the weight readers make (open, pread,
// statx, fadvise, mmap, io_uring setup and registration) goes through a FileOs passed by
// reference, not a global, so tests can refuse io_uring, O_DIRECT or buffer
// registration, inject short reads and EINTR, and still compare bytes.
//
// One of two seams: devices are reached through driver::Os (driver/os/os.h: ioctl, poll,
// node discovery), stood in for by the fake kernel, while this one is stood in for by
// fault-injecting file systems; a run picks each independently. Why not one: docs/README.md,
// "Two OS seams, one convention".
//
// Convention (the kernel's and liburing's, the same as driver::Os): every call returns >= 0
// on success and a negative errno on failure; errno itself is never the channel. mmap
// returns nullptr and stores -errno in *error.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "driver/common/errno_text.h"
#include "driver/common/safe_file.h"

struct io_uring;  // liburing's ring; only the real FileOs and the io_uring engine see inside
struct iovec;

namespace ork::io {

// Direct-I/O alignment of one open file, in bytes. 0 = the file system did not say.
struct DioAlign {
  uint32_t mem_bytes = 0;     // buffer address alignment (statx stx_dio_mem_align)
  uint32_t offset_bytes = 0;  // file offset and length alignment (stx_dio_offset_align)
};

class FileOs {
 public:
  virtual ~FileOs() = default;
  virtual int open(const char* path, int flags) = 0;  // fd or -errno
  virtual int close(int fd) = 0;
  virtual ssize_t pread(int fd, void* buf, size_t length, off_t offset) = 0;  // bytes or -errno
  virtual int file_size(int fd, uint64_t* size_bytes) = 0;
  // statx(STATX_DIOALIGN) (Linux 6.1, commit 825cf206). -EOPNOTSUPP when the mask bit
  // comes back clear, i.e. the file system does not report it.
  virtual int dio_align(int fd, DioAlign* out) = 0;
  // Logical block size of the device under the file (sysfs), -ENOENT when there is none
  // (tmpfs, overlay). The second source of O_DIRECT alignment.
  virtual int logical_block_size(int fd, uint32_t* bytes) = 0;
  virtual int fadvise(int fd, off_t offset, off_t length, int advice) = 0;
  virtual void* mmap_file(int fd, size_t length, int* error) = 0;  // PROT_READ, MAP_SHARED
  virtual int munmap(void* addr, size_t length) = 0;
  // io_uring. Each returns what liburing returns (0 or -errno).
  virtual int uring_queue_init(unsigned entries, io_uring* ring, unsigned flags) = 0;
  virtual int uring_register_buffers(io_uring* ring, const iovec* iovecs, unsigned count) = 0;
  virtual int uring_register_files(io_uring* ring, const int* fds, unsigned count) = 0;
  // Fault-injection point: every io_uring completion result passes through here before the
  // engine looks at it (`requested` = bytes asked for). The real OS returns `result`
  // unchanged; a fake can shorten a read or turn it into -EINTR/-EAGAIN, which the kernel
  // does only rarely and never on demand.
  virtual int uring_completion(int result, size_t requested) { (void)requested; return result; }
};

// The process's real file system (stateless singleton).
FileOs& real_file_os();

// The message of a failed FileOs::open: "open PATH: ENOENT (No such file or directory)", or,
// for a path that is there but is not a regular file (the real FileOs refuses those with
// -EINVAL), "PATH: a FIFO, not a regular file".
inline std::string open_error(const std::string& path, int err) {
  if (err == -EINVAL)
    if (Status s = check_regular_input(path); !s && s.error().code == -EINVAL) return s.error().message;
  return "open " + echo_capped(path) + ": " + errno_text(err);
}

}  // namespace ork::io
