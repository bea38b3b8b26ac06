// The emulated machine's /dev and /sys as the shim shows them. libork's real discovery
// (driver/os/os_real.cpp: libdrm's drmGetDevices2 for /dev/dri, a directory scan for
// /dev/accel) reads directories, device numbers, sysfs links and uevent files; the shim
// answers those reads from a small real directory tree under $TMPDIR (else /tmp), built
// once per user (ork-emu-shim-UID-DIGEST, kept), and answers stat of the node paths with
// character devices of the right major:minor. Paths outside the emulated machine's are never touched.
//
// The layout follows Linux's (Documentation/ABI/testing/sysfs-dev; libdrm xf86drm.c reads
// /sys/dev/char/MAJ:MIN/device/{drm,subsystem,uevent}):
//   dev/dri/card0, dev/dri/card1, dev/dri/renderD129, dev/accel/accel0   (placeholders;
//                                                    open goes to the fake kernel, stat is faked)
//   sys/dev/char/226:0 -> ../../devices/platform/display-subsystem/drm/card0   (the display,
//                                                    DRM driver "rockchip": not the NPU)
//   sys/dev/char/226:1 -> ../../devices/platform/fdab0000.npu/drm/card1
//   sys/devices/platform/fdab0000.npu/{uevent, subsystem -> bus/platform, drm/card1/...}
//   sys/dev/char/261:0 -> ../../devices/platform/rknn/accel/accel0
// DRM_MAJOR 226 (include/uapi/linux/major.h), ACCEL_MAJOR 261 (include/drm/drm_accel.h);
// card minors 0..63, render minors 128..191 (drm_file.c's minor types).
#pragma once

#include <sys/types.h>

#include <string>

namespace ork::emu::shim {

enum class PathKind {
  other,  // not the emulated machine's: the call goes to libc unchanged
  node,   // an emulated device node: open goes to the fake kernel, stat is faked
  tree,   // a directory or sysfs file of the emulated machine: served from the tree
};

struct Resolved {
  PathKind kind = PathKind::other;
  std::string real;  // node, tree: the path inside the tree
  dev_t rdev = 0;    // node: its device number
};

// Classifies an absolute path (a relative path or null is `other`). Finds or builds the tree
// on the first path that needs it; if the tree cannot be built, tree paths resolve to a path that
// does not exist (the caller then sees ENOENT, and the reason is on stderr once).
Resolved resolve(const char* path);

// A path inside the tree as the emulated machine names it ("/tmp/ork-emu-shim.x/sys/bus/
// platform" -> "/sys/bus/platform"); any other path unchanged. For realpath.
std::string unmap(const std::string& real);

}  // namespace ork::emu::shim
