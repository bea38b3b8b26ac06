// A test's scratch directory: a fresh one under $TMPDIR, removed with everything in it when
// the object goes. Tests write model files of up to a few hundred MiB; left behind, every
// run of the suites would add to the disk until a later run cannot write its own.
#pragma once

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <system_error>

namespace ork::test {

class ScratchDir {
 public:
  explicit ScratchDir(const std::string& prefix = "ork-test") : owner_(::getpid()) {
    std::string tmpl = (std::filesystem::temp_directory_path() / (prefix + "-XXXXXX")).string();
    if (::mkdtemp(tmpl.data()) == nullptr) std::abort();  // no scratch space: nothing to test with
    path_ = tmpl;
  }
  ~ScratchDir() {
    if (::getpid() != owner_) return;  // a forked child leaves its parent's files alone
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  pid_t owner_;
  std::filesystem::path path_;
};

// One directory for the whole test process, removed when the process exits normally.
inline const ScratchDir& process_scratch() {
  static const ScratchDir dir("ork-test-" + std::to_string(::getpid()));
  return dir;
}

}  // namespace ork::test
