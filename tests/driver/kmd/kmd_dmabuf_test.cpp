// dma-buf sharing through PRIME on both backends over the fake kernel: a BO exported by one
// emulated device and imported by another (either kernel interface) shares its bytes both
// ways; DMA_BUF_IOCTL_SYNC brackets CPU access; bad fds, short dma-bufs and handles a file
// already holds are refused with messages that name them; nothing leaks.
// The fake kernel's raw dma-buf ioctls: tests/driver/emu/kernel/dmabuf_test.cpp.
#include <fcntl.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <tuple>

#include "driver/kmd/kmd.h"
#include "driver_fixture.h"
#include "uapi/dma_buf.h"

namespace ork::testing {
namespace {

using driver::BoUsage;
using driver::Kmd;
using driver::KmdKind;

class Dmabuf : public ::testing::TestWithParam<std::tuple<KmdKind, KmdKind>> {
 protected:
  void SetUp() override {
    exporter = open_kmd(k1, std::get<0>(GetParam()));
    importer = open_kmd(k2, std::get<1>(GetParam()));
  }
  void TearDown() override {
    exporter.reset();
    importer.reset();
    for (emu::FakeKernel* k : {&k1, &k2}) {
      EXPECT_EQ(k->stats().handles_open_at_close, 0u);
      EXPECT_EQ(k->live_bo_count(), 0u);
    }
  }
  emu::FakeKernel k1, k2;
  std::unique_ptr<Kmd> exporter, importer;
};

TEST_P(Dmabuf, ExportedBytesAreSharedBothWays) {
  auto bo = exporter->bo_create(10000, BoUsage::data);
  ASSERT_TRUE(bo.ok()) << bo.error().message;
  std::memset((*bo)->map(), 0x11, 10000);  // written before the export: must survive it
  auto fd = exporter->bo_export(**bo);
  ASSERT_TRUE(fd.ok()) << fd.error().message;
  EXPECT_GE(*fd, 0);
  EXPECT_GE((*bo)->dmabuf_fd(), 0);  // the BO keeps a dma-buf fd of its own
  EXPECT_NE((*bo)->dmabuf_fd(), *fd);
  EXPECT_EQ(fcntl(*fd, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
  auto in = importer->bo_import(*fd, 10000);
  ASSERT_TRUE(in.ok()) << in.error().message;
  EXPECT_TRUE((*in)->imported());
  EXPECT_EQ((*in)->iova(), 0u);
  EXPECT_EQ((*in)->size(), 12288u);
  ::close(*fd);  // the importer keeps its own
  EXPECT_EQ((*in)->map()[9999], 0x11);
  ASSERT_TRUE(importer->dmabuf_sync(**in, true, true).ok());
  (*in)->map()[0] = 0x22;
  ASSERT_TRUE(importer->dmabuf_sync(**in, false, true).ok());
  ASSERT_TRUE(exporter->dmabuf_sync(**bo, true, false).ok());
  EXPECT_EQ((*bo)->map()[0], 0x22);
  ASSERT_TRUE(exporter->dmabuf_sync(**bo, false, false).ok());
  (*bo)->map()[5] = 0x33;
  EXPECT_EQ((*in)->map()[5], 0x33);
  EXPECT_EQ(k1.stats().dmabuf_exports, 2u);  // the BO's own fd and the caller's
  EXPECT_EQ(k2.stats().dmabuf_imports, 1u);
  EXPECT_EQ(k2.stats().dmabuf_syncs, 2u);
  EXPECT_EQ(k1.stats().dmabuf_syncs, 2u);  // each through its own device's kernel
  // The exporter's BO goes first: the import still holds the bytes.
  bo->reset();
  EXPECT_EQ((*in)->map()[5], 0x33);
}

TEST_P(Dmabuf, ANativeBoStillRunsOnItsNpuAfterExport) {
  // Export moves the host pages into a memfd at the same address: the exporter's view (and
  // the NPU's, through the DeviceMemory) is unchanged.
  auto bo = exporter->bo_create(4096, BoUsage::data);
  ASSERT_TRUE(bo.ok());
  uint8_t* before = (*bo)->map();
  const uint64_t iova = (*bo)->iova();
  auto fd = exporter->bo_export(**bo);
  ASSERT_TRUE(fd.ok());
  EXPECT_EQ((*bo)->map(), before);
  EXPECT_EQ((*bo)->iova(), iova);
  auto fd2 = exporter->bo_export(**bo);  // every export: a new fd of the same dma-buf
  ASSERT_TRUE(fd2.ok());
  auto in = importer->bo_import(*fd2, 4096);
  ASSERT_TRUE(in.ok()) << in.error().message;
  before[100] = 7;
  EXPECT_EQ((*in)->map()[100], 7);
  ::close(*fd);
  ::close(*fd2);
}

TEST_P(Dmabuf, BadImportsAreRefusedByName) {
  auto none = importer->bo_import(-1, 4096);
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error().code, -EBADF);
  EXPECT_NE(none.error().message.find("fd -1"), std::string::npos) << none.error().message;
  const int closed = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  ::close(closed);
  auto stale = importer->bo_import(closed, 4096);
  ASSERT_FALSE(stale.ok());
  EXPECT_EQ(stale.error().code, -EBADF);
  const int plain = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  auto not_dmabuf = importer->bo_import(plain, 4096);
  ASSERT_FALSE(not_dmabuf.ok());
  EXPECT_EQ(not_dmabuf.error().code, -EINVAL);
  EXPECT_NE(not_dmabuf.error().message.find("not a dma-buf"), std::string::npos) << not_dmabuf.error().message;
  ::close(plain);

  auto bo = exporter->bo_create(4096, BoUsage::data);
  ASSERT_TRUE(bo.ok());
  auto fd = exporter->bo_export(**bo);
  ASSERT_TRUE(fd.ok());
  auto big = importer->bo_import(*fd, 4097);  // more than the dma-buf holds
  ASSERT_FALSE(big.ok());
  EXPECT_NE(big.error().message.find("smaller than the 4097 bytes"), std::string::npos) << big.error().message;
  auto zero = importer->bo_import(*fd, 0);
  ASSERT_FALSE(zero.ok());
  // Its own export, and a second import of one dma-buf: the file already holds the handle.
  auto self = exporter->bo_import(*fd, 4096);
  ASSERT_FALSE(self.ok());
  EXPECT_EQ(self.error().code, -EEXIST);
  auto first = importer->bo_import(*fd, 4096);
  ASSERT_TRUE(first.ok()) << first.error().message;
  auto again = importer->bo_import(*fd, 4096);
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error().code, -EEXIST);
  EXPECT_NE(again.error().message.find("already"), std::string::npos);
  EXPECT_EQ((*first)->map()[0], 0);  // the refusals left the first import alone
  ::close(*fd);
}

INSTANTIATE_TEST_SUITE_P(ExporterImporter, Dmabuf,
                         ::testing::Combine(::testing::Values(KmdKind::rknpu, KmdKind::rocket),
                                            ::testing::Values(KmdKind::rknpu, KmdKind::rocket)),
                         [](const auto& info) {
                           return std::string(driver::kmd_kind_name(std::get<0>(info.param))) + "_to_" +
                                  driver::kmd_kind_name(std::get<1>(info.param));
                         });

}  // namespace
}  // namespace ork::testing
