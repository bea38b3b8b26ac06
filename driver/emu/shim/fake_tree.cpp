// The emulated machine's /dev and /sys (fake_tree.h): built once per process, removed at
// exit by the process that built it (a forked child shares it and leaves it alone).
#include "driver/emu/shim/fake_tree.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "driver/emu/kernel/fake_kernel.h"

namespace ork::emu::shim {
namespace {

constexpr unsigned kDrmMajor = 226;    // include/uapi/linux/major.h DRM_MAJOR
constexpr unsigned kAccelMajor = 261;  // include/drm/drm_accel.h ACCEL_MAJOR

// The platform devices behind the nodes. The vendor driver binds the DT node npu@fdab0000
// (compatible "rockchip,rk3588-rknpu", the vendor rk3588s.dtsi); libdrm's platform bus
// info is its OF_FULLNAME, its device info the OF_COMPATIBLE_* list. rocket's DRM device
// belongs to a facade platform device "rknn" (drivers/accel/rocket).
constexpr const char* kRknpuDevice = "fdab0000.npu";
constexpr const char* kRknpuUevent =
    "OF_NAME=npu\nOF_FULLNAME=/npu@fdab0000\nOF_COMPATIBLE_0=rockchip,rk3588-rknpu\n"
    "OF_COMPATIBLE_N=1\nMODALIAS=of:NnpuT(null)Crockchip,rk3588-rknpu\n";
constexpr const char* kRocketDevice = "rknn";
constexpr const char* kRocketUevent = "MODALIAS=platform:rknn\n";

struct Node {
  std::string path;    // /dev/dri/card1
  std::string name;    // card1
  std::string devname; // dri/card1 (uevent DEVNAME, relative to /dev)
  const char* cls;     // sysfs class: drm or accel
  const char* device;  // platform device
  dev_t rdev;
};

// The node number at the end of a name ("renderD129" -> 129); -1 if there is none.
long trailing_number(const std::string& s) {
  size_t digits = s.find_last_not_of("0123456789") + 1;
  return digits < s.size() ? std::strtol(s.c_str() + digits, nullptr, 10) : -1;
}

std::vector<Node> emulated_nodes() {
  const FakeKernelConfig& c = shared_fake_kernel().config();
  std::vector<Node> list;
  auto add = [&](const std::string& path, const char* cls, const char* device, unsigned maj) {
    long number = trailing_number(path);
    if (number < 0) return;
    std::string name = path.substr(path.rfind('/') + 1);
    list.push_back({path, name, path.substr(5), cls, device, makedev(maj, static_cast<unsigned>(number))});
  };
  if (c.rknpu) {
    add(c.rknpu_card, "drm", kRknpuDevice, kDrmMajor);
    add(c.rknpu_render, "drm", kRknpuDevice, kDrmMajor);
  }
  if (c.rocket) add(c.rocket_node, "accel", kRocketDevice, kAccelMajor);
  return list;
}

const std::vector<Node>& nodes() {
  static const std::vector<Node> list = emulated_nodes();
  return list;
}

// Builds the tree with raw syscalls (the shim's own open must not see its construction).
class Tree {
 public:
  Tree() : owner_(getpid()) {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = fmt::format("{}/ork-emu-shim.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(pattern.data())) {
      std::fprintf(stderr, "libork_emu_shim: cannot create the emulated /dev and /sys under %s: %s\n",
                   pattern.c_str(), std::strerror(errno));
      root_ = "/nonexistent/ork-emu-shim";
      return;
    }
    root_ = pattern;
    if (!build()) {
      std::fprintf(stderr, "libork_emu_shim: cannot build the emulated /dev and /sys in %s: %s\n", root_.c_str(),
                   std::strerror(errno));
    }
  }
  ~Tree() {
    if (getpid() != owner_) return;
    for (auto it = made_.rbegin(); it != made_.rend(); ++it) {
      if (::unlink(it->c_str()) != 0) ::rmdir(it->c_str());
    }
    ::rmdir(root_.c_str());
  }

  const std::string& root() const { return root_; }

 private:
  bool dir(const std::string& rel) {
    std::string p = root_ + "/" + rel;
    if (::mkdir(p.c_str(), 0755) != 0) return errno == EEXIST;
    made_.push_back(p);
    return true;
  }
  bool file(const std::string& rel, std::string_view text) {
    std::string p = root_ + "/" + rel;
    int fd = static_cast<int>(::syscall(SYS_openat, AT_FDCWD, p.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644));
    if (fd < 0) return false;
    made_.push_back(p);
    bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
    ::syscall(SYS_close, fd);
    return ok;
  }
  bool link(const std::string& rel, const std::string& target) {
    std::string p = root_ + "/" + rel;
    if (::symlink(target.c_str(), p.c_str()) != 0) return false;
    made_.push_back(p);
    return true;
  }

  bool build() {
    bool ok = true;
    for (const char* d : {"dev", "dev/dri", "dev/accel", "sys", "sys/dev", "sys/dev/char", "sys/class",
                          "sys/class/drm", "sys/class/accel", "sys/bus", "sys/bus/platform", "sys/devices",
                          "sys/devices/platform"})
      ok = ok && dir(d);
    for (const Node& n : nodes()) {
      std::string dev = fmt::format("sys/devices/platform/{}", n.device);
      if (::access((root_ + "/" + dev).c_str(), F_OK) != 0) {
        ok = ok && dir(dev) && link(dev + "/subsystem", "../../../bus/platform") &&
             file(dev + "/uevent", n.device == std::string_view(kRknpuDevice) ? kRknpuUevent : kRocketUevent);
      }
      std::string cls = fmt::format("{}/{}", dev, n.cls);
      std::string node_dir = fmt::format("{}/{}", cls, n.name);
      std::string numbers = fmt::format("{}:{}", major(n.rdev), ::minor(n.rdev));
      ok = ok && file(n.path.substr(1), "") && dir(cls) && dir(node_dir) && file(node_dir + "/dev", numbers + "\n") &&
           file(node_dir + "/uevent", fmt::format("MAJOR={}\nMINOR={}\nDEVNAME={}\n", major(n.rdev),
                                               ::minor(n.rdev), n.devname)) &&
           link(node_dir + "/device", fmt::format("../../../{}", n.device)) &&
           link(node_dir + "/subsystem", fmt::format("../../../../../class/{}", n.cls)) &&
           link(fmt::format("sys/class/{}/{}", n.cls, n.name), "../../" + node_dir.substr(4)) &&
           link("sys/dev/char/" + numbers, "../../" + node_dir.substr(4));
    }
    return ok;
  }

  pid_t owner_;
  std::string root_;
  std::vector<std::string> made_;
};

Tree& tree() {
  static Tree t;
  return t;
}

// `path` is `prefix` or lies below it.
bool under(std::string_view path, std::string_view prefix) {
  return path.substr(0, prefix.size()) == prefix && (path.size() == prefix.size() || path[prefix.size()] == '/');
}

// The emulated machine's paths, decided without building the tree (the check runs on every
// open and stat of the process).
bool emulated_tree_path(std::string_view path) {
  if (under(path, "/dev/dri") || under(path, "/dev/accel")) return true;
  if (path.substr(0, 5) != "/sys/") return false;
  for (const Node& n : nodes()) {
    if (under(path, fmt::format("/sys/dev/char/{}:{}", major(n.rdev), minor(n.rdev))) ||
        under(path, fmt::format("/sys/class/{}/{}", n.cls, n.name)) ||
        under(path, fmt::format("/sys/devices/platform/{}", n.device)))
      return true;
  }
  return false;
}

}  // namespace

Resolved resolve(const char* path) {
  if (!path || path[0] != '/') return {};
  std::string_view p(path);
  if (!under(p, "/dev/dri") && !under(p, "/dev/accel") && p.substr(0, 5) != "/sys/") return {};
  if (!emulated_tree_path(p)) return {};
  Tree& t = tree();
  for (const Node& n : nodes()) {
    if (n.path == p) return {PathKind::node, t.root() + n.path, n.rdev};
  }
  return {PathKind::tree, t.root() + std::string(p), 0};
}

std::string unmap(const std::string& real) {
  const std::string& root = tree().root();
  if (under(real, root) && real.size() > root.size()) return real.substr(root.size());
  return real;
}

}  // namespace ork::emu::shim
