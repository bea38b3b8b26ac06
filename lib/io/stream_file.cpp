#include "lib/io/stream_file.h"

#include "lib/io/read_plan.h"

#include <fcntl.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <utility>

#include <fmt/format.h>

namespace ork::io {
namespace {

constexpr uint32_t kDefaultAlignBytes = 4096;  // st_blksize-style guess, as llama.cpp uses

struct FreeDeleter {
  void operator()(void* p) const { std::free(p); }
};

// One aligned read at offset 0: some file systems (overlay, FUSE) accept O_DIRECT at open
// and refuse it with EINVAL at the first read (moby/moby#12170,
// scylladb/seastar#3518). The read's answer is data: 0, or the seam's -errno (EINVAL: the
// file system refuses O_DIRECT); a probe buffer that cannot be had is this layer's error.
Result<int> probe_direct_read(FileOs& os, int fd, uint32_t align) {
  std::unique_ptr<void, FreeDeleter> buf(std::aligned_alloc(align, align));
  if (!buf) return make_error(-ENOMEM, fmt::format("O_DIRECT probe: cannot allocate {} aligned bytes", align));
  ssize_t n;
  do {
    n = os.pread(fd, buf.get(), align, 0);
  } while (n == -EINTR);
  return n < 0 ? static_cast<int>(n) : 0;
}

}  // namespace

uint32_t direct_align_bytes(FileOs& os, int fd, std::string* source) {
  DioAlign dio;
  if (os.dio_align(fd, &dio) == 0) {
    *source = "statx DIOALIGN";
    if (dio.offset_bytes == 0 || dio.mem_bytes == 0) return 0;
    return std::max(dio.mem_bytes, dio.offset_bytes);
  }
  uint32_t lbs = 0;
  if (os.logical_block_size(fd, &lbs) == 0 && is_pow2(lbs)) {
    *source = "logical block size";
    return lbs;
  }
  *source = "default";
  return kDefaultAlignBytes;
}

Result<StreamFile> StreamFile::open(FileOs& os, const std::string& path, bool want_direct,
                                    std::vector<std::string>* fallbacks) {
  StreamFile f;
  f.os_ = &os;
  f.path_ = path;
  if (want_direct) {
    const int fd = os.open(path.c_str(), O_RDONLY | O_DIRECT);
    if (fd >= 0) {
      f.fd_ = fd;
      std::string source;
      const uint32_t align = direct_align_bytes(os, fd, &source);
      auto probe = align == 0 ? Result<int>(-EINVAL) : probe_direct_read(os, fd, align);
      if (!probe) {
        os.close(fd);
        f.fd_ = -1;
        return probe.error();
      }
      if (*probe == 0) {
        f.direct_ = true;
        f.align_ = align;
      } else {
        fallbacks->push_back(fmt::format(
            "O_DIRECT refused by the first read ({}{}) -> buffered reads", errno_text(*probe),
            align == 0 ? ", statx reports no direct I/O" : ""));
        os.close(fd);
        f.fd_ = -1;
      }
    } else if (fd == -EINVAL || fd == -EOPNOTSUPP) {
      fallbacks->push_back(
          fmt::format("O_DIRECT refused at open ({}) -> buffered reads", errno_text(fd)));
    } else {
      return make_error(fd, open_error(path, fd));
    }
  }
  if (f.fd_ < 0) {
    const int fd = os.open(path.c_str(), O_RDONLY);
    if (fd < 0) return make_error(fd, open_error(path, fd));
    f.fd_ = fd;
  }
  const int rc = os.file_size(f.fd_, &f.size_);
  if (rc < 0) return make_error(rc, fmt::format("fstat {}: {}", path, errno_text(rc)));
  return f;
}

StreamFile::StreamFile(StreamFile&& other) noexcept { *this = std::move(other); }

StreamFile& StreamFile::operator=(StreamFile&& other) noexcept {
  if (this != &other) {
    reset();
    os_ = other.os_;
    fd_ = std::exchange(other.fd_, -1);
    size_ = other.size_;
    direct_ = other.direct_;
    align_ = other.align_;
    path_ = std::move(other.path_);
  }
  return *this;
}

StreamFile::~StreamFile() { reset(); }

void StreamFile::reset() {
  if (fd_ >= 0 && os_ != nullptr) os_->close(fd_);
  fd_ = -1;
}

}  // namespace ork::io
