// Helpers shared by the lib/io tests: a temporary directory, synthetic model files, a byte
// checker, and FaultyFileOs, a FileOs that forwards to the real one with failure knobs.
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <mutex>
#include <set>
#include <span>
#include <string>

#include "driver/common/errno_text.h"
#include "tests/support/scratch_dir.h"
#include "driver/common/result.h"
#include "lib/io/engine.h"
#include "lib/io/file_os.h"
#include "lib/io/stream_file.h"
#include "lib/io/safetensors.h"
#include "tools/ork_stream/synthetic_safetensors.h"

namespace ork::io {
// The synthetic model files come from ork_stream's writer (the benchmark's, not lib/io's).
using tools::SyntheticSpec;
using tools::synthetic_byte;
using tools::write_synthetic_safetensors;
}  // namespace ork::io

namespace ork::io::test {

// A scratch directory of the test's own, removed with its files when the test ends.
class TempDir : public ork::test::ScratchDir {
 public:
  TempDir() : ScratchDir("ork-io-test") {}
};

// A failed read's error: the injected errno, and a message naming the file, the offset and
// the errno's text (what a user needs to find the bad read).
inline void expect_read_error(const Error& e, int err, const std::string& path) {
  EXPECT_EQ(e.code, err);
  EXPECT_NE(e.message.find(path), std::string::npos) << e.message;
  EXPECT_NE(e.message.find("at offset "), std::string::npos) << e.message;
  EXPECT_NE(e.message.find(errno_text(err)), std::string::npos) << e.message;
}

// Writes a synthetic model and returns its layout (ASSERTs inside).
struct Model {
  std::string path;
  SyntheticSpec spec;
  SafetensorsFile file;
  LayerLayout layout;
};
inline Model make_model(const TempDir& dir, const std::string& name, const SyntheticSpec& spec) {
  Model m{dir.file(name), spec, {}, {}};
  auto written = write_synthetic_safetensors(m.path, spec);
  EXPECT_TRUE(written.ok()) << written.error().message;
  auto f = read_safetensors(m.path);
  EXPECT_TRUE(f.ok()) << (f.ok() ? "" : f.error().message);
  if (f.ok()) m.file = f.value();
  auto l = group_layers(m.file);
  EXPECT_TRUE(l.ok()) << (l.ok() ? "" : l.error().message);
  if (l.ok()) m.layout = l.value();
  return m;
}

// Checks every byte of a layer against the synthetic generator; reports the first mismatch.
inline ::testing::AssertionResult layer_matches(const Model& m, size_t layer,
                                                std::span<const std::byte> got) {
  const Extent e = m.layout.layers[layer].extent;
  if (got.size() != e.length) {
    return ::testing::AssertionFailure() << "layer " << layer << ": " << got.size()
                                         << " bytes, expected " << e.length;
  }
  const uint64_t base = e.offset - m.file.data_offset;
  for (uint64_t i = 0; i < e.length; ++i) {
    const uint8_t want = synthetic_byte(m.spec.seed, base + i);
    if (static_cast<uint8_t>(got[i]) != want) {
      return ::testing::AssertionFailure()
             << "layer " << layer << " byte " << i << " (file offset " << e.offset + i
             << "): got " << int(got[i]) << ", expected " << int(want);
    }
  }
  return ::testing::AssertionSuccess();
}

// What this machine allows, so tests expect the fallback where the environment forces one
// (a container without io_uring, a file system without O_DIRECT) instead of failing.
inline bool uring_works() { return probe_uring(real_file_os()).ok(); }
inline bool direct_works(const std::string& path) {
  std::vector<std::string> fallbacks;
  auto f = StreamFile::open(real_file_os(), path, true, &fallbacks);
  return f.ok() && f->direct();
}

// Forwards to the real file system; each knob, when non-zero, injects one fault.
class FaultyFileOs : public FileOs {
 public:
  int uring_init_error = 0;      // uring_queue_init returns this
  int register_error = 0;        // uring_register_buffers returns this
  int direct_open_error = 0;     // open(O_DIRECT) returns this
  int direct_read_error = 0;     // pread on an O_DIRECT fd returns this
  uint32_t dio_align_bytes = 0;  // statx DIOALIGN reports this (where the kernel gives none)
  int pread_short_every = 0;     // every k-th pread reports a third of the bytes it read
  int pread_eintr_every = 0;     // every k-th pread fails with -EINTR
  int cqe_short_every = 0;       // every k-th io_uring completion is cut to a third
  int cqe_eintr_every = 0;       // every k-th io_uring completion becomes -EINTR
  std::atomic<int> pread_error{0};  // every pread fails with this (after open)
  std::atomic<int> cqe_error{0};    // every io_uring completion fails with this
  std::atomic<int> registered_iovecs{0};
  std::function<void()> on_completion;  // runs at every io_uring completion (engine thread)

  int open(const char* path, int flags) override {
    if ((flags & O_DIRECT) && direct_open_error) return direct_open_error;
    const int fd = real_.open(path, flags);
    if (fd >= 0 && (flags & O_DIRECT)) {
      std::lock_guard<std::mutex> lk(mu_);
      direct_fds_.insert(fd);
    }
    return fd;
  }
  int close(int fd) override {
    {
      std::lock_guard<std::mutex> lk(mu_);
      direct_fds_.erase(fd);
    }
    return real_.close(fd);
  }
  ssize_t pread(int fd, void* buf, size_t length, off_t offset) override {
    if (direct_read_error && is_direct(fd)) return direct_read_error;
    if (pread_error) return pread_error;
    const int k = ++preads_;
    if (pread_eintr_every && k % pread_eintr_every == 0) return -EINTR;
    const ssize_t n = real_.pread(fd, buf, length, offset);
    // A short read as the kernel reports one: the request was valid, fewer bytes came back.
    if (pread_short_every && k % pread_short_every == 0 && n > 2) return n / 3;
    return n;
  }
  int file_size(int fd, uint64_t* size) override { return real_.file_size(fd, size); }
  int dio_align(int fd, DioAlign* out) override {
    if (dio_align_bytes == 0) return real_.dio_align(fd, out);
    *out = DioAlign{dio_align_bytes, dio_align_bytes};
    return 0;
  }
  int logical_block_size(int fd, uint32_t* b) override { return real_.logical_block_size(fd, b); }
  int fadvise(int fd, off_t o, off_t l, int a) override { return real_.fadvise(fd, o, l, a); }
  void* mmap_file(int fd, size_t l, int* e) override { return real_.mmap_file(fd, l, e); }
  int munmap(void* a, size_t l) override { return real_.munmap(a, l); }
  int uring_queue_init(unsigned n, io_uring* r, unsigned f) override {
    return uring_init_error ? uring_init_error : real_.uring_queue_init(n, r, f);
  }
  int uring_register_buffers(io_uring* r, const iovec* v, unsigned n) override {
    if (register_error) return register_error;
    const int rc = real_.uring_register_buffers(r, v, n);
    if (rc == 0) registered_iovecs = static_cast<int>(n);
    return rc;
  }
  int uring_register_files(io_uring* r, const int* f, unsigned n) override {
    return real_.uring_register_files(r, f, n);
  }
  int uring_completion(int res, size_t requested) override {
    if (on_completion) on_completion();
    if (cqe_error) return cqe_error;
    const int k = ++cqes_;
    if (cqe_eintr_every && k % cqe_eintr_every == 0) return -EINTR;
    if (cqe_short_every && k % cqe_short_every == 0 && res > 2) return res / 3;
    return real_.uring_completion(res, requested);
  }

 private:
  bool is_direct(int fd) {
    std::lock_guard<std::mutex> lk(mu_);
    return direct_fds_.count(fd) != 0;
  }
  FileOs& real_ = real_file_os();
  std::mutex mu_;
  std::set<int> direct_fds_;
  std::atomic<int> preads_{0};
  std::atomic<int> cqes_{0};
};

}  // namespace ork::io::test
