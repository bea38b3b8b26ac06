// The fake kernel's address windows, through the raw uAPIs: rknpu's IOMMU domains (a BO is
// created in MEM_CREATE's domain, a job runs in SUBMIT's, a buffer of another domain is not
// mapped for it) and rocket's window per open file, each window holding at most its bytes.
// The window is shrunk to 64 KiB (FakeKernelConfig::window_bytes) so that filling it is cheap;
// the allocator and the refusals are the ones of the 4 GiB window.
#include <fcntl.h>

#include <cstdlib>

#include "driver_fixture.h"

namespace ork::testing {
namespace {

using driver::ioctl_retry;

constexpr uint32_t kWindowsData = RKNPU_MEM_CACHEABLE | RKNPU_MEM_IOMMU;
constexpr uint32_t kWindowsTask = kWindowsData | RKNPU_MEM_KERNEL_MAPPING;
constexpr uint64_t kWindow = 64 * 1024;  // pages 1..15 usable: page 0 is never handed out

emu::FakeKernelConfig small_window(Recorder& rec) {
  emu::FakeKernelConfig cfg = recorded(rec);
  cfg.window_bytes = kWindow;
  return cfg;
}

int mem_create(emu::FakeKernel& k, int fd, uint64_t bytes, int32_t domain, rknpu_mem_create* out = nullptr) {
  rknpu_mem_create c{.handle = 0, .flags = kWindowsData, .size = bytes, .obj_addr = 0, .dma_addr = 0, .sram_size = 0,
                     .iommu_domain_id = domain, .reserved = 0};
  int rc = ioctl_retry(k, fd, DRM_IOCTL_RKNPU_MEM_CREATE, &c);
  if (out) *out = c;
  return rc;
}

TEST(RknpuDomains, EachDomainHoldsItsOwnWindowAndNoMore) {
  Recorder rec;
  emu::FakeKernel k(small_window(rec));
  int fd = k.open("/dev/dri/card1", O_RDWR);
  EXPECT_EQ(mem_create(k, fd, 32 * 1024, 0), 0);
  EXPECT_EQ(mem_create(k, fd, 32 * 1024, 0), -ENOMEM);  // past domain 0's window (60 KiB left 28)
  rknpu_mem_create in1{};
  EXPECT_EQ(mem_create(k, fd, 32 * 1024, 1, &in1), 0);   // domain 1 has a window of its own
  EXPECT_EQ(mem_create(k, fd, 32 * 1024, 1), -ENOMEM);
  EXPECT_EQ(in1.dma_addr + in1.size, kWindow);          // top-down, like domain 0's first BO
  EXPECT_EQ(mem_create(k, fd, 4096, 15), 0);            // the last of the 16 domains
  EXPECT_EQ(mem_create(k, fd, 4096, 16), -EINVAL);      // RKNPU_MAX_IOMMU_DOMAIN_NUM
  EXPECT_EQ(mem_create(k, fd, 4096, -1), -EINVAL);
  EXPECT_EQ(k.window_usage(fd, 1)->used_bytes, 32u * 1024);
  EXPECT_EQ(k.window_usage(fd, 0)->largest_free, kWindow - 4096 - 32 * 1024);
  EXPECT_FALSE(k.window_usage(fd, 7).has_value());  // never named: not made
  k.close(fd);
}

TEST(RknpuDomains, AJobSeesOnlyTheBuffersOfItsDomain) {
  Recorder rec;
  emu::FakeKernel k(small_window(rec));
  int fd = k.open("/dev/dri/card1", O_RDWR);
  RawRknpuBo tasks = raw_rknpu_bo(k, fd, 4096, kWindowsTask);  // domain 0, the top page
  rknpu_mem_create pad{}, regcmd{};
  ASSERT_EQ(mem_create(k, fd, 8192, 1, &pad), 0);       // domain 1: below the pad, an IOVA
  ASSERT_EQ(mem_create(k, fd, 4096, 1, &regcmd), 0);    // that domain 0 does not map
  *reinterpret_cast<rknpu_task*>(tasks.map) = rknpu_task{0, 0, 0xd, 0x300, 0x1ffff, 0, 60, 0, regcmd.dma_addr};
  rknpu_submit s{};
  s.flags = RKNPU_JOB_PC;
  s.timeout = 100;
  s.task_obj_addr = tasks.create.obj_addr;
  s.core_mask = 1;
  s.task_number = 1;
  s.subcore_task[0] = {0, 1};
  s.iommu_domain_id = 0;
  EXPECT_EQ(k.stats().domain_switches, 1u);  // MEM_CREATE in domain 1 moved the NPU there
  EXPECT_EQ(ioctl_retry(k, fd, DRM_IOCTL_RKNPU_SUBMIT, &s), -EIO);  // domain 0: the regcmd is unmapped
  s.iommu_domain_id = 1;
  EXPECT_EQ(ioctl_retry(k, fd, DRM_IOCTL_RKNPU_SUBMIT, &s), 0);  // its own domain: it runs
  rknpu_action get{.flags = RKNPU_GET_IOMMU_DOMAIN_ID, .value = 9};
  EXPECT_EQ(ioctl_retry(k, fd, DRM_IOCTL_RKNPU_ACTION, &get), 0);
  EXPECT_EQ(get.value, 1u);  // the submit left the NPU in domain 1
  EXPECT_EQ(k.stats().domain_switches, 3u);  // 1 -> 0 -> 1
  s.iommu_domain_id = 16;
  EXPECT_EQ(ioctl_retry(k, fd, DRM_IOCTL_RKNPU_SUBMIT, &s), -EINVAL);
  rknpu_action set{.flags = RKNPU_SET_IOMMU_DOMAIN_ID, .value = 0};
  EXPECT_EQ(ioctl_retry(k, fd, DRM_IOCTL_RKNPU_ACTION, &set), 0);
  EXPECT_EQ(k.stats().domain_switches, 4u);
  k.close(fd);
}

TEST(RocketWindows, EachOpenFileHoldsItsOwnWindowAndNoMore) {
  Recorder rec;
  emu::FakeKernel k(small_window(rec));
  int a = k.open("/dev/accel/accel0", O_RDWR), b = k.open("/dev/accel/accel0", O_RDWR);
  drm_rocket_create_bo bo{.size = 32 * 1024};
  EXPECT_EQ(ioctl_retry(k, a, DRM_IOCTL_ROCKET_CREATE_BO, &bo), 0);
  bo = {.size = 32 * 1024};
  EXPECT_EQ(ioctl_retry(k, a, DRM_IOCTL_ROCKET_CREATE_BO, &bo), -ENOMEM);  // past file a's window
  bo = {.size = 32 * 1024};
  EXPECT_EQ(ioctl_retry(k, b, DRM_IOCTL_ROCKET_CREATE_BO, &bo), 0);  // file b: its own window
  EXPECT_EQ(bo.dma_address, 4096u);  // bottom-up from page 1, as file a's first
  EXPECT_EQ(k.window_usage(b)->window_bytes, kWindow - 4096);
  EXPECT_FALSE(k.window_usage(b, 1).has_value());  // a rocket file has one domain
  k.close(a);
  k.close(b);
}

TEST(EmuWindowEnv, ParsesSizesAndRefusesTheRest) {
  ::setenv("ORK_EMU_WINDOW", "64M", 1);
  EXPECT_EQ(*emu::window_bytes_from_env(), uint64_t{64} << 20);
  ::setenv("ORK_EMU_WINDOW", "4G", 1);
  EXPECT_EQ(*emu::window_bytes_from_env(), uint64_t{1} << 32);
  for (const char* bad : {"5G", "512K", "12Q", "-1M", "M"}) {
    ::setenv("ORK_EMU_WINDOW", bad, 1);
    auto r = emu::window_bytes_from_env();
    ASSERT_FALSE(r) << bad;
    EXPECT_NE(r.error().message.find("ORK_EMU_WINDOW"), std::string::npos);
  }
  ::unsetenv("ORK_EMU_WINDOW");
  EXPECT_EQ(*emu::window_bytes_from_env(), uint64_t{1} << 32);
}

}  // namespace
}  // namespace ork::testing
