// The OS boundary to a device: every syscall the driver makes to a device node goes through an
// Os passed by reference, not a global, so the emulator and tests can stand in.
// Implementations: the real one (os_real.cpp), the emulated NPU's fake kernel
// (driver/emu/kernel/fake_kernel.h), test fakes.
//
// One of two seams: the model file is read through lib/io's FileOs (lib/io/file_os.h:
// pread, statx, io_uring), stood in for by fault-injecting file systems, while this one is
// stood in for by the fake kernel; a run picks each independently (an emulated NPU reading a
// real file). Why not one: docs/README.md, "Two OS seams, one convention".
//
// Convention (the kernel's and liburing's, the same as lib/io's FileOs): every call returns
// >= 0 on success and a negative errno on failure; errno is never the channel, so nothing
// between the failing call and the code that reads the error can overwrite it. mmap returns
// nullptr on failure and stores the negative errno in *error. Only driver/os/ioctl.cpp calls
// Os::ioctl; everything else uses ork::driver::ioctl_retry(), which retries EINTR/EAGAIN.
#pragma once

#include <poll.h>
#include <sys/types.h>

#include <cstddef>
#include <string>
#include <vector>

namespace ork::driver {

class Os {
 public:
  virtual ~Os() = default;
  virtual int open(const char* path, int flags) = 0;  // fd or -errno
  virtual int close(int fd) = 0;                      // 0 or -errno
  virtual int ioctl(int fd, unsigned long request, void* arg) = 0;  // >= 0 or -errno
  // The mapping, or nullptr with -errno in *error (never MAP_FAILED).
  virtual void* mmap(void* addr, size_t length, int prot, int flags, int fd, off_t offset,
                     int* error) = 0;
  virtual int munmap(void* addr, size_t length) = 0;  // 0 or -errno
  // poll(2): waits on sync_file fds (the rknpu FENCE_OUT fence of a NONBLOCK job). Returns
  // the ready count, 0 when timeout_ms (-1 = forever) elapsed, -errno on failure.
  virtual int poll(struct pollfd* fds, nfds_t nfds, int timeout_ms) = 0;
  // Device-node discovery: the paths of the nodes that exist, e.g. every /dev/accel/accel*.
  // The real Os globs the file system; the fake kernel returns the nodes it emulates.
  virtual std::vector<std::string> list_nodes(const char* glob_pattern) = 0;
};

// The process's real OS (a singleton without state).
Os& real_os();

}  // namespace ork::driver
