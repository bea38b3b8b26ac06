// The fake kernel's rocket side, spoken to through the raw uAPI.
#include <fcntl.h>

#include <cstring>
#include <ctime>

#include "driver_fixture.h"

namespace ork::testing {
namespace {

using driver::ioctl_retry;

int64_t now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec;
}

// A job of one task that writes one output BO (no input BOs).
drm_rocket_job rocket_one_task_job(const drm_rocket_task& task, const uint32_t (&outs)[1]) {
  return drm_rocket_job{reinterpret_cast<uintptr_t>(&task), 0, reinterpret_cast<uintptr_t>(outs), 1,
                        sizeof(drm_rocket_task), 0, 1};
}

class FakeRocket : public ::testing::Test {
 protected:
  FakeRocket() : kernel(recorded(rec)) { fd = kernel.open("/dev/accel/accel0", O_RDWR); }
  ~FakeRocket() override { kernel.close(fd); }

  drm_rocket_create_bo create(uint32_t size, int on_fd = -1) {
    drm_rocket_create_bo bo{.size = size};
    EXPECT_EQ(ioctl_retry(kernel, on_fd < 0 ? fd : on_fd, DRM_IOCTL_ROCKET_CREATE_BO, &bo), 0);
    return bo;
  }
  int prep(uint32_t handle) {
    drm_rocket_prep_bo p{.handle = handle, .reserved = 0, .timeout_ns = now_ns() + 1000000000};
    return ioctl_retry(kernel, fd, DRM_IOCTL_ROCKET_PREP_BO, &p);
  }

  Recorder rec;
  emu::FakeKernel kernel;
  int fd = -1;
};

TEST_F(FakeRocket, CreateBoPerFileDomainsBottomUp) {
  drm_rocket_create_bo a = create(100);
  drm_rocket_create_bo b = create(5000);
  EXPECT_EQ(a.dma_address, 0x1000u);  // page 0 stays unused
  EXPECT_EQ(b.dma_address, 0x2000u);
  EXPECT_NE(a.handle, b.handle);
  int fd2 = kernel.open("/dev/accel/accel0", O_RDWR);
  drm_rocket_create_bo c = create(4096, fd2);  // its own IOMMU domain (rocket_gem.c)
  EXPECT_EQ(c.dma_address, 0x1000u);
  int err = 0;
  void* p = kernel.mmap(nullptr, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, fd2,
                        static_cast<off_t>(b.offset), &err);
  EXPECT_EQ(p, nullptr);  // b belongs to the other file
  EXPECT_EQ(err, -EACCES);
  kernel.close(fd2);
}

TEST_F(FakeRocket, MmapGemCloseAndLiveCount) {
  drm_rocket_create_bo bo = create(4096);
  int err = 0;
  void* p = kernel.mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
                        static_cast<off_t>(bo.offset), &err);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(static_cast<uint8_t*>(p)[4095], 0);
  EXPECT_EQ(kernel.mmap(nullptr, 8192, PROT_READ, MAP_SHARED, fd, static_cast<off_t>(bo.offset), &err),
            nullptr);
  EXPECT_EQ(err, -EINVAL);  // past the BO's size
  drm_gem_close c{.handle = bo.handle};
  EXPECT_EQ(ioctl_retry(kernel, fd, DRM_IOCTL_GEM_CLOSE, &c), 0);
  EXPECT_EQ(ioctl_retry(kernel, fd, DRM_IOCTL_GEM_CLOSE, &c), -EINVAL);
  EXPECT_EQ(kernel.live_bo_count(), 1u);
  EXPECT_EQ(kernel.munmap(p, 4096), 0);
  EXPECT_EQ(kernel.live_bo_count(), 0u);
}

TEST_F(FakeRocket, VersionSaysRocket) {
  char name[16] = {};
  struct drm_version v {};
  v.name = name;
  v.name_len = sizeof(name) - 1;
  ASSERT_EQ(ioctl_retry(kernel, fd, DRM_IOCTL_VERSION, &v), 0);
  EXPECT_STREQ(name, "rocket");
  EXPECT_EQ(v.version_major, 1);
  // The DRM core dispatches by nr alone: the vendor's ACTION (nr 0x40) on the accel node is
  // rocket's CREATE_BO with a zero-extended 8-byte struct: a 1-byte BO (size = action 1)
  // whose handle lands in `value`. That is why the backends check the driver name first.
  rknpu_action a{.flags = RKNPU_GET_DRV_VERSION};
  EXPECT_EQ(ioctl_retry(kernel, fd, DRM_IOCTL_RKNPU_ACTION, &a), 0);
  EXPECT_EQ(a.value, 1u);
  EXPECT_EQ(kernel.live_bo_count(), 1u);
}

// Jobs padded to 48 bytes and tasks to 16: the kernel must step by the struct sizes given.
struct PaddedJob {
  drm_rocket_job job;
  uint64_t extension;
};
struct PaddedTask {
  drm_rocket_task task;
  uint64_t extension;
};

TEST_F(FakeRocket, SubmitHonoursStructSizesAndRunsOneTaskPerKick) {
  drm_rocket_create_bo regcmd = create(8192);
  drm_rocket_create_bo out = create(4096);
  uint32_t base = static_cast<uint32_t>(regcmd.dma_address);
  PaddedTask tasks[3] = {{{base, 20}, ~0ull}, {{base + 256, 22}, ~0ull}, {{base + 512, 24}, ~0ull}};
  uint32_t outs[] = {out.handle};
  PaddedJob jobs[2] = {};
  jobs[0].job = {reinterpret_cast<uintptr_t>(&tasks[0]),
                 0,
                 reinterpret_cast<uintptr_t>(outs),
                 2,
                 sizeof(PaddedTask),
                 0,
                 1};
  jobs[1].job = {reinterpret_cast<uintptr_t>(&tasks[2]),
                 0,
                 reinterpret_cast<uintptr_t>(outs),
                 1,
                 sizeof(PaddedTask),
                 0,
                 1};
  jobs[0].extension = jobs[1].extension = ~0ull;
  drm_rocket_submit s{reinterpret_cast<uintptr_t>(jobs), 2, sizeof(PaddedJob), 0};
  ASSERT_EQ(ioctl_retry(kernel, fd, DRM_IOCTL_ROCKET_SUBMIT, &s), 0);
  // Job 0 on core 0 (two kicks of one task), job 1 on the least-loaded core: 1.
  EXPECT_EQ(rec.calls, (std::vector<ChainCall>{
                           {0, base, 20, 1}, {0, base + 256, 22, 1}, {1, base + 512, 24, 1}}));
  EXPECT_EQ(kernel.stats().rocket_jobs, (std::array<uint64_t, 3>{1, 1, 0}));
  EXPECT_EQ(prep(out.handle), 0);
  drm_rocket_fini_bo f{.handle = out.handle};
  EXPECT_EQ(ioctl_retry(kernel, fd, DRM_IOCTL_ROCKET_FINI_BO, &f), 0);
  f.reserved = 1;
  EXPECT_EQ(ioctl_retry(kernel, fd, DRM_IOCTL_ROCKET_FINI_BO, &f), -EINVAL);
}

TEST_F(FakeRocket, BadJobsAreDroppedWhileTheIoctlReturnsZero) {
  drm_rocket_create_bo regcmd = create(4096);
  drm_rocket_task good{static_cast<uint32_t>(regcmd.dma_address), 20};
  drm_rocket_task empty{static_cast<uint32_t>(regcmd.dma_address), 0};
  uint32_t missing[] = {777};
  drm_rocket_job jobs[4] = {
      {reinterpret_cast<uintptr_t>(&good), 0, 0, 0, sizeof(drm_rocket_task), 0, 0},  // task_count 0
      {reinterpret_cast<uintptr_t>(&empty), 0, 0, 1, sizeof(drm_rocket_task), 0,
       0},  // regcmd_count 0
      {reinterpret_cast<uintptr_t>(&good), reinterpret_cast<uintptr_t>(missing), 0, 1,
       sizeof(drm_rocket_task), 1, 0},                                               // unknown BO
      {reinterpret_cast<uintptr_t>(&good), 0, 0, 1, sizeof(drm_rocket_task), 0, 0},  // fine
  };
  drm_rocket_submit s{reinterpret_cast<uintptr_t>(jobs), 4, sizeof(drm_rocket_job), 0};
  EXPECT_EQ(ioctl_retry(kernel, fd, DRM_IOCTL_ROCKET_SUBMIT, &s), 0);
  EXPECT_EQ(kernel.stats().rocket_jobs_dropped, 3u);
  EXPECT_EQ(rec.calls.size(), 1u);
  s.job_struct_size = 32;  // smaller than drm_rocket_job
  EXPECT_EQ(ioctl_retry(kernel, fd, DRM_IOCTL_ROCKET_SUBMIT, &s), -EINVAL);
  s.job_struct_size = sizeof(drm_rocket_job);
  s.reserved = 1;
  EXPECT_EQ(ioctl_retry(kernel, fd, DRM_IOCTL_ROCKET_SUBMIT, &s), -EINVAL);
}

TEST_F(FakeRocket, PrepBoReportsAFailedJobAndTheCoreIsReset) {
  drm_rocket_create_bo regcmd = create(4096);
  drm_rocket_create_bo out = create(4096);
  drm_rocket_task task{static_cast<uint32_t>(regcmd.dma_address), 20};
  uint32_t outs[] = {out.handle};
  drm_rocket_job job = rocket_one_task_job(task, outs);
  drm_rocket_submit s{reinterpret_cast<uintptr_t>(&job), 1, sizeof(drm_rocket_job), 0};
  kernel.faults().wedge_jobs = 1;
  ASSERT_EQ(ioctl_retry(kernel, fd, DRM_IOCTL_ROCKET_SUBMIT, &s), 0);
  EXPECT_EQ(prep(out.handle), -ETIMEDOUT);
  EXPECT_EQ(kernel.stats().resets, (std::array<uint64_t, 3>{1, 0, 0}));
  kernel.faults().dma_error_jobs = 1;
  ASSERT_EQ(ioctl_retry(kernel, fd, DRM_IOCTL_ROCKET_SUBMIT, &s), 0);
  EXPECT_EQ(prep(out.handle), -EIO);
  EXPECT_EQ(kernel.stats().resets, (std::array<uint64_t, 3>{1, 1, 0}));
  ASSERT_EQ(ioctl_retry(kernel, fd, DRM_IOCTL_ROCKET_SUBMIT, &s), 0);
  EXPECT_EQ(prep(out.handle), 0);  // the next job on the BO works
  drm_rocket_prep_bo p{.handle = 999, .reserved = 0, .timeout_ns = now_ns()};
  EXPECT_EQ(ioctl_retry(kernel, fd, DRM_IOCTL_ROCKET_PREP_BO, &p), -ENOENT);
}

TEST_F(FakeRocket, AFailedJobIsNotHiddenByALaterJobOnTheSameBo) {
  drm_rocket_create_bo regcmd = create(4096);
  drm_rocket_create_bo out = create(4096);
  drm_rocket_task task{static_cast<uint32_t>(regcmd.dma_address), 20};
  uint32_t outs[] = {out.handle};
  drm_rocket_job job = rocket_one_task_job(task, outs);
  drm_rocket_job jobs[3] = {job, job, job};
  drm_rocket_submit s{reinterpret_cast<uintptr_t>(jobs), 3, sizeof(drm_rocket_job), 0};
  kernel.faults().dma_error_jobs = 1;  // the first of three jobs writing `out`
  ASSERT_EQ(ioctl_retry(kernel, fd, DRM_IOCTL_ROCKET_SUBMIT, &s), 0);
  EXPECT_EQ(rec.calls.size(), 2u);
  EXPECT_EQ(prep(out.handle), -EIO);
  ASSERT_EQ(ioctl_retry(kernel, fd, DRM_IOCTL_ROCKET_SUBMIT, &s), 0);  // a clean submit
  EXPECT_EQ(prep(out.handle), 0);
}

TEST(FakeRocketTimed, PrepBoWaitsForTheModelledTimeAndTimesOut) {
  Recorder rec;
  emu::FakeKernelConfig cfg = recorded(rec);
  cfg.timing = emu::TimingMode::timed;
  emu::FakeKernel kernel(cfg);
  int fd = kernel.open("/dev/accel/accel0", O_RDWR);
  drm_rocket_create_bo regcmd{.size = 4096}, out{.size = 4096};
  ASSERT_EQ(ioctl_retry(kernel, fd, DRM_IOCTL_ROCKET_CREATE_BO, &regcmd), 0);
  ASSERT_EQ(ioctl_retry(kernel, fd, DRM_IOCTL_ROCKET_CREATE_BO, &out), 0);
  drm_rocket_task task{static_cast<uint32_t>(regcmd.dma_address), 20};
  uint32_t outs[] = {out.handle};
  drm_rocket_job job = rocket_one_task_job(task, outs);
  drm_rocket_submit s{reinterpret_cast<uintptr_t>(&job), 1, sizeof(drm_rocket_job), 0};
  kernel.faults().wedge_jobs = 1;  // ready only after the 500 ms job timeout
  ASSERT_EQ(ioctl_retry(kernel, fd, DRM_IOCTL_ROCKET_SUBMIT, &s), 0);
  drm_rocket_prep_bo p{.handle = out.handle, .reserved = 0, .timeout_ns = now_ns() + 20000000};
  EXPECT_EQ(ioctl_retry(kernel, fd, DRM_IOCTL_ROCKET_PREP_BO, &p), -ETIMEDOUT);  // 20 ms < 500 ms
  p.timeout_ns = now_ns() + 2000000000;
  EXPECT_EQ(ioctl_retry(kernel, fd, DRM_IOCTL_ROCKET_PREP_BO, &p), -ETIMEDOUT);  // the job's own
  kernel.close(fd);
}

}  // namespace
}  // namespace ork::testing
