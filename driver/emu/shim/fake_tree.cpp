// The emulated machine's /dev and /sys (fake_tree.h): built once per user and contents,
// shared by every process under the shim (class Tree below says how).
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

#include "driver/emu/shim/shim_kernel.h"

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
// The display's DRM device belongs to the DT node display-subsystem (compatible
// "rockchip,display-subsystem", the RK3588 device trees), whose driver is "rockchip".
constexpr const char* kDisplayDevice = "display-subsystem";
constexpr const char* kDisplayUevent =
    "OF_NAME=display-subsystem\nOF_FULLNAME=/display-subsystem\nOF_COMPATIBLE_0=rockchip,display-subsystem\n"
    "OF_COMPATIBLE_N=1\nMODALIAS=of:Ndisplay-subsystemT(null)Crockchip,display-subsystem\n";

const char* uevent_of(std::string_view device) {
  if (device == kRknpuDevice) return kRknpuUevent;
  return device == kDisplayDevice ? kDisplayUevent : kRocketUevent;
}

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
  if (!c.display_card.empty()) add(c.display_card, "drm", kDisplayDevice, kDrmMajor);
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

// One entry of the tree: a directory, a file with its text, or a symlink to `text`.
struct Entry {
  enum Kind { dir, file, link } kind;
  std::string rel;  // relative to the root
  std::string text;
};

std::vector<Entry> spec() {
  std::vector<Entry> e;
  for (const char* d : {"dev", "dev/dri", "dev/accel", "sys", "sys/dev", "sys/dev/char", "sys/class", "sys/class/drm",
                        "sys/class/accel", "sys/bus", "sys/bus/platform", "sys/devices", "sys/devices/platform"})
    e.push_back({Entry::dir, d, ""});
  std::string devices_made;
  for (const Node& n : nodes()) {
    std::string dev = fmt::format("sys/devices/platform/{}", n.device);
    if (devices_made.find("|" + dev + "|") == std::string::npos) {
      devices_made += "|" + dev + "|";
      e.push_back({Entry::dir, dev, ""});
      e.push_back({Entry::link, dev + "/subsystem", "../../../bus/platform"});
      e.push_back({Entry::file, dev + "/uevent", uevent_of(n.device)});
      e.push_back({Entry::dir, fmt::format("{}/{}", dev, n.cls), ""});
    }
    const std::string node_dir = fmt::format("{}/{}/{}", dev, n.cls, n.name);
    const std::string numbers = fmt::format("{}:{}", major(n.rdev), minor(n.rdev));
    e.push_back({Entry::file, n.path.substr(1), ""});
    e.push_back({Entry::dir, node_dir, ""});
    e.push_back({Entry::file, node_dir + "/dev", numbers + "\n"});
    e.push_back({Entry::file, node_dir + "/uevent",
                 fmt::format("MAJOR={}\nMINOR={}\nDEVNAME={}\n", major(n.rdev), minor(n.rdev), n.devname)});
    e.push_back({Entry::link, node_dir + "/device", fmt::format("../../../{}", n.device)});
    e.push_back({Entry::link, node_dir + "/subsystem", fmt::format("../../../../../class/{}", n.cls)});
    e.push_back({Entry::link, fmt::format("sys/class/{}/{}", n.cls, n.name), "../../" + node_dir.substr(4)});
    e.push_back({Entry::link, "sys/dev/char/" + numbers, "../../" + node_dir.substr(4)});
  }
  return e;
}

// FNV-1a over the entries: the shared tree's name changes whenever its contents would.
uint64_t digest(const std::vector<Entry>& entries) {
  uint64_t h = 14695981039346656037ull;
  auto mix = [&h](std::string_view s) {
    for (char c : s) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
    h = (h ^ 0xff) * 1099511628211ull;
  };
  for (const Entry& e : entries) {
    mix(std::string(1, static_cast<char>('0' + e.kind)));
    mix(e.rel);
    mix(e.text);
  }
  return h;
}

// Raw syscalls and libc calls the shim does not interpose: its own open must not see the
// construction.
bool make(const std::string& root, const Entry& e) {
  const std::string p = root + "/" + e.rel;
  if (e.kind == Entry::dir) return ::mkdir(p.c_str(), 0755) == 0;
  if (e.kind == Entry::link) return ::symlink(e.text.c_str(), p.c_str()) == 0;
  int fd = static_cast<int>(::syscall(SYS_openat, AT_FDCWD, p.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644));
  if (fd < 0) return false;
  bool ok = ::write(fd, e.text.data(), e.text.size()) == static_cast<ssize_t>(e.text.size());
  ::syscall(SYS_close, fd);
  return ok;
}

void remove_tree(const std::string& root, const std::vector<Entry>& entries) {
  for (auto it = entries.rbegin(); it != entries.rend(); ++it) {
    const std::string p = root + "/" + it->rel;
    if (it->kind == Entry::dir) ::rmdir(p.c_str());
    else ::unlink(p.c_str());
  }
  ::rmdir(root.c_str());
}

// `root` is a complete tree this user made: a directory of ours that no one else may write,
// with every entry present (a /tmp cleaner may have removed some).
bool usable(const std::string& root, const std::vector<Entry>& entries) {
  struct stat st {};
  // (lstat of a $TMPDIR path passes through the shim's lstat untouched.)
  if (::lstat(root.c_str(), &st) != 0) return false;
  if (!S_ISDIR(st.st_mode) || st.st_uid != ::geteuid() || (st.st_mode & 022) != 0) return false;
  for (const Entry& e : entries) {
    if (::lstat((root + "/" + e.rel).c_str(), &st) != 0) return false;
  }
  return true;
}

// The tree is the same for every process of a user (its contents depend only on the fake
// kernel's default nodes), so it is built once, under a name that carries the user and a
// digest of the contents, and kept: processes that end without exit handlers (a forked
// child's _exit, a kill) leave nothing behind. It is built in a private directory and
// renamed into place, so a process never sees half a tree; when the shared name is taken
// by something that is not a complete tree of ours, the process keeps its private tree and
// removes it at exit.
class Tree {
 public:
  Tree() : owner_(getpid()) {
    const std::vector<Entry> entries = spec();
    const char* tmp = std::getenv("TMPDIR");
    const std::string dir = tmp && *tmp ? tmp : "/tmp";
    const std::string shared = fmt::format("{}/ork-emu-shim-{}-{:016x}", dir, ::geteuid(), digest(entries));
    root_ = shared;
    if (usable(shared, entries)) return;
    std::string staging = dir + "/ork-emu-shim.XXXXXX";
    bool ok = mkdtemp(staging.data()) != nullptr;
    for (size_t i = 0; ok && i < entries.size(); ++i) ok = make(staging, entries[i]);
    if (!ok) {
      std::fprintf(stderr, "libork_emu_shim: cannot build the emulated /dev and /sys in %s: %s\n", staging.c_str(),
                   std::strerror(errno));
      remove_tree(staging, entries);
      root_ = "/nonexistent/ork-emu-shim";
      return;
    }
    if (::rename(staging.c_str(), shared.c_str()) == 0) return;
    if (usable(shared, entries)) {  // another process renamed its copy first
      remove_tree(staging, entries);
      return;
    }
    root_ = staging;
    private_ = entries;
  }
  ~Tree() {
    if (!private_.empty() && getpid() == owner_) remove_tree(root_, private_);
  }

  const std::string& root() const { return root_; }

 private:
  pid_t owner_;
  std::string root_;
  std::vector<Entry> private_;  // set when the tree is this process's own
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
