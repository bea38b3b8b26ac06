#include "tools/common/input_limits.h"

#include "driver/common/safe_file.h"

#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include <cstdio>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

namespace ork::tools {

namespace {

// What RLIMIT_AS (ulimit -v) still leaves this process: the limit less the address space it
// has mapped (/proc/self/statm's first field, in pages); nullopt when unlimited or unreadable.
std::optional<uint64_t> address_space_left() {
  rlimit r{};
  if (::getrlimit(RLIMIT_AS, &r) != 0 || r.rlim_cur == RLIM_INFINITY) return std::nullopt;
  std::FILE* f = std::fopen("/proc/self/statm", "r");
  unsigned long long pages = 0;
  const bool read = f != nullptr && std::fscanf(f, "%llu", &pages) == 1;
  if (f != nullptr) std::fclose(f);
  if (!read) return std::nullopt;
  const uint64_t used = static_cast<uint64_t>(pages) * static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  return r.rlim_cur > used ? r.rlim_cur - used : 0;
}

std::optional<uint64_t> mem_available() {
  std::FILE* f = std::fopen("/proc/meminfo", "r");
  if (f == nullptr) return std::nullopt;
  char line[256];
  std::optional<uint64_t> out;
  while (std::fgets(line, sizeof line, f) != nullptr) {
    unsigned long long kib = 0;
    if (std::sscanf(line, "MemAvailable: %llu kB", &kib) == 1) {
      out = static_cast<uint64_t>(kib) * 1024;
      break;
    }
  }
  std::fclose(f);
  return out;
}

}  // namespace

std::optional<uint64_t> available_memory() {
  std::optional<uint64_t> out = mem_available();
  if (auto room = address_space_left()) out = out ? std::min(*out, *room) : *room;
  return out;
}

std::optional<uint64_t> free_disk(const std::string& path) {
  struct stat st {};
  std::filesystem::path probe(path);
  if (::stat(path.c_str(), &st) != 0) {  // not there yet: its directory
    probe = probe.parent_path();
    if (probe.empty()) probe = std::filesystem::path(".");
  }
  struct statvfs v {};
  if (::statvfs(probe.c_str(), &v) != 0) return std::nullopt;
  return static_cast<uint64_t>(v.f_bavail) * static_cast<uint64_t>(v.f_frsize);
}

std::string human_bytes(uint64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024.0 && u < 6) {
    v /= 1024.0;
    ++u;
  }
  return u == 0 ? fmt::format("{} B", bytes) : fmt::format("{:.2f} {}", v, units[u]);
}

uint64_t default_memory_budget(std::optional<uint64_t> available) {
  if (!available) return kFallbackBudgetBytes;
  constexpr uint64_t kMiB = uint64_t{1} << 20;
  return *available / 2 / kMiB * kMiB;
}

std::string check_writable(const std::string& flag, const std::string& path) {
  // The output itself is never opened here (a FIFO would block the open, an existing file
  // keeps its bytes): it must be a new path or a regular file, and its directory must take
  // the temporary file the output is written to, which is created and removed again.
  auto out = OutputFile::create(path);
  if (!out) return fmt::format("{} {}", flag, out.error().message);
  return {};
}

std::string check_memory(const std::string& what, uint64_t bytes) {
  const auto avail = available_memory();
  if (!avail || bytes <= *avail) return {};
  return fmt::format("{} needs {} of memory; {} is available (MemAvailable in /proc/meminfo, or what "
                     "RLIMIT_AS leaves when less)", what,
                     human_bytes(bytes), human_bytes(*avail));
}

std::string check_disk(const std::string& what, const std::string& path, uint64_t bytes) {
  const auto avail = free_disk(path);
  if (!avail || bytes <= *avail) return {};
  return fmt::format("{} needs {} on the file system of {}; {} is free", what, human_bytes(bytes), path,
                     human_bytes(*avail));
}

std::string read_file_bounded(const std::string& what, const std::string& path, uint64_t limit,
                              std::string* out) {
  out->clear();
  const bool in = path == "-";
  struct stat st {};
  // A path names a regular file (a FIFO would block the open, /dev/zero never ends); only
  // "-" reads stdin, whatever it is, with the bound below.
  if (!in && ::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
    return fmt::format("{} {}: is {}, not a regular file", what, echo_capped(path), file_kind(st.st_mode));
  int fd = STDIN_FILENO;
  if (!in) {
    auto opened = open_regular_input(path);
    if (!opened && opened.error().code == -EINVAL) return fmt::format("{} {}", what, opened.error().message);
    if (!opened) return fmt::format("{} {}: cannot read: {}", what, echo_capped(path), std::strerror(-opened.error().code));
    fd = *opened;
  }
  if (::fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
    if (!in) ::close(fd);
    return fmt::format("{} {}: is a directory, not a file", what, path);
  }
  if (S_ISREG(st.st_mode) && static_cast<uint64_t>(st.st_size) > limit) {
    if (!in) ::close(fd);
    return fmt::format("{} {}: {} is larger than the {} this tool reads", what, path,
                       human_bytes(static_cast<uint64_t>(st.st_size)), human_bytes(limit));
  }
  // A regular file's size is known: one allocation, where growing by appends copied the text
  // about twice over into fresh pages (a 57 MB stream: docs/sched.md section 5).
  if (S_ISREG(st.st_mode)) out->reserve(static_cast<size_t>(st.st_size));
  std::string err;
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      err = fmt::format("{} {}: read failed: {}", what, path, std::strerror(errno));
      break;
    }
    if (n == 0) break;
    if (out->size() + static_cast<uint64_t>(n) > limit) {  // a pipe or device that goes on
      err = fmt::format("{} {}: more than the {} this tool reads (a device or pipe without end?)", what, path,
                        human_bytes(limit));
      break;
    }
    out->append(buf, static_cast<size_t>(n));
  }
  if (!in) ::close(fd);
  if (!err.empty()) out->clear();
  return err;
}

std::string check_not_an_input(const NamedPath& output, const std::vector<NamedPath>& inputs) {
  // A new path or a regular file, never a device node, a FIFO or a directory (safe_file.h).
  if (Status st = check_output_path(output.path); !st) return fmt::format("{} {}", output.flag, st.error().message);
  struct stat out {};
  if (::stat(output.path.c_str(), &out) != 0) return {};  // does not exist yet: no input
  for (const NamedPath& in : inputs) {
    struct stat st {};
    if (::stat(in.path.c_str(), &st) == 0 && st.st_dev == out.st_dev && st.st_ino == out.st_ino)
      return fmt::format("{} {} is the same file as the input {} {}: refusing to overwrite an input", output.flag,
                         output.path, in.flag, in.path);
  }
  return {};
}

}  // namespace ork::tools
