// Both backends, unchanged, over the fake kernel: BOs, sync, submit validation, failures.
#include <fmt/format.h>

#include <cstdlib>
#include <cstring>
#include <thread>

#include "driver/kmd/kmd.h"
#include "driver_fixture.h"

namespace ork::testing {
namespace {

using driver::BoUsage;
using driver::CoreJob;
using driver::Kmd;
using driver::KmdKind;
using driver::SubmitDesc;
using driver::SyncDir;
using driver::TaskRef;

class Backend : public ::testing::TestWithParam<KmdKind> {
 protected:
  void SetUp() override { kmd = open(kernel); }
  void TearDown() override {
    kmd.reset();
    // Teardown leaks nothing: every BO (the rknpu task BO too) was freed before the fd closed.
    EXPECT_EQ(kernel.stats().handles_open_at_close, 0u);
    EXPECT_EQ(kernel.live_bo_count(), 0u);
    EXPECT_EQ(kernel.open_file_count(), 0u);
  }
  std::unique_ptr<Kmd> open(emu::FakeKernel& k) { return open_kmd(k, GetParam()); }
  // `n` tasks of 20 entries each in one regcmd BO; the jobs' out BO is `out`.
  SubmitDesc desc_for(const driver::Bo& regcmd, const driver::Bo& out, std::vector<int> cores,
                      uint32_t tasks_per_core) {
    SubmitDesc d;
    for (size_t j = 0; j < cores.size(); ++j) {
      CoreJob job{cores[j], {}};
      for (uint32_t t = 0; t < tasks_per_core; ++t) {
        job.tasks.push_back(TaskRef{regcmd.iova() + 256 * (j * tasks_per_core + t), 20, ork::hw::kIntTaskDone});
      }
      d.jobs.push_back(job);
    }
    d.out_bos = {&out};
    return d;
  }

  Recorder rec;
  emu::FakeKernel kernel{recorded(rec)};
  std::unique_ptr<Kmd> kmd;
};

TEST_P(Backend, InfoFromTheKernel) {
  const driver::DeviceInfo& info = kmd->info();
  EXPECT_EQ(info.kind, GetParam());
  EXPECT_EQ(info.cores, 3);
  EXPECT_TRUE(info.emulated);
  if (GetParam() == KmdKind::rknpu) {
    EXPECT_EQ(info.driver_name, "rknpu");
    EXPECT_EQ(info.driver_version, "0.9.8");
    EXPECT_EQ(info.hw_version, 0x46495245u);
    EXPECT_EQ(info.node, "/dev/dri/card1");
  } else {
    EXPECT_EQ(info.driver_name, "rocket");
    EXPECT_EQ(info.driver_version, "1.0.0");
    EXPECT_EQ(info.hw_version, 0u);
    EXPECT_EQ(info.node, "/dev/accel/accel0");
  }
}

TEST_P(Backend, BoCreateMapSyncDestroy) {
  auto a = kmd->bo_create(1000, BoUsage::data);
  auto b = kmd->bo_create(3 << 20, BoUsage::regcmd);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ((*a)->size(), 4096u);
  EXPECT_EQ((*b)->size(), 3u << 20);
  EXPECT_LE((*a)->iova() + (*a)->size(), 1ull << 32);
  EXPECT_LE((*b)->iova() + (*b)->size(), 1ull << 32);
  bool disjoint =
      (*a)->iova() + (*a)->size() <= (*b)->iova() || (*b)->iova() + (*b)->size() <= (*a)->iova();
  EXPECT_TRUE(disjoint);
  std::memset((*a)->map(), 0x7f, 4096);
  EXPECT_TRUE(kmd->bo_sync(**a, SyncDir::to_device).ok());
  EXPECT_TRUE(kmd->bo_sync(**a, SyncDir::from_device).ok());
  EXPECT_EQ((*a)->map()[4095], 0x7f);
  EXPECT_EQ(kernel.stats().syncs, 2u);
  EXPECT_EQ(kernel.live_bo_count(), 2u);
  a->reset();
  EXPECT_EQ(kernel.live_bo_count(), 1u);
  auto zero = kmd->bo_create(0, BoUsage::data);
  ASSERT_FALSE(zero.ok());
  EXPECT_EQ(zero.error().message, "bo_create: bytes = 0");
}

TEST_P(Backend, SubmitRunsEveryCoresTasks) {
  auto regcmd = kmd->bo_create(65536, BoUsage::regcmd);
  auto out = kmd->bo_create(4096, BoUsage::data);
  auto r = kmd->submit(desc_for(**regcmd, **out, {0, 1, 2}, 4));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->tasks_completed, 12u);
  uint64_t tasks_done = 0;
  for (uint64_t n : kernel.stats().tasks_done) tasks_done += n;
  EXPECT_EQ(tasks_done, 12u);
  if (GetParam() == KmdKind::rknpu) {
    EXPECT_EQ(r->hw_elapse_ns, 4000);  // 4 tasks per core at the stand-in's 1000 ns
    ASSERT_EQ(rec.calls.size(), 3u);   // one PC kick per core, the PC follows the chain
    EXPECT_EQ(rec.calls[2], (ChainCall{2, (*regcmd)->iova() + 256 * 8, 20, 4}));
  } else {
    EXPECT_EQ(r->hw_elapse_ns, -1);
    EXPECT_EQ(rec.calls.size(), 12u);  // one kick per task
  }
}

TEST_P(Backend, SubmitValidationNamesTheProblem) {
  auto regcmd = kmd->bo_create(65536, BoUsage::regcmd);
  auto out = kmd->bo_create(4096, BoUsage::data);
  auto expect_error = [&](SubmitDesc d, const std::string& message) {
    auto r = kmd->submit(d);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code, -EINVAL);
    EXPECT_EQ(r.error().message, message);
  };
  SubmitDesc good = desc_for(**regcmd, **out, {0}, 2);
  SubmitDesc d = good;
  d.jobs.clear();
  expect_error(d, "submit: no core jobs (jobs is empty)");
  d = good;
  d.jobs[0].core = 3;
  expect_error(d, "submit: core 3 does not exist (this device uses cores 0..2)");
  d = desc_for(**regcmd, **out, {1, 1}, 1);
  expect_error(d, "submit: core 1 has two jobs (one per core)");
  d = good;
  d.jobs[0].tasks.clear();
  expect_error(d, "submit: core 0 has an empty task list");
  d = good;
  d.jobs[0].tasks[1].regcmd_iova = 1ull << 32;
  expect_error(
      d, "core 0 task 1: regcmd IOVA 0x100000000 is not below 4 GiB (NPU addresses are 32-bit)");
  d = good;
  d.jobs[0].tasks[0].regcmd_entries = 4;
  expect_error(d,
               "core 0 task 0: regcmd_entries = 4: a task needs its register writes plus the "
               "4-entry PC trailer");
  d = good;
  d.jobs[0].tasks[0].regcmd_iova += 8;
  expect_error(d, fmt::format("core 0 task 0: regcmd IOVA 0x{:x} is not 16-byte aligned",
                              (*regcmd)->iova() + 8));
  EXPECT_TRUE(rec.calls.empty());
}

TEST_P(Backend, WedgeTimesOutThenTheNextSubmitWorks) {
  auto regcmd = kmd->bo_create(65536, BoUsage::regcmd);
  auto out = kmd->bo_create(4096, BoUsage::data);
  SubmitDesc d = desc_for(**regcmd, **out, {0}, 3);
  kernel.faults().wedge_jobs = 1;
  auto r = kmd->submit(d);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, -ETIMEDOUT);
  uint64_t resets = kernel.stats().resets[0];
  EXPECT_EQ(resets, 1u);
  auto again = kmd->submit(d);
  ASSERT_TRUE(again.ok()) << again.error().message;
  EXPECT_EQ(again->tasks_completed, 3u);
}

TEST_P(Backend, DmaErrorIsEio) {
  auto regcmd = kmd->bo_create(65536, BoUsage::regcmd);
  auto out = kmd->bo_create(4096, BoUsage::data);
  kernel.faults().dma_error_jobs = 1;
  auto r = kmd->submit(desc_for(**regcmd, **out, {1}, 1));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, -EIO);
  EXPECT_NE(r.error().message.find("DMA"), std::string::npos) << r.error().message;
}

TEST_P(Backend, SurvivesAnEintrStorm) {
  kernel.faults().transient_ioctls = 300;
  kernel.faults().transient_errno = EINTR;
  auto bo = kmd->bo_create(4096, BoUsage::data);
  ASSERT_TRUE(bo.ok()) << bo.error().message;
  kernel.faults().transient_ioctls = 300;
  kernel.faults().transient_errno = EAGAIN;
  EXPECT_TRUE(kmd->bo_sync(**bo, SyncDir::to_device).ok());
}

TEST_P(Backend, RefusedBoCreateIsAClearEnomem) {
  kernel.faults().refuse_bo_create = true;
  auto bo = kmd->bo_create(4096, BoUsage::data);
  ASSERT_FALSE(bo.ok());
  EXPECT_EQ(bo.error().code, -ENOMEM);
  std::string ioctl = GetParam() == KmdKind::rknpu ? "RKNPU_MEM_CREATE" : "ROCKET_CREATE_BO";
  EXPECT_EQ(bo.error().message, ioctl + " of 4096 bytes in NPU window 0 failed: ENOMEM (Cannot allocate memory) (the "
                                "window's 4 GiB of NPU addresses, or memory, ran out)");
}

TEST_P(Backend, OrkCoresLowersTheCoreCount) {
  ::setenv("ORK_CORES", "2", 1);
  emu::FakeKernel k2;
  auto two = open(k2);
  ::setenv("ORK_CORES", "4", 1);
  auto r = GetParam() == KmdKind::rknpu ? driver::open_rknpu(k2, "/dev/dri/card1")
                                        : driver::open_rocket(k2, "/dev/accel/accel0");
  ::unsetenv("ORK_CORES");
  ASSERT_TRUE(two);
  EXPECT_EQ(two->info().cores, 2);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "ORK_CORES = '4': must be a whole number from 1 to 3");
}

TEST_P(Backend, TwoThreadsShareOneKernel) {
  // Each thread has its own fd and Kmd; the kernel's one mutex keeps BOs and stats consistent.
  auto work = [&](int core, int* failures) {
    auto mine = open(kernel);
    for (int i = 0; i < 40 && mine; ++i) {
      auto regcmd = mine->bo_create(4096, BoUsage::regcmd);
      auto out = mine->bo_create(4096, BoUsage::data);
      if (!regcmd.ok() || !out.ok()) {
        ++*failures;
        continue;
      }
      auto r = mine->submit(desc_for(**regcmd, **out, {core}, 2));
      if (!r.ok() || r->tasks_completed != 2) ++*failures;
    }
  };
  int failures[2] = {0, 0};
  std::thread t0(work, 0, &failures[0]), t1(work, 1, &failures[1]);
  t0.join();
  t1.join();
  EXPECT_EQ(failures[0] + failures[1], 0);
  uint64_t tasks_done = 0;
  for (uint64_t n : kernel.stats().tasks_done) tasks_done += n;
  EXPECT_EQ(tasks_done, 160u);
}

INSTANTIATE_TEST_SUITE_P(BothInterfaces, Backend,
                         ::testing::Values(KmdKind::rknpu, KmdKind::rocket), [](const auto& info) {
                           return std::string(driver::kmd_kind_name(info.param));
                         });

// rknpu specifics: long lists go in 4095-task SUBMITs; core sets the kernel refuses (masks
// 5 and 6) are submitted per core.
class RknpuBackend : public ::testing::Test {
 protected:
  Recorder rec;
  emu::FakeKernel kernel{recorded(rec)};
};

TEST_F(RknpuBackend, LongListsAreChunked) {
  auto kmd = driver::open_rknpu(kernel, "/dev/dri/card1");
  ASSERT_TRUE(kmd.ok());
  auto regcmd = (*kmd)->bo_create(5000 * 256, BoUsage::regcmd);
  SubmitDesc d;
  d.jobs.push_back({0, {}});
  for (uint32_t t = 0; t < 5000; ++t)
    d.jobs[0].tasks.push_back({(*regcmd)->iova() + 256 * t, 20, ork::hw::kIntTaskDone});
  auto r = (*kmd)->submit(d);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->tasks_completed, 5000u);
  EXPECT_EQ(kernel.stats().submits, 2u);
  EXPECT_EQ(rec.calls, (std::vector<ChainCall>{{0, (*regcmd)->iova(), 20, 4095},
                                               {0, (*regcmd)->iova() + 256 * 4095, 20, 905}}));
}

TEST_F(RknpuBackend, CoresZeroAndTwoGoOneAtATime) {
  auto kmd = driver::open_rknpu(kernel, "/dev/dri/card1");
  ASSERT_TRUE(kmd.ok());
  auto regcmd = (*kmd)->bo_create(4096, BoUsage::regcmd);
  SubmitDesc d;
  d.jobs = {{2, {{(*regcmd)->iova(), 20, ork::hw::kIntTaskDone}}}, {0, {{(*regcmd)->iova() + 256, 20, ork::hw::kIntTaskDone}}}};
  auto r = (*kmd)->submit(d);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(kernel.stats().submits, 2u);
  EXPECT_EQ(rec.calls, (std::vector<ChainCall>{{0, (*regcmd)->iova() + 256, 20, 1},
                                               {2, (*regcmd)->iova(), 20, 1}}));
}

}  // namespace
}  // namespace ork::testing
