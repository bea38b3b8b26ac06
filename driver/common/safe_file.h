// Files in and out, the one way every layer and tool takes them (docs/tools.md
// "Conventions", docs/reliability.md "Files in and out"):
//
// - An input is a regular file. A FIFO, a device node, a socket or a directory is refused by
//   name before it is opened for good: a FIFO without a writer would block the open forever,
//   /dev/zero never ends, a directory opens but reads as nothing sensible. The open itself
//   uses O_NONBLOCK (meaningless for a regular file, see open(2)) and checks again with
//   fstat, so a path swapped between the stat and the open cannot block either.
// - An output is a new path or a regular file, never anything else (a device node, a FIFO,
//   a directory: refused, left as it was). It is written to a temporary file beside it
//   (".NAME.tmp-XXXXXX" in the same directory, so the rename cannot cross a file system),
//   fsync'd and renamed over the output only when complete (rename(2) is atomic: a reader
//   sees the old file or the new one, never half of one). On any failure the tool removes
//   the temporary file it created and nothing else; SIGINT, SIGTERM and SIGHUP remove it
//   too once a tool calls remove_temp_files_on_signals() (tools/common run_main does).
//
// Header-only because it serves every layer from lib/io and lib/matmul up (driver/common
// is the one folder they all reach; docs/README.md "The layers").
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <string_view>
#include <utility>

#include "driver/common/echo.h"
#include "driver/common/errno_text.h"
#include "driver/common/result.h"

namespace ork {

// "a FIFO", "a character device", ...: what a stat mode is, for messages.
inline const char* file_kind(mode_t mode) {
  if (S_ISREG(mode)) return "a regular file";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

// Ok when `path` is a regular file (symlinks followed); the stat error or "PATH: a FIFO, not
// a regular file" otherwise. Message names the path capped (echo_capped).
inline Status check_regular_input(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    const int err = errno;
    return make_error(-err, echo_capped(path) + ": " + errno_text(err));
  }
  if (!S_ISREG(st.st_mode))
    return make_error(-EINVAL, echo_capped(path) + ": " + file_kind(st.st_mode) + ", not a regular file");
  return {};
}

// Opens a regular file for reading (`flags` adds O_DIRECT and the like): the fd, or an error
// naming the path. Never blocks on a FIFO (see the top of this file).
inline Result<int> open_regular_input(const std::string& path, int flags = 0) {
  if (Status s = check_regular_input(path); !s) return s.error();
  int fd;
  do {
    fd = ::open(path.c_str(), flags | O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) {
    const int err = errno;
    return make_error(-err, "open " + echo_capped(path) + ": " + errno_text(err));
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return make_error(-EINVAL, echo_capped(path) + ": " + file_kind(st.st_mode) + ", not a regular file");
  }
  return fd;
}

// Ok when `path` may be written as an output: it does not exist yet (its directory must), or
// it is a regular file. A device node, FIFO, socket or directory is refused by name.
inline Status check_output_path(const std::string& path) {
  if (path.empty()) return make_error(-EINVAL, "the output path is empty");
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    if (S_ISREG(st.st_mode)) return {};
    return make_error(-EINVAL, echo_capped(path) + ": " + file_kind(st.st_mode) +
                                   ", not a regular file: refusing to write it (outputs are new paths or regular files)");
  }
  const int err = errno;
  if (err != ENOENT) return make_error(-err, echo_capped(path) + ": " + errno_text(err));
  return {};
}

namespace safe_file_detail {

// The temporary files in flight, for the signal handler: fixed slots, no allocation, so the
// handler stays async-signal-safe (it calls only unlink, signal and raise; signal-safety(7)).
inline constexpr int kTempSlots = 32;
struct TempSlot {
  std::atomic<int> armed{0};  // 0 free, 1 taken (path being written), 2 armed
  char path[4096] = {};
};
inline TempSlot g_temp_slots[kTempSlots];

inline int arm_temp(const std::string& path) {
  if (path.size() >= sizeof g_temp_slots[0].path) return -1;  // not cleaned on a signal
  for (int i = 0; i < kTempSlots; ++i) {
    int expect = 0;
    if (!g_temp_slots[i].armed.compare_exchange_strong(expect, 1)) continue;
    std::memcpy(g_temp_slots[i].path, path.c_str(), path.size() + 1);
    g_temp_slots[i].armed.store(2);
    return i;
  }
  return -1;
}

inline void disarm_temp(int slot) {
  if (slot >= 0) g_temp_slots[slot].armed.store(0);
}

inline void on_signal(int sig) {
  for (auto& s : g_temp_slots)
    if (s.armed.load() == 2) ::unlink(s.path);
  ::signal(sig, SIG_DFL);
  ::raise(sig);  // delivered when the handler returns: the process ends as the signal says
}

// A name for the temporary file beside `target`: ".NAME.tmp-XXXXXX" (6 letters from the
// clock, the pid and a counter; O_EXCL makes a clash a retry, never a shared file).
inline std::string temp_name(const std::string& target, unsigned attempt) {
  const size_t slash = target.rfind('/');
  const std::string dir = slash == std::string::npos ? "" : target.substr(0, slash + 1);
  const std::string base = slash == std::string::npos ? target : target.substr(slash + 1);
  static std::atomic<unsigned> counter{0};
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  uint64_t x = static_cast<uint64_t>(ts.tv_nsec) ^ (static_cast<uint64_t>(::getpid()) << 20) ^
               (static_cast<uint64_t>(counter.fetch_add(1) + attempt) << 40);
  std::string suffix(6, 'a');
  for (char& c : suffix) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;  // Knuth's MMIX LCG constants
    c = static_cast<char>('a' + (x >> 33) % 26);
  }
  return dir + "." + base + ".tmp-" + suffix;
}

}  // namespace safe_file_detail

// Installs the handler that removes the temporary files in flight on SIGINT, SIGTERM and
// SIGHUP and then ends the process by the signal. Only over the default disposition: a
// handler the program installed itself is left alone.
inline void remove_temp_files_on_signals() {
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
    struct sigaction old {};
    if (::sigaction(sig, nullptr, &old) != 0 || old.sa_handler != SIG_DFL) continue;
    struct sigaction sa {};
    sa.sa_handler = safe_file_detail::on_signal;
    sigemptyset(&sa.sa_mask);
    ::sigaction(sig, &sa, nullptr);
  }
}

// An output being written: a temporary file beside the target, renamed over it by commit().
// Destroyed without a commit, it removes its temporary file; the target is never touched.
class OutputFile {
 public:
  static Result<OutputFile> create(const std::string& path);
  OutputFile(OutputFile&& o) noexcept { *this = std::move(o); }
  OutputFile& operator=(OutputFile&& o) noexcept {
    std::swap(fd_, o.fd_);
    std::swap(slot_, o.slot_);
    std::swap(path_, o.path_);
    std::swap(temp_, o.temp_);
    std::swap(target_, o.target_);
    return *this;
  }
  ~OutputFile() { abandon(); }

  int fd() const { return fd_; }
  const std::string& path() const { return path_; }
  const std::string& temp_path() const { return temp_; }

  // Writes all of `bytes` at `offset` (pwrite, retried on a short write and EINTR).
  Status write_at(uint64_t offset, const void* data, size_t bytes);
  // fsync, rename over the output, fsync of the directory (so the rename survives a crash).
  Status commit();

 private:
  OutputFile() = default;
  void abandon() {
    if (fd_ >= 0) ::close(fd_);
    if (!temp_.empty()) ::unlink(temp_.c_str());
    safe_file_detail::disarm_temp(slot_);
    fd_ = -1;
    slot_ = -1;
    temp_.clear();
  }
  Error failed(const std::string& what, int err) const {
    return make_error(-err, echo_capped(path_) + ": " + what + ": " + errno_text(err));
  }
  int fd_ = -1, slot_ = -1;
  std::string path_, temp_, target_;  // as given (messages), temporary, renamed over (symlinks followed)
};

inline Result<OutputFile> OutputFile::create(const std::string& path) {
  if (Status s = check_output_path(path); !s) return s.error();
  OutputFile f;
  f.path_ = f.target_ = path;
  // An existing output (through a symlink: its target) keeps its permission bits; a new one
  // gets 0666 less the umask, as open(2) gives any new file.
  mode_t mode = 0666;
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    if (char* real = ::realpath(path.c_str(), nullptr)) {
      f.target_ = real;
      std::free(real);
    }
    mode = st.st_mode & 07777;
  }
  for (unsigned attempt = 0; attempt < 100 && f.fd_ < 0; ++attempt) {
    const std::string temp = safe_file_detail::temp_name(f.target_, attempt);
    const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
    if (fd < 0 && errno == EEXIST) continue;
    if (fd < 0) return f.failed("cannot create a file in its directory", errno);
    f.fd_ = fd;
    f.temp_ = temp;
    f.slot_ = safe_file_detail::arm_temp(temp);
  }
  if (f.fd_ < 0) return f.failed("cannot create a temporary file beside it", EEXIST);
  if (mode != 0666) (void)::fchmod(f.fd_, mode);
  return f;
}

inline Status OutputFile::write_at(uint64_t offset, const void* data, size_t bytes) {
  const auto* p = static_cast<const char*>(data);
  size_t done = 0;
  while (done < bytes) {
    const ssize_t n = ::pwrite(fd_, p + done, bytes - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0)
      return failed("write of " + std::to_string(bytes) + " bytes at " + std::to_string(offset) + " failed",
                    n < 0 ? errno : ENOSPC);
    done += static_cast<size_t>(n);
  }
  return {};
}

inline Status OutputFile::commit() {
  if (::fsync(fd_) != 0) return failed("fsync failed", errno);
  const int fd = std::exchange(fd_, -1);
  if (::close(fd) != 0) return failed("close failed", errno);
  if (::rename(temp_.c_str(), target_.c_str()) != 0) return failed("rename into place failed", errno);
  temp_.clear();
  safe_file_detail::disarm_temp(std::exchange(slot_, -1));
  const size_t slash = target_.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : target_.substr(0, slash);
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {  // best effort: the data is in place; some file systems refuse a directory fsync
    (void)::fsync(dfd);
    ::close(dfd);
  }
  return {};
}

// The whole of `bytes` as the file `path`, through an OutputFile.
inline Status write_file_atomically(const std::string& path, std::string_view bytes) {
  auto f = OutputFile::create(path);
  if (!f) return f.error();
  if (Status s = f->write_at(0, bytes.data(), bytes.size()); !s) return s;
  return f->commit();
}

}  // namespace ork
