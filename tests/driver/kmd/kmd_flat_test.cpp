// A checked job's flat layout (Kmd::check lays it out, submit_checked submits from it), on
// both backends: the kernel is handed what an unchecked submit of the same descriptor hands
// it, chain by chain (the rknpu chunks of 4095 tasks and its one-core-at-a-time masks 5 and
// 6 included), and a submit of a checked job allocates nothing on the library's side
// (docs/library.md "The job a submit reads, flat").
#include "tests/support/alloc_counter.h"

#include <cerrno>
#include <cstdint>
#include <string>
#include <vector>

#include "driver/kmd/kmd.h"
#include "driver_fixture.h"

namespace ork::testing {
namespace {

using driver::BoUsage;
using driver::CoreJob;
using driver::KmdKind;
using driver::SubmitDesc;
using driver::TaskRef;

class Flat : public ::testing::TestWithParam<KmdKind> {
 protected:
  void SetUp() override {
    kmd = open_kmd(kernel, GetParam());
    ASSERT_TRUE(kmd);
    auto r = kmd->bo_create(6000 * 256, BoUsage::regcmd);
    auto o = kmd->bo_create(4096, BoUsage::data);
    auto o2 = kmd->bo_create(4096, BoUsage::data);
    ASSERT_TRUE(r.ok() && o.ok() && o2.ok());
    regcmd = std::move(*r), out = std::move(*o), out2 = std::move(*o2);
  }
  // Jobs of `tasks[j]` tasks on core `cores[j]`, every task its own 256 bytes of regcmd,
  // word counts and interrupt masks varying, so a task moved or a field swapped shows.
  SubmitDesc desc(std::vector<int> cores, std::vector<uint32_t> tasks) {
    SubmitDesc d;
    uint64_t next = 0;
    for (size_t j = 0; j < cores.size(); ++j) {
      CoreJob job{cores[j], {}};
      for (uint32_t t = 0; t < tasks[j]; ++t, ++next)
        job.tasks.push_back(TaskRef{regcmd->iova() + 256 * next, 20 + static_cast<uint32_t>(next % 7),
                                    next % 2 ? ork::hw::kIntTaskDone : 0x300u});
      d.jobs.push_back(job);
    }
    d.in_bos = {regcmd.get()};
    d.out_bos = {out.get(), out2.get()};
    return d;
  }
  std::vector<ChainCall> chains_of_submit(const SubmitDesc& d) {
    rec.calls.clear();
    auto r = kmd->submit(d);
    EXPECT_TRUE(r.ok()) << r.error().message;
    return chains();
  }
  // The chains the kernel ran since rec.calls was cleared. rocket's kernel picks each job's
  // core itself (the least loaded), so there only the order of the chains counts.
  std::vector<ChainCall> chains() const {
    std::vector<ChainCall> calls = rec.calls;
    if (GetParam() == KmdKind::rocket)
      for (ChainCall& c : calls) c.core = -1;
    return calls;
  }

  // The allocation tests' job: a Kmd of the parameter's interface opened through `os`, so
  // the kernel's and the emulator's allocations are not counted (alloc_counter.h), four
  // tasks on the three cores, and its check.
  struct UncountedJob {
    explicit UncountedJob(emu::FakeKernel& k) : os(k) {}
    ork::test::KernelNotCounted os;
    std::unique_ptr<driver::Kmd> kmd;
    std::unique_ptr<driver::Bo> regcmd, out;
    SubmitDesc desc;
    driver::CheckedSubmit checked;
  };
  void open_uncounted(UncountedJob& j) {
    auto k = GetParam() == KmdKind::rknpu ? driver::open_rknpu(j.os, "/dev/dri/card1")
                                          : driver::open_rocket(j.os, "/dev/accel/accel0");
    ASSERT_TRUE(k.ok()) << k.error().message;
    j.kmd = std::move(*k);
    auto r = j.kmd->bo_create(4096, BoUsage::regcmd);
    auto o = j.kmd->bo_create(4096, BoUsage::data);
    ASSERT_TRUE(r.ok() && o.ok());
    j.regcmd = std::move(*r), j.out = std::move(*o);
    const uint64_t at = j.regcmd->iova();
    j.desc.jobs = {{0, {{at, 20, ork::hw::kIntTaskDone}}},
                   {1, {{at + 256, 20, ork::hw::kIntTaskDone}, {at + 512, 20, ork::hw::kIntTaskDone}}},
                   {2, {{at + 768, 20, ork::hw::kIntTaskDone}}}};
    j.desc.out_bos = {j.out.get()};
    auto checked = j.kmd->check(j.desc);
    ASSERT_TRUE(checked.ok()) << checked.error().message;
    j.checked = std::move(*checked);
  }

  Recorder rec;
  emu::FakeKernel kernel{recorded(rec)};
  std::unique_ptr<driver::Kmd> kmd;
  std::unique_ptr<driver::Bo> regcmd, out, out2;
};

TEST_P(Flat, ACheckedJobRunsTheChainsOfItsDescriptor) {
  const bool rknpu = GetParam() == KmdKind::rknpu;
  struct Case {
    std::vector<int> cores;
    std::vector<uint32_t> tasks;
  };
  const std::vector<Case> cases = {
      {{0}, {2}},          {{2, 0, 1}, {1, 2, 3}}, {{2, 0}, {3, 1}},          {{1, 2}, {2, 2}},
      {{1, 0}, {5000, 1}}, {{0}, {1}},             {{0, 1, 2}, {9, 15, 4}},  // 28 tasks: past the inline bytes
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(::testing::PrintToString(c.cores) + " " + ::testing::PrintToString(c.tasks));
    const SubmitDesc d = desc(c.cores, c.tasks);
    const std::vector<ChainCall> want = chains_of_submit(d);
    uint32_t total = 0;
    for (uint32_t n : c.tasks) total += n;
    auto checked = kmd->check(d);
    ASSERT_TRUE(checked.ok()) << checked.error().message;
    for (int i = 0; i < 2; ++i) {  // the same chains every time: nothing in the layout is used up
      rec.calls.clear();
      auto r = kmd->submit_checked(*checked);
      ASSERT_TRUE(r.ok()) << r.error().message;
      EXPECT_EQ(r->tasks_completed, total);
      EXPECT_EQ(chains(), want);
    }
    const driver::CheckedSubmit copy = *checked;  // a copy (a context's job copied) reads its own bytes
    rec.calls.clear();
    ASSERT_TRUE(kmd->submit_checked(copy).ok());
    EXPECT_EQ(chains(), want);
    if (rknpu && c.tasks[0] == 5000) {
      EXPECT_EQ(want.size(), 3u);  // 4095 + 905 on core 1, 1 on core 0
    }
  }
}

TEST_P(Flat, ASubmitOfACheckedJobAllocatesNothing) {
  UncountedJob j(kernel);
  ASSERT_NO_FATAL_FAILURE(open_uncounted(j));
  auto& k = j.kmd;
  const SubmitDesc& d = j.desc;
  const driver::CheckedSubmit& checked = j.checked;
  ASSERT_TRUE(k->submit_checked(checked).ok());  // the first grows the rknpu task BO
  bool ok = true;
  const long allocations = ork::test::allocations_in([&] {
    for (int i = 0; i < 10; ++i) ok = ok && k->submit_checked(checked).ok();
  });
  EXPECT_TRUE(ok);
  EXPECT_EQ(allocations, 0);
  // The count is not vacuous: an unchecked submit lays its job out on every call.
  EXPECT_GT(ork::test::allocations_in([&] { ok = k->submit(d).ok(); }), 0);
  EXPECT_TRUE(ok);
}

// The asynchronous path takes a checked job too (Kmd::submit_async_checked, as a matmul job
// does: lib/matmul/job.h): the kernel runs the chains a blocking submit of the descriptor
// runs, and the library lays nothing out, so a checked job's submit and wait allocate less
// than an unchecked one's (what is left is the pending job's own: it and its list of fences
// or out handles). A job checked by no Kmd is refused.
TEST_P(Flat, AnAsynchronousSubmitOfACheckedJobRunsItsChainsAndLaysNothingOut) {
  const std::vector<std::pair<std::vector<int>, std::vector<uint32_t>>> cases = {
      {{0}, {2}}, {{2, 0, 1}, {1, 2, 3}}, {{1, 0}, {5000, 1}}, {{0, 1, 2}, {9, 15, 4}}};
  for (const auto& [cores, tasks] : cases) {
    SCOPED_TRACE(::testing::PrintToString(cores) + " " + ::testing::PrintToString(tasks));
    const SubmitDesc d = desc(cores, tasks);
    const std::vector<ChainCall> want = chains_of_submit(d);
    auto checked = kmd->check(d);
    ASSERT_TRUE(checked.ok()) << checked.error().message;
    for (int i = 0; i < 2; ++i) {
      rec.calls.clear();
      auto job = kmd->submit_async_checked(*checked);
      ASSERT_TRUE(job.ok()) << job.error().message;
      ASSERT_TRUE(kmd->wait(**job, -1).ok());
      EXPECT_EQ(chains(), want);
    }
  }
  const driver::CheckedSubmit unchecked;
  auto refused = kmd->submit_async_checked(unchecked);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, -EINVAL);
  EXPECT_NE(refused.error().message.find("never checked"), std::string::npos) << refused.error().message;
}

TEST_P(Flat, AnAsynchronousSubmitOfACheckedJobAllocatesOnlyItsPendingJob) {
  UncountedJob j(kernel);
  ASSERT_NO_FATAL_FAILURE(open_uncounted(j));
  auto& k = j.kmd;
  const SubmitDesc& d = j.desc;
  const driver::CheckedSubmit& checked = j.checked;
  bool ok = true;
  auto round_trip = [&](auto submit) {
    auto job = submit();
    ok = ok && job.ok() && k->wait(**job, -1).ok();
  };
  round_trip([&] { return k->submit_async_checked(checked); });  // the first makes the task BO
  const long as_checked = ork::test::allocations_in([&] {
    round_trip([&] { return k->submit_async_checked(checked); });
  });
  const long unchecked = ork::test::allocations_in([&] { round_trip([&] { return k->submit_async(d); }); });
  EXPECT_TRUE(ok);
  EXPECT_LE(as_checked, 2);  // the pending job, and its fences (rknpu) or out handles (rocket)
  EXPECT_LT(as_checked, unchecked);  // the unchecked one lays its job out on every call
}

// A flat job's size is 32-bit: one past UINT32_MAX bytes is refused with an error naming the
// bytes, never truncated to a 32-bit size (which would be a job of 0 bytes here, or of a few
// bytes for the larger one); the largest sizes it holds are taken at their exact size.
TEST(FlatJobSize, MoreBytesThanItsSizeHoldsAreRefusedNotTruncated) {
  for (const uint64_t bytes : {uint64_t{UINT32_MAX} + 1, uint64_t{UINT32_MAX} + 9, uint64_t{1} << 40}) {
    SCOPED_TRACE(bytes);
    auto job = driver::FlatJob::make(static_cast<size_t>(bytes));
    ASSERT_FALSE(job.ok());
    EXPECT_EQ(job.error().code, -E2BIG);
    EXPECT_NE(job.error().message.find(std::to_string(bytes) + " bytes"), std::string::npos) << job.error().message;
  }
  for (const size_t bytes : {size_t{0}, size_t{4}, driver::FlatJob::kInlineBytes, driver::FlatJob::kInlineBytes + 4}) {
    auto job = driver::FlatJob::make(bytes);
    ASSERT_TRUE(job.ok()) << job.error().message;
    EXPECT_EQ(job->size(), bytes);
  }
}

INSTANTIATE_TEST_SUITE_P(BothInterfaces, Flat, ::testing::Values(KmdKind::rknpu, KmdKind::rocket),
                         [](const auto& info) { return std::string(driver::kmd_kind_name(info.param)); });

}  // namespace
}  // namespace ork::testing
