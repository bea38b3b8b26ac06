// The process's real OS: thin forwards to libc, plus device-node discovery.
#include <dirent.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>
#include <xf86drm.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string_view>

#include "driver/os/os.h"

namespace ork::driver {
namespace {

// /dev/dri nodes through libdrm (drmGetDevices2 reads sysfs, so it sees what the DRM core
// registered, card and render nodes alike), filtered by the glob pattern.
std::vector<std::string> drm_list_nodes(const char* pattern) {
  std::vector<std::string> nodes;
  int count = drmGetDevices2(0, nullptr, 0);
  if (count <= 0) return nodes;
  std::vector<drmDevicePtr> devices(static_cast<size_t>(count));
  count = drmGetDevices2(0, devices.data(), count);
  for (int i = 0; i < count; ++i) {
    for (int type = 0; type < DRM_NODE_MAX; ++type) {
      if (!(devices[i]->available_nodes & (1 << type))) continue;
      const char* node = devices[i]->nodes[type];
      if (fnmatch(pattern, node, 0) == 0) nodes.emplace_back(node);
    }
  }
  drmFreeDevices(devices.data(), count);
  return nodes;
}

// Other nodes (/dev/accel/accel*) by scanning their directory: the pattern's directory part
// is literal, its last component a glob. opendir/readdir rather than glob(3): glibc's glob
// reads directories through internal calls, which an LD_PRELOAD library (the emulator's
// shim, serving /dev/accel off the board) cannot see; with readdir both see the same scan.
std::vector<std::string> dir_list_nodes(const char* pattern) {
  std::vector<std::string> nodes;
  std::string_view p(pattern);
  const size_t slash = p.rfind('/');
  if (slash == std::string_view::npos) return nodes;
  const std::string dir(p.substr(0, slash));
  const std::string name(p.substr(slash + 1));
  DIR* d = opendir(dir.empty() ? "/" : dir.c_str());
  if (!d) return nodes;
  while (const dirent* e = readdir(d)) {
    if (e->d_name[0] != '.' && fnmatch(name.c_str(), e->d_name, 0) == 0) nodes.push_back(dir + "/" + e->d_name);
  }
  closedir(d);
  return nodes;
}

// A libc return value in the seam's convention: itself, or -errno when it is -1.
int or_errno(int rc) { return rc == -1 ? -errno : rc; }

class RealOs final : public Os {
 public:
  // libc's -1 and errno become the seam's -errno here, read at once (os.h "Convention").
  int open(const char* path, int flags) override { return or_errno(::open(path, flags)); }
  int close(int fd) override { return or_errno(::close(fd)); }
  // The only ::ioctl in libork; callers go through ioctl_retry (driver/os/ioctl.h).
  int ioctl(int fd, unsigned long request, void* arg) override { return or_errno(::ioctl(fd, request, arg)); }
  int poll(struct pollfd* fds, nfds_t nfds, int timeout_ms) override {
    return or_errno(::poll(fds, nfds, timeout_ms));
  }
  void* mmap(void* addr, size_t length, int prot, int flags, int fd, off_t offset, int* error) override {
    void* p = ::mmap(addr, length, prot, flags, fd, offset);
    if (p != MAP_FAILED) return p;
    *error = -errno;
    return nullptr;
  }
  int munmap(void* addr, size_t length) override { return or_errno(::munmap(addr, length)); }

  std::vector<std::string> list_nodes(const char* glob_pattern) override {
    std::vector<std::string> nodes = std::strncmp(glob_pattern, "/dev/dri/", 9) == 0 ? drm_list_nodes(glob_pattern)
                                                                                      : dir_list_nodes(glob_pattern);
    std::sort(nodes.begin(), nodes.end(), natural_less);
    return nodes;
  }

 private:
  // card2 before card10: compare the trailing numbers as numbers.
  static bool natural_less(const std::string& a, const std::string& b) {
    size_t da = a.find_last_not_of("0123456789") + 1;
    size_t db = b.find_last_not_of("0123456789") + 1;
    if (a.compare(0, da, b, 0, db) != 0 || da == a.size() || db == b.size()) return a < b;
    return std::stoul(a.substr(da)) < std::stoul(b.substr(db));
  }
};

}  // namespace

Os& real_os() {
  static RealOs os;
  return os;
}

}  // namespace ork::driver
