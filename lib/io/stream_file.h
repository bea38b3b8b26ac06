// Opening a weight file for streaming: O_DIRECT where the file system allows it, with its
// alignment, else buffered. Each refusal is a fallback, recorded as a sentence for the
// stats ("O_DIRECT refused ... -> buffered reads").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "driver/common/result.h"
#include "lib/io/file_os.h"

namespace ork::io {

class StreamFile {
 public:
  // want_direct: try O_DIRECT first. Fallbacks taken are appended to *fallbacks.
  static Result<StreamFile> open(FileOs& os, const std::string& path, bool want_direct,
                                 std::vector<std::string>* fallbacks);

  StreamFile() = default;
  StreamFile(StreamFile&& other) noexcept;
  StreamFile& operator=(StreamFile&& other) noexcept;
  StreamFile(const StreamFile&) = delete;
  StreamFile& operator=(const StreamFile&) = delete;
  ~StreamFile();

  FileOs& os() const { return *os_; }
  int fd() const { return fd_; }
  uint64_t size_bytes() const { return size_; }
  bool direct() const { return direct_; }
  uint32_t align_bytes() const { return align_; }  // 1 when buffered
  const std::string& path() const { return path_; }

 private:
  void reset();
  FileOs* os_ = nullptr;
  int fd_ = -1;
  uint64_t size_ = 0;
  bool direct_ = false;
  uint32_t align_ = 1;
  std::string path_;
};

// The O_DIRECT alignment of an open fd: statx DIOALIGN, else the device's logical block
// size, else 4096 (the order docs/io.md gives, from statx(2)). 0 = the file system says
// it cannot do direct I/O at all.
uint32_t direct_align_bytes(FileOs& os, int fd, std::string* source);

}  // namespace ork::io
