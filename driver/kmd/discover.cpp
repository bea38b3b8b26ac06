// Finding a device: rknpu by DRM driver name among /dev/dri nodes (card nodes first: ORK saw
// render-node submits accepted but not executed on silicon), rocket among /dev/accel/accel*.
#include <fmt/format.h>

#include "driver/kmd/kmd_common.h"

namespace ork::driver {
namespace {

// The DRM driver name behind a node, or an error saying why it could not be read.
Result<std::string> probe_driver(Os& os, const std::string& node) {
  auto fd = open_node(os, node);
  if (!fd) return fd.error();
  auto version = query_drm_version(os, fd->get(), node);
  if (!version) return version.error();
  return version->name;
}

Result<std::unique_ptr<Kmd>> open_kind(Os& os, KmdKind kind, const std::string& node) {
  return kind == KmdKind::rknpu ? open_rknpu(os, node) : open_rocket(os, node);
}

// The first node among `patterns` whose driver is `kind`; `tried` collects what was seen.
Result<std::unique_ptr<Kmd>> search(Os& os, KmdKind kind, std::string* tried) {
  const bool rknpu = kind == KmdKind::rknpu;
  const std::vector<const char*> patterns =
      rknpu ? std::vector<const char*>{"/dev/dri/card*", "/dev/dri/renderD*"}
            : std::vector<const char*>{"/dev/accel/accel*"};
  Error last = make_error(-ENODEV, "");
  for (const char* pattern : patterns) {
    for (const std::string& node : os.list_nodes(pattern)) {
      auto name = probe_driver(os, node);
      *tried += fmt::format("{}{} ({})", tried->empty() ? "" : ", ", node,
                            name ? *name : name.error().message);
      if (!name || *name != kmd_kind_name(kind)) continue;
      auto kmd = open_kind(os, kind, node);
      if (kmd) return kmd;
      last = kmd.error();
    }
  }
  if (!last.message.empty()) return last;
  return make_error(-ENODEV, "");
}

}  // namespace

Result<std::unique_ptr<Kmd>> discover(Os& os, std::optional<KmdKind> kind,
                                      const std::string& node) {
  if (!node.empty()) {
    if (kind) return open_kind(os, *kind, node);
    auto name = probe_driver(os, node);
    if (!name) return name.error();
    if (*name == "rknpu") return open_rknpu(os, node);
    if (*name == "rocket") return open_rocket(os, node);
    return make_error(
        -ENODEV,
        fmt::format("{} is DRM driver '{}'; libork speaks 'rknpu' and 'rocket'", node, *name));
  }
  std::string tried;
  for (KmdKind k : {KmdKind::rknpu, KmdKind::rocket}) {
    if (kind && *kind != k) continue;
    auto kmd = search(os, k, &tried);
    if (kmd || !kmd.error().message.empty()) return kmd;
  }
  std::string wanted = kind ? kmd_kind_name(*kind) : "rknpu or rocket";
  return make_error(-ENODEV, fmt::format("no {} device found (nodes seen: {})", wanted,
                                         tried.empty() ? "none" : tried));
}

}  // namespace ork::driver
