// The process's real OS: thin forwards to libc, plus device-node discovery.
#include <dlfcn.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <glob.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>
#include <xf86drm.h>

#include <algorithm>
#include <cstring>
#include <string_view>

#include "driver/os/os.h"

namespace ork::driver {
namespace {

// Under the emulator's LD_PRELOAD shim (driver/emu/shim) the emulated nodes are not in
// /dev or sysfs, so discovery asks the shim. It exports this symbol; a normal process has no
// such symbol and dlsym returns null. Returns the node count written into `buffer` as
// newline-separated paths (or the size it needs, if larger than `size`).
using ShimListNodes = int (*)(const char* pattern, char* buffer, size_t size);

std::vector<std::string> shim_list_nodes(ShimListNodes list, const char* pattern) {
  std::string buffer(4096, '\0');
  list(pattern, buffer.data(), buffer.size());
  std::vector<std::string> nodes;
  std::string_view rest(buffer.c_str());
  while (!rest.empty()) {
    size_t end = rest.find('\n');
    nodes.emplace_back(rest.substr(0, end));
    if (end == std::string_view::npos) break;
    rest.remove_prefix(end + 1);
  }
  return nodes;
}

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

std::vector<std::string> glob_list_nodes(const char* pattern) {
  std::vector<std::string> nodes;
  glob_t found{};
  if (glob(pattern, 0, nullptr, &found) == 0) {
    for (size_t i = 0; i < found.gl_pathc; ++i) nodes.emplace_back(found.gl_pathv[i]);
  }
  globfree(&found);
  return nodes;
}

class RealOs final : public Os {
 public:
  int open(const char* path, int flags) override { return ::open(path, flags); }
  int close(int fd) override { return ::close(fd); }
  // The only ::ioctl in libork; callers go through ioctl_retry (driver/os/ioctl.h).
  int ioctl(int fd, unsigned long request, void* arg) override { return ::ioctl(fd, request, arg); }
  int poll(struct pollfd* fds, nfds_t nfds, int timeout_ms) override { return ::poll(fds, nfds, timeout_ms); }
  void* mmap(void* addr, size_t length, int prot, int flags, int fd, off_t offset) override {
    return ::mmap(addr, length, prot, flags, fd, offset);
  }
  int munmap(void* addr, size_t length) override { return ::munmap(addr, length); }

  std::vector<std::string> list_nodes(const char* glob_pattern) override {
    std::vector<std::string> nodes;
    auto shim = reinterpret_cast<ShimListNodes>(dlsym(RTLD_DEFAULT, "ork_emu_shim_list_nodes"));
    if (shim) {
      nodes = shim_list_nodes(shim, glob_pattern);
    } else if (std::strncmp(glob_pattern, "/dev/dri/", 9) == 0) {
      nodes = drm_list_nodes(glob_pattern);
    } else {
      nodes = glob_list_nodes(glob_pattern);
    }
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
