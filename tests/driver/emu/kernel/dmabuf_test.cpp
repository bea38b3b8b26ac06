// The fake kernel's dma-buf ioctls (driver/emu/kernel/dmabuf.cpp) spoken to raw: PRIME
// handle-to-fd and DMA_BUF_IOCTL_SYNC refuse what the DRM core and dma-buf refuse, with the
// kernel's errnos; nothing leaks. Sharing through the Kmd: tests/driver/kmd/kmd_dmabuf_test.cpp.
#include <fcntl.h>
#include <unistd.h>

#include "driver_fixture.h"
#include "uapi/dma_buf.h"

namespace ork::testing {
namespace {

// The raw ioctls' own checks, as the DRM core and dma-buf make them.
TEST(DmabufIoctls, RefusalsMatchTheKernel) {
  emu::FakeKernel k;
  const int fd = k.open("/dev/accel/accel0", O_RDWR);
  ASSERT_GE(fd, 0);
  drm_prime_handle bad{.handle = 99, .flags = DRM_CLOEXEC, .fd = -1};
  EXPECT_EQ(driver::ioctl_retry(k, fd, DRM_IOCTL_PRIME_HANDLE_TO_FD, &bad), -ENOENT);
  drm_rocket_create_bo create{};
  create.size = 4096;
  ASSERT_EQ(driver::ioctl_retry(k, fd, DRM_IOCTL_ROCKET_CREATE_BO, &create), 0);
  drm_prime_handle flags{.handle = create.handle, .flags = 0x1, .fd = -1};  // not CLOEXEC / RDWR
  EXPECT_EQ(driver::ioctl_retry(k, fd, DRM_IOCTL_PRIME_HANDLE_TO_FD, &flags), -EINVAL);
  drm_prime_handle ok{.handle = create.handle, .flags = DRM_CLOEXEC | DRM_RDWR, .fd = -1};
  ASSERT_EQ(driver::ioctl_retry(k, fd, DRM_IOCTL_PRIME_HANDLE_TO_FD, &ok), 0);
  ork_dma_buf_sync none{.flags = ORK_DMA_BUF_SYNC_START};  // neither READ nor WRITE
  EXPECT_EQ(driver::ioctl_retry(k, ok.fd, ORK_DMA_BUF_IOCTL_SYNC, &none), -EINVAL);
  ork_dma_buf_sync junk{.flags = 0x100 | ORK_DMA_BUF_SYNC_READ};
  EXPECT_EQ(driver::ioctl_retry(k, ok.fd, ORK_DMA_BUF_IOCTL_SYNC, &junk), -EINVAL);
  ork_dma_buf_sync fine{.flags = ORK_DMA_BUF_SYNC_END | ORK_DMA_BUF_SYNC_RW};
  EXPECT_EQ(driver::ioctl_retry(k, ok.fd, ORK_DMA_BUF_IOCTL_SYNC, &fine), 0);
  EXPECT_EQ(driver::ioctl_retry(k, ok.fd, DRM_IOCTL_VERSION, &fine), -ENOTTY);  // not a DRM fd
  EXPECT_TRUE(k.owns_fd(ok.fd));
  EXPECT_EQ(k.close(ok.fd), 0);
  drm_gem_close close{.handle = create.handle, .pad = 0};
  EXPECT_EQ(driver::ioctl_retry(k, fd, DRM_IOCTL_GEM_CLOSE, &close), 0);
  EXPECT_EQ(k.close(fd), 0);
  EXPECT_EQ(k.live_bo_count(), 0u);
}

}  // namespace
}  // namespace ork::testing
