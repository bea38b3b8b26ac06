// Each fallback forced through the FileOs seam or the environment, with the bytes still
// identical; and the short-read / EINTR paths of both engines driven by injected faults.
#include <stdlib.h>

#include <gtest/gtest.h>

#include "lib/io/loader.h"
#include "tests/io/io_test_util.h"

namespace ork::io {
namespace {

using test::FaultyFileOs;

class Fallbacks : public ::testing::Test {
 protected:
  void SetUp() override {
    model_ = test::make_model(dir_, "m.safetensors",
                              SyntheticSpec{.layers = 6, .hidden = 64, .ffn = 171, .vocab = 33,
                                            .dtype = "F16", .seed = 5});
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
};

TEST_F(Fallbacks, UringRefusedWithEpermGivesPreadWorker) {
  FaultyFileOs os;
  os.uring_init_error = -EPERM;
  const LoaderStats s = stream(os, uring());
  EXPECT_EQ(s.engine, EngineKind::kPread);
  EXPECT_EQ(s.source, SourceKind::kUring);
  EXPECT_TRUE(s.async);
  ASSERT_EQ(s.fallbacks.size(), 1u);
  EXPECT_EQ(s.fallbacks[0],
            "io_uring setup refused: EPERM (Operation not permitted) -> pread worker");
}

TEST_F(Fallbacks, UringRefusedWithEnosysGivesPreadWorker) {
  FaultyFileOs os;
  os.uring_init_error = -ENOSYS;
  const LoaderStats s = stream(os, uring());
  EXPECT_EQ(s.engine, EngineKind::kPread);
  ASSERT_EQ(s.fallbacks.size(), 1u);
  EXPECT_EQ(s.fallbacks[0],
            "io_uring setup refused: ENOSYS (Function not implemented) -> pread worker");
}

TEST_F(Fallbacks, DirectRefusedAtOpenGivesBufferedReads) {
  FaultyFileOs os;
  os.direct_open_error = -EINVAL;
  const LoaderStats s = stream(os, uring());
  EXPECT_FALSE(s.direct);
  EXPECT_EQ(s.align_bytes, 1u);
  ASSERT_EQ(s.fallbacks.size(), 1u);
  EXPECT_EQ(s.fallbacks[0], "O_DIRECT refused at open (EINVAL (Invalid argument)) -> buffered reads");
}

TEST_F(Fallbacks, DirectRefusedAtFirstReadGivesBufferedReads) {
  if (!test::direct_works(model_.path)) GTEST_SKIP() << "no O_DIRECT on this file system";
  FaultyFileOs os;
  os.direct_read_error = -EINVAL;
  const LoaderStats s = stream(os, uring());
  EXPECT_FALSE(s.direct);
  ASSERT_EQ(s.fallbacks.size(), 1u);
  EXPECT_EQ(s.fallbacks[0],
            "O_DIRECT refused by the first read (EINVAL (Invalid argument)) -> buffered reads");
}

TEST_F(Fallbacks, RegistrationRefusedGivesPlainReads) {
  if (!test::uring_works()) GTEST_SKIP() << "io_uring is refused here";
  for (int error : {-ENOMEM, -EFAULT}) {
    FaultyFileOs os;
    os.register_error = error;
    const LoaderStats s = stream(os, uring());
    EXPECT_EQ(s.engine, EngineKind::kUring);
    EXPECT_FALSE(s.registered_buffers);
    ASSERT_EQ(s.fallbacks.size(), 1u);
    EXPECT_EQ(s.fallbacks[0], "io_uring buffer registration refused (" + errno_name(error) +
                                  ") -> plain reads");
  }
}

TEST_F(Fallbacks, RegisteredSlotsSplitIntoIovecs) {
  if (!test::uring_works()) GTEST_SKIP() << "io_uring is refused here";
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
  if (!test::uring_works()) return;
  ::setenv("ORK_IO_NO_REGISTER", "1", 1);
  s = stream(real_file_os(), uring(/*use_env=*/true));
  ::unsetenv("ORK_IO_NO_REGISTER");
  EXPECT_EQ(s.engine, EngineKind::kUring);
  EXPECT_FALSE(s.registered_buffers);
  ASSERT_EQ(s.fallbacks.size(), 1u);
  EXPECT_EQ(s.fallbacks[0], "buffer registration disabled by ORK_IO_NO_REGISTER -> plain reads");
}

TEST_F(Fallbacks, AllThreeAtOnce) {
  FaultyFileOs os;
  os.uring_init_error = -EPERM;
  os.direct_open_error = -EINVAL;
  os.register_error = -ENOMEM;  // never reached: no ring
  const LoaderStats s = stream(os, uring());
  EXPECT_EQ(s.engine, EngineKind::kPread);
  EXPECT_FALSE(s.direct);
  EXPECT_EQ(s.fallbacks.size(), 2u);
}

TEST_F(Fallbacks, UringShortReadsAndEintrAreResubmitted) {
  if (!test::uring_works()) GTEST_SKIP() << "io_uring is refused here";
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
