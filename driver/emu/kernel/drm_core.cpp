// The DRM core ioctls the fake kernel answers on every node: VERSION and GEM_CLOSE.
#include <cstring>
#include <string_view>

#include "driver/emu/kernel/fake_kernel_state.h"
#include "uapi/rocket_accel.h"

namespace ork::emu {
namespace {

// Like the DRM core: copies at most *len bytes (no terminator added) and reports the full
// length in *len, so callers can ask twice (libdrm's drmGetVersion does).
int copy_string(std::string_view value, char* user, __kernel_size_t* len) {
  if (*len && !user) return -EFAULT;
  if (*len) std::memcpy(user, value.data(), std::min<size_t>(*len, value.size()));
  *len = value.size();
  return 0;
}

// The display controller's DRM device (FakeKernelConfig::display_card), as the mainline
// rockchip DRM driver names itself (rockchip_drm_drv.c: "rockchip", "RockChip Soc DRM", 1.0.0).
int display_version(struct drm_version* v) {
  v->version_major = 1;
  v->version_minor = 0;
  v->version_patchlevel = 0;
  int rc = copy_string("rockchip", v->name, &v->name_len);
  if (rc == 0) rc = copy_string("20140818", v->date, &v->date_len);
  if (rc == 0) rc = copy_string("RockChip Soc DRM", v->desc, &v->desc_len);
  return rc;
}

}  // namespace

int handle_drm_version(IoctlContext& ctx) {
  auto* v = static_cast<struct drm_version*>(ctx.arg);
  if (ctx.file.kind == NodeKind::display) return display_version(v);
  bool rocket = ctx.file.kind == NodeKind::rocket;
  // rknpu 0.9.8 (the version whose uAPI we speak); rocket 1.0.0. The "[ork-emu]" tag in
  // desc tells the backends they run on the emulator (DeviceInfo::emulated), also through
  // the LD_PRELOAD shim.
  v->version_major = rocket ? 1 : 0;
  v->version_minor = rocket ? 0 : 9;
  v->version_patchlevel = rocket ? 0 : 8;
  int rc = copy_string(rocket ? "rocket" : "rknpu", v->name, &v->name_len);
  if (rc == 0) rc = copy_string("20250101", v->date, &v->date_len);
  if (rc == 0) {
    rc = copy_string(rocket ? "rocket NPU driver [ork-emu]" : "RKNPU driver [ork-emu]", v->desc,
                     &v->desc_len);
  }
  return rc;
}

int handle_drm_gem_close(IoctlContext& ctx) {
  auto* args = static_cast<struct drm_gem_close*>(ctx.arg);
  if (args->pad) return -EINVAL;
  // drm_gem_handle_delete(): an unknown handle is -EINVAL.
  return ctx.file.handles.erase(args->handle) ? 0 : -EINVAL;
}

}  // namespace ork::emu
