// Faults through the whole stack: a wedged job, a DMA error, an EINTR storm, refused
// allocations and failing ioctls each give a clear status and message, and the device keeps
// working afterwards (docs/reliability.md). Faults are injected into the emulated
// NPU's kernel (driver/emu/kernel/fake_kernel.h) of the device under test.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/e2e/int8_fixture.h"

namespace {

constexpr int64_t M = 70, K = 256, N = 96;

class Faults : public ork::e2e::Int8Call {
 protected:
  Faults() : Int8Call(M, K, N) {}
  void SetUp() override {
    ASSERT_EQ(ork_device_open(GetParam(), &dev_), ORK_OK) << ork_last_error();
    ASSERT_NE(dev_->fake, nullptr);
    draw(5);
    ASSERT_EQ(create_weights(), ORK_OK) << ork_last_error();
  }
  ork_status run(int cores = 3) { return run_on(cores, 0); }
  void expect_correct_run() {
    ASSERT_EQ(run(), ORK_OK) << ork_last_error();
    EXPECT_EQ(got_, want_);
  }
};

TEST_P(Faults, WedgedJobTimesOutResetsAndTheNextCallWorks) {
  expect_correct_run();
  const auto before = dev_->fake->stats();
  faults().wedge_jobs = 1;
  EXPECT_EQ(run(), ORK_E_TIMEOUT);
  EXPECT_NE(std::string(ork_last_error()).find("tim"), std::string::npos) << ork_last_error();
  const auto after = dev_->fake->stats();
  uint64_t resets_before = 0, resets_after = 0;
  for (int c = 0; c < 3; ++c) resets_before += before.resets[c], resets_after += after.resets[c];
  EXPECT_GT(resets_after, resets_before) << "the wedged core was not reset";
  expect_correct_run();
}

TEST_P(Faults, DmaErrorFailsTheJobAndTheNextCallWorks) {
  faults().dma_error_jobs = 1;
  EXPECT_EQ(run(), ORK_E_DEVICE);
  EXPECT_STRNE(ork_last_error(), "");
  expect_correct_run();
}

TEST_P(Faults, InterruptedIoctlsAreRetried) {
  faults().transient_errno = EINTR;
  faults().transient_ioctls = 40;
  expect_correct_run();
  faults().transient_errno = EAGAIN;
  faults().transient_ioctls = 40;
  expect_correct_run();
}

TEST_P(Faults, RefusedAllocationIsOutOfMemoryAndRecoverable) {
  faults().refuse_bo_create = true;
  ork_weights* w2 = nullptr;
  EXPECT_EQ(ork_weights_create(dev_, ORK_DTYPE_INT8, K, N, w_.data(), &w2), ORK_E_NO_MEMORY);
  EXPECT_EQ(w2, nullptr);
  EXPECT_STRNE(ork_last_error(), "");
  // A new shape needs new buffers: refused too, cleanly.
  std::vector<int32_t> c(5 * N);
  EXPECT_EQ(ork_matmul(dev_, w_handle_, a_.data(), 5, c.data(), nullptr), ORK_E_NO_MEMORY);
  faults().refuse_bo_create = false;
  expect_correct_run();
}

TEST_P(Faults, EveryCoreCountStillExactAfterFaults) {
  faults().wedge_jobs = 1;
  EXPECT_EQ(run(1), ORK_E_TIMEOUT);
  for (int cores = 1; cores <= 3; ++cores) {
    ASSERT_EQ(run(cores), ORK_OK) << ork_last_error();
    EXPECT_EQ(got_, want_) << "cores " << cores;
  }
}

INSTANTIATE_TEST_SUITE_P(BothInterfaces, Faults, ::testing::Values("emu-rknpu", "emu-rocket"),
                         [](const auto& info) { return std::string(info.param) == "emu-rknpu" ? "rknpu" : "rocket"; });

}  // namespace
