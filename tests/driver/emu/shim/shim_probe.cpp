// Run under LD_PRELOAD=libork_emu_shim.so (meson test 'shim_probe'): an unmodified program's
// plain libc calls reach the emulated NPU, libdrm's own discovery (drmGetDevices2 over
// /dev/dri and sysfs) finds its nodes, and libork's real Os discovers it. Without the
// shim every check fails (there is no /dev/dri/card1 here). Exit 0 = all checks passed.
#include <dirent.h>
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <xf86drm.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "driver/kmd/kmd.h"
#include "uapi/rknpu_ioctl.h"
#include "uapi/rocket_accel.h"

namespace {

int failures = 0;

void check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "shim_probe: FAILED: %s\n", what);
    ++failures;
  }
}

// The vendor uAPI through raw libc calls, as tests-hw programs make them.
void raw_rknpu() {
  int fd = ::open("/dev/dri/card1", O_RDWR);
  check(fd >= 0, "open(/dev/dri/card1)");
  if (fd < 0) return;
  rknpu_mem_create create{};
  create.size = 4096;
  create.flags = RKNPU_MEM_CACHEABLE | RKNPU_MEM_IOMMU;
  check(::ioctl(fd, DRM_IOCTL_RKNPU_MEM_CREATE, &create) == 0, "ioctl MEM_CREATE");
  check(create.dma_addr == 0xffffe000u, "first IOVA is 0xffffe000");
  rknpu_mem_map map{.handle = create.handle};
  check(::ioctl(fd, DRM_IOCTL_RKNPU_MEM_MAP, &map) == 0, "ioctl MEM_MAP");
  void* p =
      ::mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, static_cast<off_t>(map.offset));
  check(p != MAP_FAILED, "mmap of the BO");
  if (p != MAP_FAILED) {
    std::memset(p, 0x11, 4096);
    check(::munmap(p, 4096) == 0, "munmap of the BO");
  }
  rknpu_mem_destroy destroy{.handle = create.handle, .obj_addr = create.obj_addr};
  check(::ioctl(fd, DRM_IOCTL_RKNPU_MEM_DESTROY, &destroy) == 0, "ioctl MEM_DESTROY");
  check(::close(fd) == 0, "close");
}

// The display's card0: a platform device of its own, its DRM driver "rockchip".
void display_view(drmDevicePtr d) {
  check(d->available_nodes == (1 << DRM_NODE_PRIMARY), "display: a card node only");
  check(std::strcmp(d->nodes[DRM_NODE_PRIMARY], "/dev/dri/card0") == 0, "display: /dev/dri/card0");
  check(std::strcmp(d->businfo.platform->fullname, "/display-subsystem") == 0, "display: OF_FULLNAME");
  int fd = ::open("/dev/dri/card0", O_RDWR);
  check(fd >= 0, "open(/dev/dri/card0)");
  if (fd < 0) return;
  drmVersionPtr v = drmGetVersion(fd);
  check(v && std::strcmp(v->name, "rockchip") == 0, "card0 is DRM driver rockchip");
  if (v) drmFreeVersion(v);
  check(::close(fd) == 0, "close card0");
}

// What a board's discovery reads: libdrm sees the display (card0) and folds card1 and
// renderD129 into one platform device (bus info from the uevent's OF_FULLNAME), the nodes
// stat as DRM character devices, /dev/accel lists accel0 (ACCEL_MAJOR 261).
void board_view() {
  drmDevicePtr devices[8];
  int n = drmGetDevices2(0, devices, 8);
  check(n == 2, "drmGetDevices2 finds two devices (the display and the NPU)");
  for (int i = 0; i < n; ++i) {
    if (devices[i]->nodes[DRM_NODE_PRIMARY] && std::strcmp(devices[i]->nodes[DRM_NODE_PRIMARY], "/dev/dri/card0") == 0)
      display_view(devices[i]);
  }
  if (n == 2) {
    drmDevicePtr d = std::strcmp(devices[0]->nodes[DRM_NODE_PRIMARY], "/dev/dri/card1") == 0 ? devices[0] : devices[1];
    check(d->bustype == DRM_BUS_PLATFORM, "bus type platform");
    check(d->available_nodes == ((1 << DRM_NODE_PRIMARY) | (1 << DRM_NODE_RENDER)), "card and render node");
    check(std::strcmp(d->nodes[DRM_NODE_PRIMARY], "/dev/dri/card1") == 0, "primary node /dev/dri/card1");
    check(std::strcmp(d->nodes[DRM_NODE_RENDER], "/dev/dri/renderD129") == 0, "render node /dev/dri/renderD129");
    check(std::strcmp(d->businfo.platform->fullname, "/npu@fdab0000") == 0, "OF_FULLNAME /npu@fdab0000");
    check(d->deviceinfo.platform->compatible[0] &&
              std::strcmp(d->deviceinfo.platform->compatible[0], "rockchip,rk3588-rknpu") == 0,
          "OF compatible rockchip,rk3588-rknpu");
  }
  if (n > 0) drmFreeDevices(devices, n);
  struct stat st {};
  check(::stat("/dev/dri/renderD129", &st) == 0 && S_ISCHR(st.st_mode) && major(st.st_rdev) == 226 &&
            minor(st.st_rdev) == 129,
        "stat /dev/dri/renderD129: char 226:129");
  check(::stat("/dev/accel/accel0", &st) == 0 && S_ISCHR(st.st_mode) && major(st.st_rdev) == 261 &&
            minor(st.st_rdev) == 0,
        "stat /dev/accel/accel0: char 261:0");
  check(::stat("/dev/dri/card0", &st) == 0 && S_ISCHR(st.st_mode) && major(st.st_rdev) == 226 && minor(st.st_rdev) == 0,
        "stat /dev/dri/card0: char 226:0");
  check(::stat("/dev/dri/card2", &st) != 0 && errno == ENOENT, "/dev/dri/card2 is not there");
  std::string listed;
  if (DIR* d = ::opendir("/dev/accel")) {
    while (const dirent* e = ::readdir(d))
      if (e->d_name[0] != '.') listed += std::string(listed.empty() ? "" : " ") + e->d_name;
    ::closedir(d);
  }
  check(listed == "accel0", "readdir /dev/accel lists accel0 alone");
  char real[PATH_MAX];
  check(::realpath("/sys/dev/char/261:0/device", real) && std::strcmp(real, "/sys/devices/platform/rknn") == 0,
        "realpath /sys/dev/char/261:0/device");
}

// libork's discovery over the real Os finds both emulated interfaces, rknpu on card1 after
// skipping the display's card0 by its driver name (and refusing card0 when named).
void libork_discovery() {
  for (auto kind : {ork::driver::KmdKind::rknpu, ork::driver::KmdKind::rocket}) {
    auto kmd = ork::driver::discover(ork::driver::real_os(), kind);
    check(kmd.ok(), kmd.ok() ? "discover" : kmd.error().message.c_str());
    if (!kmd.ok()) continue;
    if (kind == ork::driver::KmdKind::rknpu) check((*kmd)->info().node == "/dev/dri/card1", "rknpu found on card1");
    check((*kmd)->info().emulated, "DeviceInfo.emulated through the shim");
    auto bo = (*kmd)->bo_create(8192, ork::driver::BoUsage::data);
    check(bo.ok(), "bo_create through the shim");
    if (bo.ok()) (*bo)->map()[8191] = 1;
  }
  auto display = ork::driver::discover(ork::driver::real_os(), std::nullopt, "/dev/dri/card0");
  check(!display.ok() && display.error().message ==
                             "/dev/dri/card0 is DRM driver 'rockchip'; libork speaks 'rknpu' and 'rocket'",
        "card0 named: refused by its driver name");
}

}  // namespace

int main() {
  board_view();
  raw_rknpu();
  libork_discovery();
  // A file that is not emulated still opens normally.
  int fd = ::open("/dev/null", O_RDONLY);
  check(fd >= 0 && ::close(fd) == 0, "non-emulated paths pass through");
  if (failures == 0) std::puts("shim_probe: all checks passed");
  return failures ? 1 : 0;
}
