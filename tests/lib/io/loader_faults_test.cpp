// Faults on the weight-streaming path, for every source: EIO and ENOSPC from pread and from
// io_uring completions, short reads, a file truncated while it streams, and fd exhaustion.
// Each load that fails names the file and the offset; the failure leaks no slot (every layer
// loads again afterwards, through the same few slots); the next load is byte-exact.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

#include <gtest/gtest.h>

#include "lib/io/loader.h"
#include "tests/lib/io/io_test_util.h"

namespace ork::io {
namespace {

using test::expect_read_error;
using test::FaultyFileOs;

constexpr SourceKind kSources[] = {SourceKind::kSync, SourceKind::kWorker, SourceKind::kUring};

class IoFaults : public ::testing::Test {
 protected:
  void SetUp() override {
    model_ = test::make_model(dir_, "m.safetensors",
                              SyntheticSpec{.layers = 4, .hidden = 32, .ffn = 90, .vocab = 7,
                                            .dtype = "F32", .seed = 4});
  }
  std::unique_ptr<LayerLoader> open(SourceKind source, FileOs& os) {
    LoaderOptions o{.source = source, .n_slots = 2, .auto_prefetch = false, .chunk_bytes = 8192,
                    .use_env = false};
    auto l = LayerLoader::open(model_.path, layer_extents(model_.layout), o, os);
    EXPECT_TRUE(l.ok()) << l.error().message;
    return l.ok() ? std::move(l.value()) : nullptr;
  }
  // Every layer, twice round: with two slots, a slot leaked by an earlier failure would
  // leave a load without one.
  void expect_every_layer_loads(LayerLoader& l) {
    for (int round = 0; round < 2; ++round) {
      for (size_t layer = 0; layer < model_.layout.layers.size(); ++layer) {
        auto b = l.load(layer);
        ASSERT_TRUE(b.ok()) << "layer " << layer << ": " << b.error().message;
        EXPECT_TRUE(test::layer_matches(model_, layer, b.value()));
      }
    }
  }
  test::TempDir dir_;
  test::Model model_;
};

TEST_F(IoFaults, EioAndEnospcNameTheFileAndOffsetAndLeakNoSlot) {
  for (SourceKind source : kSources) {
    if (source == SourceKind::kUring && !test::uring_works()) continue;
    for (int err : {-EIO, -ENOSPC}) {
      SCOPED_TRACE(std::string(source_name(source)) + " " + errno_text(err));
      FaultyFileOs os;
      auto l = open(source, os);
      ASSERT_TRUE(l);
      os.pread_error = err;  // the io_uring source's buffered fallback reads with pread
      os.cqe_error = err;
      for (size_t layer = 0; layer < model_.layout.layers.size(); ++layer) {
        auto r = l->load(layer);
        ASSERT_FALSE(r.ok());
        expect_read_error(r.error(), err, model_.path);
      }
      os.pread_error = 0;
      os.cqe_error = 0;
      expect_every_layer_loads(*l);
    }
  }
}

TEST_F(IoFaults, ShortReadsEverywhereStillGiveExactLayers) {
  for (SourceKind source : kSources) {
    if (source == SourceKind::kUring && !test::uring_works()) continue;
    SCOPED_TRACE(source_name(source));
    FaultyFileOs os;
    os.pread_short_every = 2;  // every other read comes back a third short (every read:
                               // O_DIRECT would restart its unaligned remainder for ever)
    os.cqe_short_every = 2;
    auto l = open(source, os);
    ASSERT_TRUE(l);
    expect_every_layer_loads(*l);
  }
}

std::vector<char> read_whole(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST_F(IoFaults, FileTruncatedWhileStreamingFailsNamingTheEndThenRecovers) {
  for (SourceKind source : kSources) {
    if (source == SourceKind::kUring && !test::uring_works()) continue;
    SCOPED_TRACE(source_name(source));
    test::TempDir dir;
    auto m = test::make_model(dir, "t.safetensors", model_.spec);
    LoaderOptions o{.source = source, .n_slots = 2, .auto_prefetch = false, .chunk_bytes = 8192,
                    .use_env = false};
    auto l = LayerLoader::open(m.path, layer_extents(m.layout), o);
    ASSERT_TRUE(l.ok()) << l.error().message;
    ASSERT_TRUE(l.value()->load(0).ok());
    const uint64_t full = std::filesystem::file_size(m.path);
    const std::vector<char> whole = read_whole(m.path);  // to grow the same inode back
    const auto last = m.layout.layers.back().extent;
    std::filesystem::resize_file(m.path, last.offset + last.length / 2);  // mid-way in the last layer
    auto r = l.value()->load(m.layout.layers.size() - 1);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code, -EIO);
    EXPECT_NE(r.error().message.find(m.path), std::string::npos) << r.error().message;
    EXPECT_NE(r.error().message.find("unexpected end of file at offset"), std::string::npos) << r.error().message;
    // The layers still inside the file load; the file grown back, the last one does too.
    for (int i = 0; i < 3; ++i) {
      auto b = l.value()->load(0);
      ASSERT_TRUE(b.ok()) << b.error().message;
      EXPECT_TRUE(test::layer_matches(m, 0, b.value()));
    }
    // Grown back in place: the loader holds the file open, and write_synthetic_safetensors
    // replaces a file by rename (another inode), as every output is (driver/common/safe_file.h).
    {
      std::ofstream back(m.path, std::ios::binary | std::ios::trunc);
      back.write(whole.data(), static_cast<std::streamsize>(whole.size()));
    }
    ASSERT_EQ(std::filesystem::file_size(m.path), full);
    auto b = l.value()->load(m.layout.layers.size() - 1);
    ASSERT_TRUE(b.ok()) << b.error().message;
    EXPECT_TRUE(test::layer_matches(m, m.layout.layers.size() - 1, b.value()));
  }
}

// No descriptor free (RLIMIT_NOFILE lowered in a child): opening a loader fails with EMFILE
// naming the file, for every source; with descriptors back, the same open works.
TEST_F(IoFaults, FdExhaustionFailsTheOpenCleanly) {
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    rlimit low{};
    ::getrlimit(RLIMIT_NOFILE, &low);
    low.rlim_cur = 64;
    if (::setrlimit(RLIMIT_NOFILE, &low) != 0) ::_exit(10);
    std::vector<int> held;
    const int base = ::open("/dev/null", O_RDONLY);
    if (base < 0) ::_exit(14);
    for (int fd; (fd = ::dup(base)) >= 0;) held.push_back(fd);
    for (SourceKind source : kSources) {
      LoaderOptions o{.source = source, .n_slots = 2, .use_env = false};
      auto l = LayerLoader::open(model_.path, layer_extents(model_.layout), o);
      if (l.ok()) ::_exit(11);
      if (l.error().message.find(model_.path) == std::string::npos) ::_exit(12);
    }
    for (int fd : held) ::close(fd);
    for (SourceKind source : kSources) {
      LoaderOptions o{.source = source, .n_slots = 2, .use_env = false};
      auto l = LayerLoader::open(model_.path, layer_extents(model_.layout), o);
      if (!l.ok() || !l.value()->load(1).ok()) ::_exit(13);
    }
    ::_exit(0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << "the child died of signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 0) << "10 setrlimit, 11 opened anyway, 12 file not named, 13 not usable after";
}

}  // namespace
}  // namespace ork::io
