// Counts the heap allocations of the calling thread while counting is on, by replacing the
// global operator new (tests/support/alloc_counter.cpp, a source of the test executable: the
// replacement is the whole program's, so such a test is an executable of its own). A test of the
// per-call path turns counting on around steady-state calls and wraps the kernel (the Os) in
// KernelNotCounted, so what it counts is the library's own allocations, not the kernel's or
// the emulator's (docs/library.md "The job a submit reads, flat").
#pragma once

#include <string>
#include <vector>

#include "driver/os/os.h"

namespace ork::test {

inline thread_local bool alloc_counting = false;
inline thread_local long alloc_count = 0;

// The allocations of the calling thread while `fn` runs, the kernel's left out.
template <class Fn>
long allocations_in(Fn&& fn) {
  alloc_count = 0;
  alloc_counting = true;
  fn();
  alloc_counting = false;
  return alloc_count;
}

// fn() with counting off.
template <class Fn>
auto uncounted(Fn&& fn) {
  const bool was = alloc_counting;
  alloc_counting = false;
  auto r = fn();
  alloc_counting = was;
  return r;
}

// An Os that hands every call to `inner` with counting off: the kernel (real or emulated)
// allocates as it likes; the library's side of each call is what is counted.
class KernelNotCounted final : public driver::Os {
 public:
  explicit KernelNotCounted(driver::Os& inner) : inner_(inner) {}
  int open(const char* path, int flags) override { return uncounted([&] { return inner_.open(path, flags); }); }
  int close(int fd) override { return uncounted([&] { return inner_.close(fd); }); }
  int ioctl(int fd, unsigned long request, void* arg) override {
    return uncounted([&] { return inner_.ioctl(fd, request, arg); });
  }
  void* mmap(void* addr, size_t len, int prot, int flags, int fd, off_t offset, int* error) override {
    return uncounted([&] { return inner_.mmap(addr, len, prot, flags, fd, offset, error); });
  }
  int munmap(void* addr, size_t len) override { return uncounted([&] { return inner_.munmap(addr, len); }); }
  int poll(struct pollfd* fds, nfds_t n, int timeout_ms) override {
    return uncounted([&] { return inner_.poll(fds, n, timeout_ms); });
  }
  std::vector<std::string> list_nodes(const char* glob) override {
    return uncounted([&] { return inner_.list_nodes(glob); });
  }

 private:
  driver::Os& inner_;
};

}  // namespace ork::test
