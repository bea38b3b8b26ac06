// The fake kernel's rknpu side, spoken to through the raw uAPI.
#include <fcntl.h>

#include <algorithm>
#include <cstring>
#include <random>

#include "driver_fixture.h"

namespace ork::testing {
namespace {

using driver::ioctl_retry;

constexpr uint32_t kData = RKNPU_MEM_CACHEABLE | RKNPU_MEM_IOMMU;
constexpr uint32_t kTask = kData | RKNPU_MEM_KERNEL_MAPPING;

// A one-task PC job on core 0 for tests with a kernel of their own: the task BO's first task
// points at `regcmd_iova`.
rknpu_submit rknpu_one_task_job(const RawRknpuBo& tasks, uint64_t regcmd_iova) {
  *reinterpret_cast<rknpu_task*>(tasks.map) = rknpu_task{0, 0, 0xd, 0x300, 0x1ffff, 0, 60, 0, regcmd_iova};
  rknpu_submit s{};
  s.flags = RKNPU_JOB_PC;
  s.timeout = 100;
  s.task_obj_addr = tasks.create.obj_addr;
  s.core_mask = 1;
  s.task_number = 1;
  s.subcore_task[0] = {0, 1};
  return s;
}

class FakeRknpu : public ::testing::Test {
 protected:
  FakeRknpu() : kernel(recorded(rec)) { fd = kernel.open("/dev/dri/card1", O_RDWR); }
  ~FakeRknpu() override { kernel.close(fd); }

  uint32_t action(uint32_t what, int* rc = nullptr) {
    rknpu_action a{.flags = what, .value = 0};
    int r = ioctl_retry(kernel, fd, DRM_IOCTL_RKNPU_ACTION, &a);
    if (rc) *rc = r;
    return a.value;
  }
  // A task BO holding `n` tasks, each pointing at a 64-entry regcmd in one regcmd BO.
  void make_tasks(uint32_t n) {
    regcmd = raw_rknpu_bo(kernel, fd, uint64_t{n} * 64 * 8, kData);
    tasks = raw_rknpu_bo(kernel, fd, uint64_t{n} * sizeof(rknpu_task), kTask);
    auto* t = reinterpret_cast<rknpu_task*>(tasks.map);
    for (uint32_t i = 0; i < n; ++i) {
      t[i] = rknpu_task{0, i, 0xd, 0x300, 0x1ffff, 0, 60, 0, regcmd.create.dma_addr + i * 512};
    }
  }
  rknpu_submit submit_args(uint32_t core_mask) {
    rknpu_submit s{};
    s.flags = RKNPU_JOB_PC | RKNPU_JOB_PINGPONG;
    s.timeout = 6000;
    s.task_obj_addr = tasks.create.obj_addr;
    s.core_mask = core_mask;
    s.fence_fd = -1;
    return s;
  }
  rknpu_task* task_array() { return reinterpret_cast<rknpu_task*>(tasks.map); }

  Recorder rec;
  emu::FakeKernel kernel;
  int fd = -1;
  RawRknpuBo regcmd, tasks;
};

TEST_F(FakeRknpu, UnknownPathsAreEnoent) {
  EXPECT_EQ(kernel.open("/dev/dri/card0", O_RDWR), -ENOENT);
  EXPECT_EQ(kernel.open("/dev/rknpu", O_RDWR), -ENOENT);
}

TEST_F(FakeRknpu, DrmVersionNamesTheDriver) {
  char name[16] = {};
  struct drm_version v {};
  v.name = name;
  v.name_len = sizeof(name);
  ASSERT_EQ(ioctl_retry(kernel, fd, DRM_IOCTL_VERSION, &v), 0);
  EXPECT_STREQ(name, "rknpu");
  EXPECT_EQ(v.name_len, 5u);
  EXPECT_EQ(v.version_major, 0);
  EXPECT_EQ(v.version_minor, 9);
  EXPECT_EQ(v.version_patchlevel, 8);
}

TEST_F(FakeRknpu, Actions) {
  EXPECT_EQ(action(RKNPU_GET_DRV_VERSION), 908u);
  EXPECT_EQ(action(RKNPU_GET_HW_VERSION), 0x46495245u);
  EXPECT_EQ(action(RKNPU_GET_IOMMU_EN), 1u);
  int rc = 0;
  action(RKNPU_POWER_ON, &rc);
  EXPECT_EQ(rc, 0);
  action(RKNPU_ACT_RESET, &rc);
  EXPECT_EQ(rc, 0);
  EXPECT_EQ(kernel.stats().resets, (std::array<uint64_t, 3>{1, 1, 1}));
  action(99, &rc);
  EXPECT_EQ(rc, -EINVAL);
  action(RKNPU_GET_BW_PRIORITY, &rc);  // no bandwidth-priority block on RK3588
  EXPECT_EQ(rc, -EINVAL);
}

TEST_F(FakeRknpu, MemCreateRoundsToPagesAndHandsOutIovasTopDown) {
  RawRknpuBo a = raw_rknpu_bo(kernel, fd, 100, kData);
  EXPECT_EQ(a.create.size, 4096u);
  EXPECT_EQ(a.create.dma_addr, 0xffffe000u);  // ORK's trace: the first IOVA
  RawRknpuBo b = raw_rknpu_bo(kernel, fd, 8192, kData);
  EXPECT_EQ(b.create.dma_addr, 0xffffe000u - 8192);
  EXPECT_NE(a.create.obj_addr, b.create.obj_addr);
  for (size_t i = 0; i < 4096; ++i) ASSERT_EQ(a.map[i], 0) << "BO not zeroed at " << i;
  EXPECT_EQ(kernel.live_bo_count(), 2u);
}

TEST_F(FakeRknpu, LegacyFortyByteMemCreateWorks) {
  rknpu_mem_create_v0 old{};
  old.size = 5000;
  old.flags = kData;
  ASSERT_EQ(ioctl_retry(kernel, fd, DRM_IOCTL_RKNPU_MEM_CREATE_V0, &old), 0);
  EXPECT_EQ(old.size, 8192u);
  EXPECT_EQ(old.dma_addr, 0xffffe000u - 4096);
  EXPECT_NE(old.handle, 0u);
}

TEST_F(FakeRknpu, IovasStayBelow4GiBAndNeverOverlap) {
  std::mt19937 rng(7);
  std::vector<RawRknpuBo> bos;
  for (int i = 0; i < 60; ++i) {
    bos.push_back(raw_rknpu_bo(kernel, fd, 1 + rng() % (3 << 20), kData));
    if (i % 3 == 2) {  // free some so that gaps get reused
      rknpu_mem_destroy d{.handle = bos[i - 1].create.handle,
                          .obj_addr = bos[i - 1].create.obj_addr};
      ASSERT_EQ(kernel.munmap(bos[i - 1].map, bos[i - 1].create.size), 0);
      ASSERT_EQ(ioctl_retry(kernel, fd, DRM_IOCTL_RKNPU_MEM_DESTROY, &d), 0);
      bos.erase(bos.begin() + i - 1);
      bos.push_back(raw_rknpu_bo(kernel, fd, 4096, kData));
    }
  }
  std::vector<std::pair<uint64_t, uint64_t>> ranges;
  for (const auto& bo : bos)
    ranges.emplace_back(bo.create.dma_addr, bo.create.dma_addr + bo.create.size);
  std::sort(ranges.begin(), ranges.end());
  for (size_t i = 0; i < ranges.size(); ++i) {
    EXPECT_LE(ranges[i].second, 1ull << 32);
    EXPECT_EQ(ranges[i].first % 4096, 0u);
    if (i) {
      EXPECT_LE(ranges[i - 1].second, ranges[i].first) << "overlap at " << i;
    }
  }
}

TEST_F(FakeRknpu, MemSyncChecksCookieAndCacheability) {
  RawRknpuBo cached = raw_rknpu_bo(kernel, fd, 4096, kData);
  RawRknpuBo plain = raw_rknpu_bo(kernel, fd, 4096, RKNPU_MEM_IOMMU);
  rknpu_mem_sync s{
      .flags = RKNPU_MEM_SYNC_TO_DEVICE, .obj_addr = cached.create.obj_addr, .size = 4096};
  EXPECT_EQ(ioctl_retry(kernel, fd, DRM_IOCTL_RKNPU_MEM_SYNC, &s), 0);
  s.obj_addr = plain.create.obj_addr;
  EXPECT_EQ(ioctl_retry(kernel, fd, DRM_IOCTL_RKNPU_MEM_SYNC, &s), -EINVAL);  // not CACHEABLE
  s.obj_addr = cached.create.obj_addr + 8;  // a wrong "kernel pointer": the real kernel oopses
  EXPECT_EQ(ioctl_retry(kernel, fd, DRM_IOCTL_RKNPU_MEM_SYNC, &s), -EFAULT);
  s.obj_addr = cached.create.obj_addr;
  s.size = 8192;
  EXPECT_EQ(ioctl_retry(kernel, fd, DRM_IOCTL_RKNPU_MEM_SYNC, &s), -EINVAL);  // past the BO
  EXPECT_EQ(kernel.stats().syncs, 1u);
}

TEST_F(FakeRknpu, DestroyFreesOnlyAfterUnmap) {
  RawRknpuBo bo = raw_rknpu_bo(kernel, fd, 4096, kData);
  bo.map[10] = 0x5a;
  rknpu_mem_destroy d{.handle = bo.create.handle, .obj_addr = bo.create.obj_addr + 0x400};
  EXPECT_EQ(ioctl_retry(kernel, fd, DRM_IOCTL_RKNPU_MEM_DESTROY, &d), -EFAULT);
  d.obj_addr = bo.create.obj_addr;
  EXPECT_EQ(ioctl_retry(kernel, fd, DRM_IOCTL_RKNPU_MEM_DESTROY, &d), 0);
  EXPECT_EQ(kernel.live_bo_count(), 1u);  // still mapped
  EXPECT_EQ(bo.map[10], 0x5a);
  EXPECT_EQ(kernel.munmap(bo.map, 4096), 0);
  EXPECT_EQ(kernel.live_bo_count(), 0u);
  EXPECT_EQ(ioctl_retry(kernel, fd, DRM_IOCTL_RKNPU_MEM_DESTROY, &d), -EINVAL);
  EXPECT_EQ(kernel.munmap(bo.map, 4096), -EINVAL);
}

TEST_F(FakeRknpu, SubmitValidation) {
  make_tasks(4);
  rknpu_submit s = submit_args(1);
  s.subcore_task[0] = {0, 4};
  s.task_number = 4;
  s.flags = RKNPU_JOB_PINGPONG;  // no PC flag
  EXPECT_EQ(ioctl_retry(kernel, fd, DRM_IOCTL_RKNPU_SUBMIT, &s), -EINVAL);
  s.flags = RKNPU_JOB_PC;
  for (uint32_t bad_mask : {5u, 6u, 8u, 0xffu}) {
    s.core_mask = bad_mask;
    EXPECT_EQ(ioctl_retry(kernel, fd, DRM_IOCTL_RKNPU_SUBMIT, &s), -EINVAL) << bad_mask;
  }
  s.core_mask = 1;
  s.subcore_task[0] = {100, 3};  // past the task BO's page (the real kernel would read on)
  EXPECT_EQ(ioctl_retry(kernel, fd, DRM_IOCTL_RKNPU_SUBMIT, &s), -EINVAL);
  s.subcore_task[0] = {0, 4};
  s.task_obj_addr = regcmd.create.obj_addr;  // no KERNEL_MAPPING
  EXPECT_EQ(ioctl_retry(kernel, fd, DRM_IOCTL_RKNPU_SUBMIT, &s), -EINVAL);
  s.task_obj_addr = 0xdeadbeef;
  EXPECT_EQ(ioctl_retry(kernel, fd, DRM_IOCTL_RKNPU_SUBMIT, &s), -EFAULT);
  EXPECT_TRUE(rec.calls.empty());
  EXPECT_EQ(kernel.stats().submits, 0u);
}

TEST_F(FakeRknpu, SingleCoreReadsItsOwnSubcoreEntry) {
  make_tasks(6);
  rknpu_submit s = submit_args(4);  // core 2 alone: subcore_task[2]
  s.task_number = 2;
  s.subcore_task[2] = {3, 2};
  ASSERT_EQ(ioctl_retry(kernel, fd, DRM_IOCTL_RKNPU_SUBMIT, &s), 0);
  uint64_t base = regcmd.create.dma_addr;
  EXPECT_EQ(rec.calls, (std::vector<ChainCall>{{2, base + 3 * 512, 64, 2}}));
  EXPECT_EQ(s.task_counter, 2u);
  EXPECT_EQ(s.hw_elapse_time, 2000);
  EXPECT_EQ(task_array()[4].int_status, 0x300u);  // the range's last task
  EXPECT_EQ(task_array()[3].int_status, 0u);
}

TEST_F(FakeRknpu, TwoAndThreeCoreSubcoreMapping) {
  make_tasks(6);
  uint64_t base = regcmd.create.dma_addr;
  rknpu_submit s = submit_args(3);  // cores 0+1: entries [0], [1]
  s.task_number = 3;
  s.subcore_task[0] = {0, 1};
  s.subcore_task[1] = {1, 2};
  ASSERT_EQ(ioctl_retry(kernel, fd, DRM_IOCTL_RKNPU_SUBMIT, &s), 0);
  EXPECT_EQ(rec.calls, (std::vector<ChainCall>{{0, base, 64, 1}, {1, base + 512, 64, 2}}));
  rec.calls.clear();
  s = submit_args(7);  // all three: entries [2], [3], [4]
  s.task_number = 6;
  s.subcore_task[0] = {5, 1};  // ignored with 3 cores
  s.subcore_task[2] = {0, 2};
  s.subcore_task[3] = {2, 1};
  s.subcore_task[4] = {3, 3};
  ASSERT_EQ(ioctl_retry(kernel, fd, DRM_IOCTL_RKNPU_SUBMIT, &s), 0);
  EXPECT_EQ(rec.calls,
            (std::vector<ChainCall>{
                {0, base, 64, 2}, {1, base + 2 * 512, 64, 1}, {2, base + 3 * 512, 64, 3}}));
  EXPECT_EQ(s.task_counter, 6u);
  EXPECT_EQ(s.hw_elapse_time, 3000);  // the slowest core
}

TEST_F(FakeRknpu, LongRangesRunIn4095TaskKicks) {
  make_tasks(5000);
  rknpu_submit s = submit_args(1);
  s.task_number = 5000;
  s.subcore_task[0] = {0, 5000};
  ASSERT_EQ(ioctl_retry(kernel, fd, DRM_IOCTL_RKNPU_SUBMIT, &s), 0);
  uint64_t base = regcmd.create.dma_addr;
  EXPECT_EQ(rec.calls,
            (std::vector<ChainCall>{{0, base, 64, 4095}, {0, base + 4095 * 512, 64, 905}}));
  EXPECT_EQ(task_array()[4094].int_status, 0x300u);
  EXPECT_EQ(task_array()[4999].int_status, 0x300u);
}

TEST_F(FakeRknpu, WedgeTimesOutResetsAndTheNextSubmitWorks) {
  make_tasks(2);
  rknpu_submit s = submit_args(1);
  s.task_number = 2;
  s.subcore_task[0] = {0, 2};
  kernel.faults().wedge_jobs = 1;
  // Fast mode: the timeout is reported, not slept. A 10 min timeout against a 1 min bound
  // tells the two apart on any host, however slow (qemu-user included).
  s.timeout = 600000;
  auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(ioctl_retry(kernel, fd, DRM_IOCTL_RKNPU_SUBMIT, &s), -ETIMEDOUT);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(60));
  EXPECT_EQ(s.task_counter, 0u);
  EXPECT_EQ(kernel.stats().resets, (std::array<uint64_t, 3>{1, 1, 1}));
  s.task_counter = 0;
  EXPECT_EQ(ioctl_retry(kernel, fd, DRM_IOCTL_RKNPU_SUBMIT, &s), 0);
  EXPECT_EQ(s.task_counter, 2u);
}

TEST_F(FakeRknpu, DmaErrorIsEio) {
  make_tasks(1);
  rknpu_submit s = submit_args(2);
  s.task_number = 1;
  s.subcore_task[1] = {0, 1};
  kernel.faults().dma_error_jobs = 1;
  EXPECT_EQ(ioctl_retry(kernel, fd, DRM_IOCTL_RKNPU_SUBMIT, &s), -EIO);
  EXPECT_EQ(task_array()[0].int_status, 1u << 12);  // DMA_READ_ERROR
  // A regcmd outside every BO: the stand-in PC reports the DMA error like the real one.
  task_array()[0].regcmd_addr = 0x1000;
  EXPECT_EQ(ioctl_retry(kernel, fd, DRM_IOCTL_RKNPU_SUBMIT, &s), -EIO);
}

TEST_F(FakeRknpu, RenderNodeCanReproduceOrksZeroTaskSubmits) {
  Recorder r2;
  emu::FakeKernelConfig cfg = recorded(r2);
  cfg.render_node_submits_run = false;
  emu::FakeKernel k2(cfg);
  int rfd = k2.open("/dev/dri/renderD129", O_RDWR);
  ASSERT_GE(rfd, 0);
  RawRknpuBo rc = raw_rknpu_bo(k2, rfd, 4096, kData);
  RawRknpuBo tb = raw_rknpu_bo(k2, rfd, 4096, kTask);
  rknpu_submit s = rknpu_one_task_job(tb, rc.create.dma_addr);
  EXPECT_EQ(ioctl_retry(k2, rfd, DRM_IOCTL_RKNPU_SUBMIT, &s), -ETIMEDOUT);
  EXPECT_EQ(s.task_counter, 0u);
  EXPECT_TRUE(r2.calls.empty());
  k2.close(rfd);
}

TEST_F(FakeRknpu, InjectedErrnoStormAndRefusedCreate) {
  kernel.faults().transient_ioctls = 500;
  RawRknpuBo bo = raw_rknpu_bo(kernel, fd, 4096, kData);  // retried through
  EXPECT_NE(bo.create.handle, 0u);
  EXPECT_EQ(kernel.faults().transient_ioctls, 0);
  kernel.faults().refuse_bo_create = true;
  rknpu_mem_create c{.flags = kData, .size = 4096};
  EXPECT_EQ(ioctl_retry(kernel, fd, DRM_IOCTL_RKNPU_MEM_CREATE, &c), -ENOMEM);
  kernel.faults().refuse_bo_create = false;
  kernel.faults().fail_nr = 0x43;  // MEM_MAP
  kernel.faults().fail_errno = EPERM;
  kernel.faults().fail_times = 1;
  rknpu_mem_map m{.handle = bo.create.handle};
  EXPECT_EQ(ioctl_retry(kernel, fd, DRM_IOCTL_RKNPU_MEM_MAP, &m), -EPERM);
  EXPECT_EQ(ioctl_retry(kernel, fd, DRM_IOCTL_RKNPU_MEM_MAP, &m), 0);
}

TEST_F(FakeRknpu, ClosingTheFdCountsHandlesLeftOpen) {
  int fd2 = kernel.open("/dev/dri/card1", O_RDWR);
  rknpu_mem_create c{.flags = kData, .size = 4096};
  ASSERT_EQ(ioctl_retry(kernel, fd2, DRM_IOCTL_RKNPU_MEM_CREATE, &c), 0);
  EXPECT_EQ(kernel.live_bo_count(), 1u);
  EXPECT_EQ(kernel.close(fd2), 0);
  EXPECT_EQ(kernel.stats().handles_open_at_close, 1u);
  EXPECT_EQ(kernel.live_bo_count(), 0u);
  EXPECT_EQ(kernel.close(fd2), -EBADF);
}

}  // namespace
}  // namespace ork::testing

namespace ork::testing {
namespace {

// The cache model: a CACHEABLE BO has a CPU copy and an NPU copy that only MEM_SYNC moves
// between; a non-cacheable BO is coherent.
TEST(FakeRknpuCaches, SyncDirectionsMoveBytesBetweenCpuAndNpu) {
  uint64_t probe = 0;
  uint8_t seen = 0xff;
  emu::FakeKernelConfig cfg;
  cfg.model_caches = true;
  cfg.executor = [&](const emu::DeviceMemory& mem, int, uint64_t, uint32_t, uint32_t n) {
    EXPECT_TRUE(mem.read(probe, &seen, 1));
    uint8_t written = 0x77;
    EXPECT_TRUE(mem.write(probe + 1, &written, 1));
    emu::ChainResult r;
    r.tasks_done = n;
    return r;
  };
  emu::FakeKernel kernel(cfg);
  int fd = kernel.open("/dev/dri/card1", O_RDWR);
  RawRknpuBo regcmd = raw_rknpu_bo(kernel, fd, 4096, kData);
  RawRknpuBo tasks = raw_rknpu_bo(kernel, fd, 4096, kTask);
  RawRknpuBo cached = raw_rknpu_bo(kernel, fd, 4096, kData);
  RawRknpuBo coherent = raw_rknpu_bo(kernel, fd, 4096, RKNPU_MEM_IOMMU);
  auto submit = [&] {
    rknpu_submit s = rknpu_one_task_job(tasks, regcmd.create.dma_addr);
    EXPECT_EQ(ioctl_retry(kernel, fd, DRM_IOCTL_RKNPU_SUBMIT, &s), 0);
  };
  auto sync = [&](uint32_t dir) {
    rknpu_mem_sync m{.flags = dir, .obj_addr = cached.create.obj_addr, .offset = 0, .size = 4096};
    EXPECT_EQ(ioctl_retry(kernel, fd, DRM_IOCTL_RKNPU_MEM_SYNC, &m), 0);
  };
  probe = cached.create.dma_addr;
  cached.map[0] = 0x5a;
  submit();
  EXPECT_EQ(seen, 0);           // the CPU's write is still in its cache
  EXPECT_EQ(cached.map[1], 0);  // the NPU's write is not visible yet
  sync(RKNPU_MEM_SYNC_TO_DEVICE);
  submit();
  EXPECT_EQ(seen, 0x5a);
  sync(RKNPU_MEM_SYNC_FROM_DEVICE);
  EXPECT_EQ(cached.map[1], 0x77);
  probe = coherent.create.dma_addr;
  coherent.map[0] = 0x33;
  submit();
  EXPECT_EQ(seen, 0x33);
  EXPECT_EQ(coherent.map[1], 0x77);
  kernel.close(fd);
}

}  // namespace
}  // namespace ork::testing
