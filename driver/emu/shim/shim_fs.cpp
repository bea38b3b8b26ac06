// libork_emu_shim.so, the file-system half: the emulated machine's /dev/dri, /dev/accel and
// their sysfs entries (fake_tree.h), so that discovery code reading them (libdrm's
// drmGetDevices2, libork's /dev/accel scan) runs as it does on a board. Interposed: opendir,
// stat/stat64, lstat/lstat64, access, readlink, realpath (and __realpath_chk), fopen/fopen64;
// the open family redirects tree paths in shim.cpp. These are the calls libdrm 2.4.114
// imports for discovery (`nm -D --undefined-only libdrm.so.2`). Paths that are not the
// emulated machine's go to libc unchanged. Like Mesa's drm-shim (docs/hardware.md section 7),
// the emulated /dev/dri replaces the host's: a host GPU is not seen under the shim.
#undef _FILE_OFFSET_BITS  // both stat and stat64 are defined here (see shim.cpp)
#include <dirent.h>
#include <dlfcn.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "driver/emu/shim/fake_tree.h"

namespace {

using ork::emu::shim::PathKind;
using ork::emu::shim::resolve;

template <class Fn>
Fn next_fs_symbol(const char* name) {
  return reinterpret_cast<Fn>(dlsym(RTLD_NEXT, name));
}

// A node stats as the character device it is on a board; its placeholder file gives the
// times and owner.
template <class Stat>
void as_node(Stat* buf, dev_t rdev) {
  buf->st_mode = S_IFCHR | 0666;
  buf->st_rdev = rdev;
  buf->st_size = 0;
}

template <class Stat>
int stat_any(int (*real)(const char*, Stat*), const char* path, Stat* buf) {
  auto r = resolve(path);
  if (r.kind == PathKind::other) return real(path, buf);
  int rc = real(r.real.c_str(), buf);
  if (rc == 0 && r.kind == PathKind::node) as_node(buf, r.rdev);
  return rc;
}

}  // namespace

extern "C" {

DIR* opendir(const char* path) {
  static auto real = next_fs_symbol<DIR* (*)(const char*)>("opendir");
  auto r = resolve(path);
  return real(r.kind == PathKind::other ? path : r.real.c_str());
}

int stat(const char* path, struct stat* buf) noexcept {
  static auto real = next_fs_symbol<int (*)(const char*, struct stat*)>("stat");
  return stat_any(real, path, buf);
}
int stat64(const char* path, struct stat64* buf) noexcept {
  static auto real = next_fs_symbol<int (*)(const char*, struct stat64*)>("stat64");
  return stat_any(real, path, buf);
}
int lstat(const char* path, struct stat* buf) noexcept {
  static auto real = next_fs_symbol<int (*)(const char*, struct stat*)>("lstat");
  return stat_any(real, path, buf);
}
int lstat64(const char* path, struct stat64* buf) noexcept {
  static auto real = next_fs_symbol<int (*)(const char*, struct stat64*)>("lstat64");
  return stat_any(real, path, buf);
}

int access(const char* path, int mode) noexcept {
  static auto real = next_fs_symbol<int (*)(const char*, int)>("access");
  auto r = resolve(path);
  return real(r.kind == PathKind::other ? path : r.real.c_str(), mode);
}

ssize_t readlink(const char* path, char* buf, size_t size) noexcept {
  static auto real = next_fs_symbol<ssize_t (*)(const char*, char*, size_t)>("readlink");
  auto r = resolve(path);
  return real(r.kind == PathKind::other ? path : r.real.c_str(), buf, size);
}

// The resolved path as the emulated machine names it (links inside the tree are relative,
// so resolution stays inside it).
char* realpath(const char* path, char* resolved) noexcept {
  static auto real = next_fs_symbol<char* (*)(const char*, char*)>("realpath");
  auto r = resolve(path);
  if (r.kind == PathKind::other) return real(path, resolved);
  char* got = real(r.real.c_str(), nullptr);
  if (!got) return nullptr;
  std::string name = r.kind == PathKind::node ? std::string(path) : ork::emu::shim::unmap(got);
  std::free(got);
  if (name.size() >= PATH_MAX) {
    errno = ENAMETOOLONG;
    return nullptr;
  }
  if (!resolved) return strdup(name.c_str());
  std::memcpy(resolved, name.c_str(), name.size() + 1);
  return resolved;
}

// _FORTIFY_SOURCE's form (libdrm calls it): the buffer must hold PATH_MAX bytes.
char* __realpath_chk(const char* path, char* resolved, size_t resolved_len) noexcept {
  if (resolved && resolved_len < PATH_MAX) std::abort();  // what glibc's check does
  return realpath(path, resolved);
}

FILE* fopen(const char* path, const char* mode) {
  static auto real = next_fs_symbol<FILE* (*)(const char*, const char*)>("fopen");
  auto r = resolve(path);
  return real(r.kind == PathKind::other ? path : r.real.c_str(), mode);
}

FILE* fopen64(const char* path, const char* mode) {
  static auto real = next_fs_symbol<FILE* (*)(const char*, const char*)>("fopen64");
  auto r = resolve(path);
  return real(r.kind == PathKind::other ? path : r.real.c_str(), mode);
}

}  // extern "C"
