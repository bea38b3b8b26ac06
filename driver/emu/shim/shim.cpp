// libork_emu_shim.so: an LD_PRELOAD library that serves the emulated NPU's device nodes
// (/dev/dri/card1, /dev/dri/renderD129, /dev/accel/accel0, and the display's /dev/dri/card0)
// from the fake kernel, so that
// unmodified programs (tests-hw, tools, anything speaking the rknpu or rocket uAPI) run off
// the board. Idea from Mesa's drm-shim (docs/hardware.md section 7); the code is ours.
//
// Interposed: open/open64/openat/openat64 (and the _FORTIFY_SOURCE __open*_2 forms), close,
// ioctl, mmap/mmap64, munmap, poll (rknpu fences). A call that is not for an emulated node, fd or mapping goes to
// the next definition (libc). Discovery needs nothing of the shim's own: shim_fs.cpp serves
// the emulated machine's /dev/dri, /dev/accel and sysfs entries (fake_tree.h), so libork's
// real Os finds the nodes with the code a board runs (libdrm's drmGetDevices2, a /dev/accel
// scan, the DRM driver-name check); opens of those tree paths are redirected here.
// Only the symbols in shim.map are exported; the fake kernel inside stays private.
// The shim defines open *and* open64 (mmap and mmap64) itself: without this, glibc's headers
// would rename open to open64 under _FILE_OFFSET_BITS=64 (which meson sets) and the two
// definitions would clash. off_t is 64-bit on the 64-bit hosts we build for either way.
#undef _FILE_OFFSET_BITS
#include <dlfcn.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>

#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include <fmt/format.h>

#include "driver/common/npu_irq.h"
#include "driver/emu/kernel/zero_work.h"
#include "driver/emu/shim/fake_tree.h"
#include "driver/emu/shim/shim_kernel.h"
#include "driver/os/debug.h"

namespace ork::emu {

namespace {

// ORK_EMU_SHIM_PC: "run" (unset or empty: the emulated PC computes every task) or
// "zero-work" (zero_work.h: every chain reports done and computes nothing, so that a program
// run under the shim costs only its host work: the benchmarks that time a client of the
// public API, such as the ggml backend's, docs/llama-cpp.md "Figures"). Anything else is an
// error that fails every open of an emulated node (pc_spec_error).
std::string& pc_spec_error() {
  static std::string error;
  return error;
}

bool zero_work_from_env() {
  const char* v = std::getenv("ORK_EMU_SHIM_PC");
  if (v == nullptr || *v == '\0' || std::strcmp(v, "run") == 0) return false;
  if (std::strcmp(v, "zero-work") == 0) return true;
  pc_spec_error() = fmt::format("ORK_EMU_SHIM_PC={:.64}: expected run or zero-work", v);
  return false;
}

}  // namespace

// The machine the shim pretends to be is a board: besides the NPU, the display
// controller's DRM device on card0 (another driver, which discovery must skip).
FakeKernel& shared_fake_kernel() {
  static FakeKernel kernel([] {
    FakeKernelConfig c;
    c.display_card = "/dev/dri/card0";
    if (zero_work_from_env()) c.executor = zero_work_executor(hw::kIntTaskDone);
    return c;
  }());
  return kernel;
}

}  // namespace ork::emu

namespace {

using ork::emu::FakeKernel;
using ork::emu::shared_fake_kernel;

template <class Fn>
Fn next_symbol(const char* name) {
  return reinterpret_cast<Fn>(dlsym(RTLD_NEXT, name));
}

// The mode argument exists only when the flags create a file.
mode_t mode_arg(int flags, va_list args) {
  return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE ? va_arg(args, mode_t) : 0;
}

// Absolute paths of emulated nodes only: a relative path or a dirfd is never ours.
bool emulated_path(const char* path) {
  return path && path[0] == '/' && shared_fake_kernel().emulates(path);
}

// ORK_EMU_FAULTS, read once for the process's kernel. A bad spec fails every open of an
// emulated node with EINVAL and says why on stderr: the program's own error then follows.
const std::string& fault_spec_error() {
  static const std::string error = [] {
    auto rules = ork::emu::faults_from_env();
    if (!rules) return rules.error().message;
    shared_fake_kernel().faults().rules = std::move(*rules);
    return std::string();
  }();
  return error;
}

// The fake kernel answers in the Os convention (>= 0, or -errno: driver/os/os.h); the
// program calling through the shim expects libc's (-1 and errno).
int as_libc(int rc) {
  if (rc >= 0) return rc;
  errno = -rc;
  return -1;
}

void* mmap_as_libc(void* addr, size_t length, int prot, int flags, int fd, off_t offset) {
  int err = 0;
  void* p = shared_fake_kernel().mmap(addr, length, prot, flags, fd, offset, &err);
  if (p) return p;
  errno = -err;
  return MAP_FAILED;
}

int open_emulated(const char* path, int flags) {
  shared_fake_kernel();  // reads ORK_EMU_SHIM_PC
  if (const std::string& bad = ork::emu::pc_spec_error(); !bad.empty()) {
    std::fprintf(stderr, "libork_emu_shim: %s\n", bad.c_str());
    errno = EINVAL;
    return -1;
  }
  if (const std::string& bad = fault_spec_error(); !bad.empty()) {
    std::fprintf(stderr, "libork_emu_shim: %s\n", bad.c_str());
    errno = EINVAL;
    return -1;
  }
  int fd = shared_fake_kernel().open(path, flags);
  ork::driver::debug_log("shim", "open {} -> {}", path, fd);
  return as_libc(fd);
}

// A path of the emulated machine's /dev or /sys that is not a node: the file inside the tree
// (`keep` holds it); any other path unchanged.
const char* tree_path(const char* path, std::string& keep) {
  auto r = ork::emu::shim::resolve(path);
  if (r.kind != ork::emu::shim::PathKind::tree) return path;
  keep = std::move(r.real);
  return keep.c_str();
}

}  // namespace

extern "C" {

int open(const char* path, int flags, ...) {
  va_list args;
  va_start(args, flags);
  mode_t mode = mode_arg(flags, args);
  va_end(args);
  if (emulated_path(path)) return open_emulated(path, flags);
  static auto real = next_symbol<int (*)(const char*, int, ...)>("open");
  std::string keep;
  return real(tree_path(path, keep), flags, mode);
}

int open64(const char* path, int flags, ...) {
  va_list args;
  va_start(args, flags);
  mode_t mode = mode_arg(flags, args);
  va_end(args);
  if (emulated_path(path)) return open_emulated(path, flags);
  static auto real = next_symbol<int (*)(const char*, int, ...)>("open64");
  std::string keep;
  return real(tree_path(path, keep), flags, mode);
}

int openat(int dirfd, const char* path, int flags, ...) {
  va_list args;
  va_start(args, flags);
  mode_t mode = mode_arg(flags, args);
  va_end(args);
  if (emulated_path(path)) return open_emulated(path, flags);
  static auto real = next_symbol<int (*)(int, const char*, int, ...)>("openat");
  std::string keep;
  return real(dirfd, tree_path(path, keep), flags, mode);
}

int openat64(int dirfd, const char* path, int flags, ...) {
  va_list args;
  va_start(args, flags);
  mode_t mode = mode_arg(flags, args);
  va_end(args);
  if (emulated_path(path)) return open_emulated(path, flags);
  static auto real = next_symbol<int (*)(int, const char*, int, ...)>("openat64");
  std::string keep;
  return real(dirfd, tree_path(path, keep), flags, mode);
}

int __open_2(const char* path, int flags) {
  if (emulated_path(path)) return open_emulated(path, flags);
  static auto real = next_symbol<int (*)(const char*, int)>("__open_2");
  std::string keep;
  return real(tree_path(path, keep), flags);
}

int __open64_2(const char* path, int flags) {
  if (emulated_path(path)) return open_emulated(path, flags);
  static auto real = next_symbol<int (*)(const char*, int)>("__open64_2");
  std::string keep;
  return real(tree_path(path, keep), flags);
}

int close(int fd) {
  if (shared_fake_kernel().owns_fd(fd)) return as_libc(shared_fake_kernel().close(fd));
  static auto real = next_symbol<int (*)(int)>("close");
  return real(fd);
}

int ioctl(int fd, unsigned long request, ...) {
  va_list args;
  va_start(args, request);
  void* arg = va_arg(args, void*);
  va_end(args);
  if (shared_fake_kernel().owns_fd(fd)) return as_libc(shared_fake_kernel().ioctl(fd, request, arg));
  static auto real = next_symbol<int (*)(int, unsigned long, ...)>("ioctl");
  return real(fd, request, arg);
}

void* mmap(void* addr, size_t length, int prot, int flags, int fd, off_t offset) {
  if (fd >= 0 && shared_fake_kernel().owns_fd(fd)) {
    return mmap_as_libc(addr, length, prot, flags, fd, offset);
  }
  static auto real = next_symbol<void* (*)(void*, size_t, int, int, int, off_t)>("mmap");
  return real(addr, length, prot, flags, fd, offset);
}

void* mmap64(void* addr, size_t length, int prot, int flags, int fd, off_t offset) {
  if (fd >= 0 && shared_fake_kernel().owns_fd(fd)) {
    return mmap_as_libc(addr, length, prot, flags, fd, offset);
  }
  static auto real = next_symbol<void* (*)(void*, size_t, int, int, int, off_t)>("mmap64");
  return real(addr, length, prot, flags, fd, offset);
}

// The rknpu NONBLOCK job's sync_file fence is a fake fd: poll sets of only such fds go to
// the fake kernel (a set mixing them with real fds is not something libork makes).
int poll(struct pollfd* fds, nfds_t nfds, int timeout) {
  if (nfds > 0 && fds && shared_fake_kernel().owns_fd(fds[0].fd)) return as_libc(shared_fake_kernel().poll(fds, nfds, timeout));
  static auto real = next_symbol<int (*)(struct pollfd*, nfds_t, int)>("poll");
  return real(fds, nfds, timeout);
}

int munmap(void* addr, size_t length) {
  if (shared_fake_kernel().owns_mapping(addr)) return as_libc(shared_fake_kernel().munmap(addr, length));
  static auto real = next_symbol<int (*)(void*, size_t)>("munmap");
  return real(addr, length);
}

}  // extern "C"
