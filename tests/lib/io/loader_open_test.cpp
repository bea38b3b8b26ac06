// Each fallback forced through the FileOs seam or the environment, with the bytes still
// identical; and the short-read / EINTR paths of both engines driven by injected faults.
//
// Some kernels refuse things by themselves: under qemu-user (the aarch64 CI step,
// docs/arm64.md) io_uring is ENOSYS and statx reports a zero direct-I/O alignment, so the
// library adds its own fallback for each. The fixture finds those once, prints them, and
// every expected list below includes them where the library must add them: each message is
// still checked exactly, on every machine. Only a test whose subject does not exist here (a
// uring engine where io_uring is refused) skips, and says why.
#include <stdlib.h>

#include <cstdio>

#include <gtest/gtest.h>

#include "lib/io/loader.h"
#include "tests/lib/io/io_test_util.h"

namespace ork::io {
namespace {

using test::FaultyFileOs;

class Fallbacks : public ::testing::Test {
 protected:
  void SetUp() override {
    model_ = test::make_model(dir_, "m.safetensors",
                              SyntheticSpec{.layers = 6, .hidden = 64, .ffn = 171, .vocab = 33,
                                            .dtype = "F16", .seed = 5});
    // What this kernel refuses without any injected fault, in the library's words.
    if (Status u = probe_uring(real_file_os()); !u) host_uring_ = u.error().message + " -> pread worker";
    std::vector<std::string> direct;
    auto f = StreamFile::open(real_file_os(), model_.path, true, &direct);
    ASSERT_TRUE(f.ok()) << f.error().message;
    if (!f->direct()) {
      ASSERT_EQ(direct.size(), 1u);
      host_direct_ = direct[0];
      EXPECT_EQ(host_direct_.rfind("O_DIRECT refused ", 0), 0u) << host_direct_;
    }
    static bool said = false;  // once per run
    if (!said) {
      if (!host_uring_.empty()) std::printf("this kernel refuses io_uring by itself: %s\n", host_uring_.c_str());
      if (!host_direct_.empty()) std::printf("this kernel refuses O_DIRECT by itself: %s\n", host_direct_.c_str());
      said = true;
    }
  }
  // `injected` plus what the kernel adds by itself: the direct-I/O refusal (when the test
  // leaves O_DIRECT to the file) comes first, as StreamFile::open runs before the engine;
  // the io_uring one last (when the test did not refuse io_uring itself).
  std::vector<std::string> expected(std::vector<std::string> injected, bool host_direct, bool host_uring) const {
    std::vector<std::string> out;
    if (host_direct && !host_direct_.empty()) out.push_back(host_direct_);
    out.insert(out.end(), injected.begin(), injected.end());
    if (host_uring && !host_uring_.empty()) out.push_back(host_uring_);
    return out;
  }
  // Streams every layer twice and checks the bytes; returns the stats.
  LoaderStats stream(FileOs& os, LoaderOptions o) {
    auto loader = LayerLoader::open(model_.path, layer_extents(model_.layout), o, os);
    EXPECT_TRUE(loader.ok()) << loader.error().message;
    if (!loader.ok()) return {};
    for (size_t pass = 0; pass < 2; ++pass) {
      for (size_t i = 0; i < model_.layout.layers.size(); ++i) {
        auto bytes = loader.value()->load(i);
        EXPECT_TRUE(bytes.ok()) << bytes.error().message;
        if (!bytes.ok()) return {};
        EXPECT_TRUE(test::layer_matches(model_, i, bytes.value()));
      }
    }
    return loader.value()->stats();
  }
  static LoaderOptions uring(bool use_env = false) {
    return LoaderOptions{.source = SourceKind::kUring, .n_slots = 3, .prefetch_depth = 2,
                         .chunk_bytes = 16 * 1024, .queue_depth = 4, .use_env = use_env};
  }
  test::TempDir dir_;
  test::Model model_;
  std::string host_uring_, host_direct_;  // empty: this kernel allows it
};

TEST_F(Fallbacks, UringRefusedWithEpermGivesPreadWorker) {
  FaultyFileOs os;
  os.uring_init_error = -EPERM;
  const LoaderStats s = stream(os, uring());
  EXPECT_EQ(s.engine, EngineKind::kPread);
  EXPECT_EQ(s.source, SourceKind::kUring);
  EXPECT_TRUE(s.async);
  EXPECT_EQ(s.fallbacks,
            expected({"io_uring setup refused: EPERM (Operation not permitted) -> pread worker"}, true, false));
}

TEST_F(Fallbacks, UringRefusedWithEnosysGivesPreadWorker) {
  FaultyFileOs os;
  os.uring_init_error = -ENOSYS;
  const LoaderStats s = stream(os, uring());
  EXPECT_EQ(s.engine, EngineKind::kPread);
  EXPECT_EQ(s.fallbacks,
            expected({"io_uring setup refused: ENOSYS (Function not implemented) -> pread worker"}, true, false));
}

TEST_F(Fallbacks, DirectRefusedAtOpenGivesBufferedReads) {
  FaultyFileOs os;
  os.direct_open_error = -EINVAL;
  const LoaderStats s = stream(os, uring());
  EXPECT_FALSE(s.direct);
  EXPECT_EQ(s.align_bytes, 1u);
  EXPECT_EQ(s.engine, host_uring_.empty() ? EngineKind::kUring : EngineKind::kPread);
  EXPECT_EQ(s.fallbacks,
            expected({"O_DIRECT refused at open (EINVAL (Invalid argument)) -> buffered reads"}, false, true));
}

TEST_F(Fallbacks, DirectRefusedAtFirstReadGivesBufferedReads) {
  FaultyFileOs os;
  // A kernel that refuses direct I/O by itself (statx reports no alignment: qemu-user)
  // would stop the library before its first read; an alignment given here gets it there.
  if (host_direct_.rfind("O_DIRECT refused at open", 0) == 0) GTEST_SKIP() << "no first read here: " << host_direct_;
  if (!host_direct_.empty()) os.dio_align_bytes = 4096;
  os.direct_read_error = -EINVAL;
  const LoaderStats s = stream(os, uring());
  EXPECT_FALSE(s.direct);
  EXPECT_EQ(s.fallbacks,
            expected({"O_DIRECT refused by the first read (EINVAL (Invalid argument)) -> buffered reads"}, false, true));
}

TEST_F(Fallbacks, RegistrationRefusedGivesPlainReads) {
  if (!host_uring_.empty()) GTEST_SKIP() << "no uring engine here: " << host_uring_;
  for (int error : {-ENOMEM, -EFAULT}) {
    FaultyFileOs os;
    os.register_error = error;
    const LoaderStats s = stream(os, uring());
    EXPECT_EQ(s.engine, EngineKind::kUring);
    EXPECT_FALSE(s.registered_buffers);
    EXPECT_EQ(s.fallbacks,
              expected({"io_uring buffer registration refused (" + errno_text(error) + ") -> plain reads"}, true, false));
  }
}

TEST_F(Fallbacks, RegisteredSlotsSplitIntoIovecs) {
  if (!host_uring_.empty()) GTEST_SKIP() << "no uring engine here: " << host_uring_;
  FaultyFileOs os;
  LoaderOptions o = uring();
  o.max_iovec_bytes = 64 * 1024;  // stands in for the kernel's 1 GiB per iovec
  const LoaderStats s = stream(os, o);
  ASSERT_TRUE(s.registered_buffers) << (s.fallbacks.empty() ? "" : s.fallbacks[0]);
  // A layer is 2*64 + 4*64*64 + 3*171*64 elements of 2 bytes = 98688 bytes; with the
  // alignment rounding a slot spans 2 iovecs of 64 KiB (slots are page-rounded, <= 128 KiB).
  EXPECT_EQ(os.registered_iovecs.load(), 3 * 2);
}

TEST_F(Fallbacks, EnvironmentForcesEachFallback) {
  ::setenv("ORK_IO_NO_URING", "1", 1);
  ::setenv("ORK_IO_NO_DIRECT", "1", 1);
  LoaderStats s = stream(real_file_os(), uring(/*use_env=*/true));
  ::unsetenv("ORK_IO_NO_URING");
  ::unsetenv("ORK_IO_NO_DIRECT");
  EXPECT_EQ(s.engine, EngineKind::kPread);
  EXPECT_FALSE(s.direct);
  ASSERT_EQ(s.fallbacks.size(), 2u);
  EXPECT_EQ(s.fallbacks[0], "io_uring disabled by ORK_IO_NO_URING -> pread worker");
  EXPECT_EQ(s.fallbacks[1], "O_DIRECT disabled by ORK_IO_NO_DIRECT -> buffered reads");
  if (!host_uring_.empty()) {
    std::printf("ORK_IO_NO_REGISTER not tested: no uring engine here (%s)\n", host_uring_.c_str());
    return;
  }
  ::setenv("ORK_IO_NO_REGISTER", "1", 1);
  s = stream(real_file_os(), uring(/*use_env=*/true));
  ::unsetenv("ORK_IO_NO_REGISTER");
  EXPECT_EQ(s.engine, EngineKind::kUring);
  EXPECT_FALSE(s.registered_buffers);
  EXPECT_EQ(s.fallbacks, expected({"buffer registration disabled by ORK_IO_NO_REGISTER -> plain reads"}, true, false));
}

TEST_F(Fallbacks, AllThreeAtOnce) {
  FaultyFileOs os;
  os.uring_init_error = -EPERM;
  os.direct_open_error = -EINVAL;
  os.register_error = -ENOMEM;  // never reached: no ring
  const LoaderStats s = stream(os, uring());
  EXPECT_EQ(s.engine, EngineKind::kPread);
  EXPECT_FALSE(s.direct);
  EXPECT_EQ(s.fallbacks, (std::vector<std::string>{
                             "O_DIRECT refused at open (EINVAL (Invalid argument)) -> buffered reads",
                             "io_uring setup refused: EPERM (Operation not permitted) -> pread worker"}));
}

TEST_F(Fallbacks, UringShortReadsAndEintrAreResubmitted) {
  if (!host_uring_.empty()) GTEST_SKIP() << "no uring engine here: " << host_uring_;
  for (DirectMode direct : {DirectMode::kOn, DirectMode::kOff}) {
    FaultyFileOs os;
    os.cqe_short_every = 3;
    os.cqe_eintr_every = 7;
    LoaderOptions o = uring();
    o.direct = direct;
    const LoaderStats s = stream(os, o);
    EXPECT_EQ(s.engine, EngineKind::kUring);
    EXPECT_GT(s.engine_counters.short_reads, 0u);
    EXPECT_GT(s.engine_counters.retries, 0u);
  }
}

TEST_F(Fallbacks, PreadShortReadsAndEintrAreContinued) {
  for (SourceKind source : {SourceKind::kSync, SourceKind::kWorker}) {
    for (DirectMode direct : {DirectMode::kOn, DirectMode::kOff}) {
      FaultyFileOs os;
      os.pread_short_every = 2;
      os.pread_eintr_every = 5;
      LoaderOptions o = uring();
      o.source = source;
      o.direct = direct;
      const LoaderStats s = stream(os, o);
      EXPECT_EQ(s.engine, EngineKind::kPread);
      EXPECT_GT(s.engine_counters.short_reads, 0u);
      EXPECT_GT(s.engine_counters.retries, 0u);
    }
  }
}

}  // namespace
}  // namespace ork::io
