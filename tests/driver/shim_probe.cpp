// Run under LD_PRELOAD=libork_emu_shim.so (meson test 'shim_probe'): an unmodified program's
// plain libc calls reach the emulated NPU, and libork's real Os discovers it. Without the
// shim every check fails (there is no /dev/dri/card1 here). Exit 0 = all checks passed.
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

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

// libork's discovery over the real Os finds both emulated interfaces.
void libork_discovery() {
  for (auto kind : {ork::driver::KmdKind::rknpu, ork::driver::KmdKind::rocket}) {
    auto kmd = ork::driver::discover(ork::driver::real_os(), kind);
    check(kmd.ok(), kmd.ok() ? "discover" : kmd.error().message.c_str());
    if (!kmd.ok()) continue;
    check((*kmd)->info().emulated, "DeviceInfo.emulated through the shim");
    auto bo = (*kmd)->bo_create(8192, ork::driver::BoUsage::data);
    check(bo.ok(), "bo_create through the shim");
    if (bo.ok()) (*bo)->map()[8191] = 1;
  }
}

}  // namespace

int main() {
  raw_rknpu();
  libork_discovery();
  // A file that is not emulated still opens normally.
  int fd = ::open("/dev/null", O_RDONLY);
  check(fd >= 0 && ::close(fd) == 0, "non-emulated paths pass through");
  if (failures == 0) std::puts("shim_probe: all checks passed");
  return failures ? 1 : 0;
}
