// Asynchronous submission on both backends over the fake kernel: rknpu NONBLOCK | FENCE_OUT
// (and a kernel without fences), rocket SUBMIT + PREP_BO; jobs in flight, waits, overruns.
#include <chrono>

#include "driver/kmd/kmd.h"
#include "driver_fixture.h"
#include "driver/emu/kernel/zero_work.h"

namespace ork::testing {
namespace {

using driver::AsyncMode;
using driver::Bo;
using driver::BoUsage;
using driver::CoreJob;
using driver::Kmd;
using driver::KmdKind;
using driver::SubmitDesc;
using driver::TaskRef;

// `tasks` tasks of 20 entries on `core`, writing `out`.
SubmitDesc job_on(const Bo& regcmd, const Bo& out, int core, uint32_t tasks, uint32_t timeout_ms = 6000) {
  SubmitDesc d;
  CoreJob job{core, {}};
  for (uint32_t t = 0; t < tasks; ++t) job.tasks.push_back(TaskRef{regcmd.iova() + 256 * t, 20, ork::hw::kIntTaskDone});
  d.jobs.push_back(job);
  d.out_bos = {&out};
  d.timeout_ms = timeout_ms;
  return d;
}

// A stand-in PC that models `ns` per kick (for timed mode), completing every task.
emu::FakeKernelConfig slow_kernel(double ns) {
  emu::FakeKernelConfig cfg;
  cfg.timing = emu::TimingMode::timed;
  cfg.executor = emu::zero_work_executor(ork::hw::kIntTaskDone, ns);
  return cfg;
}

class Async : public ::testing::TestWithParam<KmdKind> {
 protected:
  void SetUp() override {
    kmd = open_kmd(kernel, GetParam());
    ASSERT_TRUE(kmd);
    auto r = kmd->bo_create(65536, BoUsage::regcmd);
    ASSERT_TRUE(r.ok());
    regcmd = std::move(*r);
    for (int i = 0; i < 3; ++i) {
      auto o = kmd->bo_create(4096, BoUsage::data);
      ASSERT_TRUE(o.ok());
      outs.push_back(std::move(*o));
    }
  }
  void TearDown() override {
    outs.clear();
    regcmd.reset();
    kmd.reset();
    EXPECT_EQ(kernel.live_bo_count(), 0u);
    EXPECT_EQ(kernel.open_fence_count(), 0u);  // every fence fd closed
  }
  bool rknpu() const { return GetParam() == KmdKind::rknpu; }

  Recorder rec;
  emu::FakeKernel kernel{recorded(rec)};
  std::unique_ptr<Kmd> kmd;
  std::unique_ptr<Bo> regcmd;
  std::vector<std::unique_ptr<Bo>> outs;
};

TEST_P(Async, SeveralJobsInFlightCompleteInOrder) {
  EXPECT_EQ(kmd->async_mode(), rknpu() ? AsyncMode::fence : AsyncMode::prep_bo);
  std::vector<std::unique_ptr<driver::PendingJob>> jobs;
  for (int i = 0; i < 3; ++i) {
    auto j = kmd->submit_async(job_on(*regcmd, *outs[static_cast<size_t>(i)], i, static_cast<uint32_t>(i + 1)));
    ASSERT_TRUE(j.ok()) << j.error().message;
    jobs.push_back(std::move(*j));
  }
  if (rknpu()) {
    EXPECT_EQ(kernel.open_fence_count(), 3u);  // one sync_file per job, none waited yet
    EXPECT_EQ(kernel.stats().nonblock_submits, 3u);
  }
  for (int i = 0; i < 3; ++i) {
    auto r = kmd->wait(*jobs[static_cast<size_t>(i)], -1);
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_EQ(r->tasks_completed, static_cast<uint32_t>(i + 1));
  }
  EXPECT_EQ(rec.calls.size(), rknpu() ? 3u : 6u);  // rknpu: a kick per core; rocket: per task
}

TEST_P(Async, WaitingTwiceIsRefused) {
  auto j = kmd->submit_async(job_on(*regcmd, *outs[0], 0, 1));
  ASSERT_TRUE(j.ok());
  ASSERT_TRUE(kmd->wait(**j, -1).ok());
  auto again = kmd->wait(**j, -1);
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error().code, -EALREADY);
  EXPECT_NE(again.error().message.find("already waited"), std::string::npos);
}

TEST_P(Async, OverrunReportsTimeoutResetsAndTheDeviceStaysUsable) {
  kernel.faults().wedge_jobs = 1;
  auto stuck = kmd->submit_async(job_on(*regcmd, *outs[0], 0, 2, 50));
  ASSERT_TRUE(stuck.ok()) << stuck.error().message;  // NONBLOCK: the submit itself succeeds
  auto r = kmd->wait(**stuck, -1);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, -ETIMEDOUT);
  EXPECT_NE(r.error().message.find("timed out"), std::string::npos) << r.error().message;
  EXPECT_GE(kernel.stats().resets[0], 1u);
  // A blocking call afterwards works (rknpu: it goes NONBLOCK to reap the overrun job).
  auto next = kmd->submit(job_on(*regcmd, *outs[1], 0, 3));
  ASSERT_TRUE(next.ok()) << next.error().message;
  EXPECT_EQ(next->tasks_completed, 3u);
  if (rknpu()) {
    EXPECT_EQ(kernel.stats().reaped_jobs, 1u);
  }
  auto later = kmd->submit_async(job_on(*regcmd, *outs[2], 0, 1));
  ASSERT_TRUE(later.ok());
  EXPECT_TRUE(kmd->wait(**later, -1).ok());
}

INSTANTIATE_TEST_SUITE_P(BothInterfaces, Async, ::testing::Values(KmdKind::rknpu, KmdKind::rocket),
                         [](const auto& info) { return std::string(driver::kmd_kind_name(info.param)); });

// The job is held in flight by the fake kernel (Faults::hold_jobs) until the early wait has
// looked, so the check does not depend on the host reaching wait(0) within the modelled
// 150 ms (under qemu, or on a loaded machine, it might not). The 140 ms is a lower bound.
TEST(AsyncTimed, ShortWaitLeavesTheJobInFlight) {
  for (KmdKind kind : {KmdKind::rknpu, KmdKind::rocket}) {
    emu::FakeKernel kernel(slow_kernel(150e6));  // 150 ms per kick
    kernel.faults().hold_jobs = true;
    auto kmd = open_kmd(kernel, kind);
    auto regcmd = kmd->bo_create(4096, BoUsage::regcmd);
    auto out = kmd->bo_create(4096, BoUsage::data);
    const auto t0 = std::chrono::steady_clock::now();
    auto j = kmd->submit_async(job_on(**regcmd, **out, 0, 1));
    ASSERT_TRUE(j.ok()) << j.error().message;
    auto early = kmd->wait(**j, 0);
    ASSERT_FALSE(early.ok()) << driver::kmd_kind_name(kind);
    EXPECT_EQ(early.error().code, -EBUSY) << early.error().message;
    EXPECT_NE(early.error().message.find("still in flight"), std::string::npos);
    auto again = kmd->wait(**j, 0);  // held: still in flight, however long the host took
    ASSERT_FALSE(again.ok());
    EXPECT_EQ(again.error().code, -EBUSY) << again.error().message;
    kernel.faults().hold_jobs = false;
    auto done = kmd->wait(**j, -1);
    ASSERT_TRUE(done.ok()) << done.error().message;
    EXPECT_GE(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(140));
  }
}

TEST(AsyncRknpu, KernelWithoutFencesBlocksAtSubmit) {
  emu::FakeKernelConfig cfg;
  cfg.rknpu_fences = false;
  Recorder rec;
  cfg.executor = rec.executor();
  emu::FakeKernel kernel(cfg);
  auto kmd = open_kmd(kernel, KmdKind::rknpu);
  auto regcmd = kmd->bo_create(4096, BoUsage::regcmd);
  auto out = kmd->bo_create(4096, BoUsage::data);
  auto j = kmd->submit_async(job_on(**regcmd, **out, 1, 2));
  ASSERT_TRUE(j.ok()) << j.error().message;
  EXPECT_EQ(kmd->async_mode(), AsyncMode::blocking);  // FENCE_OUT was refused with -EINVAL
  EXPECT_EQ(kernel.stats().nonblock_submits, 0u);
  EXPECT_EQ(rec.calls.size(), 1u);  // ran inside submit_async
  auto r = kmd->wait(**j, 0);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->tasks_completed, 2u);
  EXPECT_FALSE(kmd->wait(**j, 0).ok());
}

TEST(AsyncRknpu, JobQueuedBehindAnOverrunNeverRunsAndIsReaped) {
  Recorder rec;
  emu::FakeKernel kernel(recorded(rec));
  auto kmd = open_kmd(kernel, KmdKind::rknpu);
  auto regcmd = kmd->bo_create(4096, BoUsage::regcmd);
  auto out0 = kmd->bo_create(4096, BoUsage::data);
  auto out1 = kmd->bo_create(4096, BoUsage::data);
  kernel.faults().wedge_jobs = 1;
  auto first = kmd->submit_async(job_on(**regcmd, **out0, 2, 1, 20));
  ASSERT_TRUE(first.ok());
  // Fast mode counts the wedged job's timeout as elapsed at once, so the next NONBLOCK
  // submit to core 2 reaps it before queueing: the second job runs.
  auto second = kmd->submit_async(job_on(**regcmd, **out1, 2, 1, 20));
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(kernel.stats().reaped_jobs, 1u);
  auto r1 = kmd->wait(**first, -1);
  ASSERT_FALSE(r1.ok());
  EXPECT_EQ(r1.error().code, -ETIMEDOUT);
  auto r2 = kmd->wait(**second, -1);
  EXPECT_TRUE(r2.ok()) << r2.error().message;
}

TEST(AsyncRknpu, TimedOverrunBlocksTheCoreUntilReaped) {
  emu::FakeKernelConfig cfg = slow_kernel(1e6);
  emu::FakeKernel kernel(cfg);
  auto kmd = open_kmd(kernel, KmdKind::rknpu);
  auto regcmd = kmd->bo_create(4096, BoUsage::regcmd);
  auto out0 = kmd->bo_create(4096, BoUsage::data);
  auto out1 = kmd->bo_create(4096, BoUsage::data);
  kernel.faults().wedge_jobs = 1;
  auto first = kmd->submit_async(job_on(**regcmd, **out0, 0, 1, 60));
  ASSERT_TRUE(first.ok());
  // Before the wedged job is 60 ms old, a job for core 0 queues behind it and never starts.
  auto behind = kmd->submit_async(job_on(**regcmd, **out1, 0, 1, 60));
  ASSERT_TRUE(behind.ok());
  EXPECT_EQ(kernel.stats().reaped_jobs, 0u);
  EXPECT_EQ(kmd->wait(**first, -1).error().code, -ETIMEDOUT);
  EXPECT_EQ(kmd->wait(**behind, -1).error().code, -ETIMEDOUT);
  // Both overran; the next call reaps them and runs.
  auto next = kmd->submit(job_on(**regcmd, **out1, 0, 1));
  ASSERT_TRUE(next.ok()) << next.error().message;
  EXPECT_EQ(kernel.stats().reaped_jobs, 1u);
}

}  // namespace
}  // namespace ork::testing
