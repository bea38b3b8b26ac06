// Both backends' NPU windows over the fake kernel (docs/kernel-interfaces.md "Windows"): a
// second window is rknpu's IOMMU domain 1 on the same node, or rocket's second open file; its
// BOs are mapped there only, its jobs run there, and a job naming another window's BO is
// refused before the kernel sees it (at submit, or once at Kmd::check).
#include <string>

#include "driver/kmd/kmd.h"
#include "driver_fixture.h"

namespace ork::testing {
namespace {

using driver::BoUsage;
using driver::Kmd;
using driver::KmdKind;

class Windows : public ::testing::TestWithParam<KmdKind> {
 protected:
  void TearDown() override {
    EXPECT_EQ(kernel.live_bo_count(), 0u);  // every window's BOs freed with it
  }
  // A one-task job on core 0 over `regcmd`, writing `out`.
  static driver::SubmitDesc job(const driver::Bo& regcmd, const driver::Bo& out) {
    driver::SubmitDesc d;
    d.jobs.push_back(driver::CoreJob{0, {driver::TaskRef{regcmd.iova(), 20, ork::hw::kIntTaskDone}}});
    d.out_bos = {&out};
    return d;
  }
  // Bytes mapped in window `w` as the kernel counts them.
  uint64_t used(const Kmd& k, int w) {
    auto u = GetParam() == KmdKind::rknpu ? kernel.window_usage(k.node_fd(), w) : kernel.window_usage(k.node_fd());
    return u ? u->used_bytes : 0;
  }
  Recorder rec;
  emu::FakeKernel kernel{recorded(rec)};
};

TEST_P(Windows, ASecondWindowHoldsItsOwnBuffersAndRunsItsOwnJobs) {
  auto first = open_kmd(kernel, GetParam());
  ASSERT_TRUE(first);
  auto second = first->open_window(1);
  ASSERT_TRUE(second.ok()) << second.error().message;
  Kmd& w1 = **second;
  EXPECT_EQ(first->window(), 0);
  EXPECT_EQ(w1.window(), 1);
  EXPECT_EQ(w1.info().node, first->info().node);
  const uint64_t before = used(*first, 0);
  auto regcmd = w1.bo_create(8192, BoUsage::regcmd);
  auto out = w1.bo_create(4096, BoUsage::data);
  ASSERT_TRUE(regcmd.ok() && out.ok());
  EXPECT_EQ(used(w1, 1), 8192u + 4096u);  // mapped in window 1 ...
  EXPECT_EQ(used(*first, 0), before);     // ... and not in window 0
  auto r = w1.submit(job(**regcmd, **out));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->tasks_completed, 1u);
  if (GetParam() == KmdKind::rknpu) {
    EXPECT_EQ(kernel.stats().domain_switches, 1u);  // MEM_CREATE moved the NPU to domain 1; the job stayed there
  }
}

TEST_P(Windows, AJobNamingAnotherWindowsBufferIsRefusedNamingBoth) {
  auto first = open_kmd(kernel, GetParam());
  ASSERT_TRUE(first);
  auto second = first->open_window(1);
  ASSERT_TRUE(second.ok());
  auto regcmd = first->bo_create(4096, BoUsage::regcmd);
  auto foreign = (*second)->bo_create(4096, BoUsage::data);
  ASSERT_TRUE(regcmd.ok() && foreign.ok());
  const uint64_t submits = kernel.stats().submits;
  auto r = first->submit(job(**regcmd, **foreign));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, -EINVAL);
  EXPECT_NE(r.error().message.find("window 0"), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find("window 1"), std::string::npos) << r.error().message;
  EXPECT_EQ(kernel.stats().submits, submits);  // refused before any ioctl
  auto async = first->submit_async(job(**regcmd, **foreign));
  EXPECT_FALSE(async.ok());
}

// A job checked once (Kmd::check, what a matmul context does when it is built) is refused
// at the check as submit refuses it, runs through submit_checked on the Kmd that checked it
// without being checked again, and is refused by another window's Kmd (whose BOs it does not
// name) and when nobody checked it, before any ioctl.
TEST_P(Windows, AJobCheckedOnceRunsOnlyWhereItWasChecked) {
  auto first = open_kmd(kernel, GetParam());
  ASSERT_TRUE(first);
  auto second = first->open_window(1);
  ASSERT_TRUE(second.ok());
  auto regcmd = first->bo_create(4096, BoUsage::regcmd);
  auto out = first->bo_create(4096, BoUsage::data);
  auto foreign = (*second)->bo_create(4096, BoUsage::data);
  ASSERT_TRUE(regcmd.ok() && out.ok() && foreign.ok());
  auto bad = first->check(job(**regcmd, **foreign));
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("window 1"), std::string::npos) << bad.error().message;
  auto checked = first->check(job(**regcmd, **out));
  ASSERT_TRUE(checked.ok()) << checked.error().message;
  const uint64_t submits = kernel.stats().submits;
  auto elsewhere = (*second)->submit_checked(*checked);
  ASSERT_FALSE(elsewhere.ok());
  EXPECT_NE(elsewhere.error().message.find("another device's kernel interface"), std::string::npos);
  auto unchecked = first->submit_checked(driver::CheckedSubmit{});
  ASSERT_FALSE(unchecked.ok());
  EXPECT_NE(unchecked.error().message.find("never checked"), std::string::npos);
  EXPECT_EQ(kernel.stats().submits, submits);  // both refused before any ioctl
  for (int i = 0; i < 2; ++i) {
    auto r = first->submit_checked(*checked);
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_EQ(r->tasks_completed, 1u);
  }
  EXPECT_EQ(kernel.stats().submits, submits + 2);
}

// A job checked by a Kmd that was then closed is refused by the Kmd opened after it, before
// any ioctl, even where the allocator gives the new Kmd the closed one's address (it usually
// does at once: the same size, freed last). A check remembered by address would hand the
// kernel a job whose BOs were freed with their Kmd; it is keyed by the Kmd's serial.
TEST_P(Windows, AJobCheckedByAClosedKmdIsRefusedByTheNextOne) {
  auto first = open_kmd(kernel, GetParam());
  ASSERT_TRUE(first);
  auto closed = first->open_window(1);
  ASSERT_TRUE(closed.ok());
  const Kmd* address = closed->get();
  driver::CheckedSubmit checked;
  {
    auto regcmd = (*closed)->bo_create(4096, BoUsage::regcmd);
    auto out = (*closed)->bo_create(4096, BoUsage::data);
    ASSERT_TRUE(regcmd.ok() && out.ok());
    auto c = (*closed)->check(job(**regcmd, **out));
    ASSERT_TRUE(c.ok()) << c.error().message;
    checked = *c;
  }  // its BOs freed, then the Kmd closed
  closed->reset();
  auto next = first->open_window(1);
  ASSERT_TRUE(next.ok());
  const uint64_t submits = kernel.stats().submits;
  auto r = (*next)->submit_checked(checked);
  ASSERT_FALSE(r.ok()) << (next->get() == address ? "at the closed Kmd's address" : "at another address");
  EXPECT_NE(r.error().message.find("another device's kernel interface"), std::string::npos) << r.error().message;
  EXPECT_EQ(kernel.stats().submits, submits);
}

TEST_P(Windows, WindowIndexOutOfRangeIsRefused) {
  auto first = open_kmd(kernel, GetParam());
  ASSERT_TRUE(first);
  for (int w : {-1, 16}) {
    auto r = first->open_window(w);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().message.find("NPU window " + std::to_string(w)), std::string::npos);
  }
}

INSTANTIATE_TEST_SUITE_P(BothInterfaces, Windows, ::testing::Values(KmdKind::rknpu, KmdKind::rocket),
                         [](const auto& info) { return std::string(driver::kmd_kind_name(info.param)); });

}  // namespace
}  // namespace ork::testing
