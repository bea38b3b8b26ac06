// Device lifetime and what device errors are called: weights (plain and quantised)
// destroyed after their device was closed (once a use-after-free: the BOs were freed through
// a deleted device), and two kernel errors reported as what they are: MEM_MAP's EPERM is a
// device error, not "no device"; an EIO refused by SUBMIT before any job ran is not a DMA
// fault, while a job's real DMA error still says so. Handles released twice, or used
// after their release, are refused without touching freed memory.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "driver/emu/kernel/fake_kernel.h"
#include "lib/api/device.h"
#include "ork/ork.h"

namespace {

constexpr int64_t kLifetimeM = 5, kLifetimeK = 64, kLifetimeN = 32;

TEST(Lifetime, WeightsDestroyedAfterTheirDeviceWasClosed) {
  for (const char* name : {"emu-rknpu", "emu-rocket", "cpu"}) {
    SCOPED_TRACE(name);
    ork_device* dev = nullptr;
    ASSERT_EQ(ork_device_open(name, &dev), ORK_OK) << ork_last_error();
    std::vector<int8_t> w(kLifetimeK * kLifetimeN, 3), a(kLifetimeM * kLifetimeK, 2);
    std::vector<float> wf(kLifetimeK * kLifetimeN, 0.5f);
    ork_weights* w1 = nullptr;
    ork_weights* w2 = nullptr;
    ork_qweights* q = nullptr;
    ASSERT_EQ(ork_weights_create(dev, ORK_DTYPE_INT8, kLifetimeK, kLifetimeN, w.data(), &w1), ORK_OK) << ork_last_error();
    ASSERT_EQ(ork_weights_create(dev, ORK_DTYPE_INT8, kLifetimeK, kLifetimeN, w.data(), &w2), ORK_OK) << ork_last_error();
    const bool npu = dev->backend->kmd() != nullptr;
    if (npu) {
      ASSERT_EQ(ork_qweights_create(dev, wf.data(), kLifetimeK, kLifetimeN, nullptr, &q), ORK_OK) << ork_last_error();
    }
    EXPECT_EQ(dev->refs.load(), npu ? 4 : 3);  // the handle + three (two) objects
    std::vector<int32_t> c(kLifetimeM * kLifetimeN, 0);
    ASSERT_EQ(ork_matmul(dev, w1, a.data(), kLifetimeM, c.data(), nullptr), ORK_OK) << ork_last_error();
    ork_device_close(dev);
    // The handle is gone, the device is not: its weights still hold it, BOs still live.
    EXPECT_TRUE(dev->closed.load());
    EXPECT_EQ(dev->refs.load(), npu ? 3 : 2);
    if (dev->fake) {
      EXPECT_GT(dev->fake->live_bo_count(), 0u);
    }
    ork_weights_destroy(w1);
    EXPECT_EQ(dev->refs.load(), npu ? 2 : 1);
    ork_qweights_destroy(q);  // NULL on cpu: ignored
    ork_weights_destroy(w2);  // the last reference: the device goes now (ASan checks the rest)
  }
}

// Misuse that once crashed or hung: a second ork_job_release, a wait after the release, a
// second ork_weights_destroy, ork_batch_destroy and ork_device_close. Each is refused with a
// message naming the entry point, touches nothing freed (ASan checks), and the device goes
// on working where it is still open.
TEST(Lifetime, ReleasedHandlesAreRefusedNotTouched) {
  for (const char* name : {"emu-rknpu", "emu-rocket", "cpu"}) {
    SCOPED_TRACE(name);
    ork_device* dev = nullptr;
    ASSERT_EQ(ork_device_open(name, &dev), ORK_OK) << ork_last_error();
    std::vector<int8_t> w(kLifetimeK * kLifetimeN, 3), a(kLifetimeM * kLifetimeK, 2);
    std::vector<int32_t> c(kLifetimeM * kLifetimeN, 0), want(kLifetimeM * kLifetimeN, 2 * 3 * kLifetimeK);
    ork_weights* weights = nullptr;
    ASSERT_EQ(ork_weights_create(dev, ORK_DTYPE_INT8, kLifetimeK, kLifetimeN, w.data(), &weights), ORK_OK) << ork_last_error();
    ork_tensor ta{}, tc{};
    ta.host = a.data();
    tc.host = c.data();
    ork_job* job = nullptr;
    ASSERT_EQ(ork_matmul_submit(dev, weights, &ta, kLifetimeM, &tc, nullptr, &job), ORK_OK) << ork_last_error();
    ASSERT_EQ(ork_job_wait(job, -1), ORK_OK) << ork_last_error();
    EXPECT_EQ(c, want);
    ork_job_release(job);
    ork_job_release(job);
    EXPECT_NE(std::string(ork_last_error()).find("ork_job_release: not a live job"), std::string::npos) << ork_last_error();
    EXPECT_EQ(ork_job_wait(job, -1), ORK_E_INVALID_ARGUMENT);
    EXPECT_NE(std::string(ork_last_error()).find("ork_job_wait: not a live job"), std::string::npos) << ork_last_error();
    // Released while in flight, then released again.
    ASSERT_EQ(ork_matmul_submit(dev, weights, &ta, kLifetimeM, &tc, nullptr, &job), ORK_OK) << ork_last_error();
    ork_job_release(job);
    ork_job_release(job);
    ork_batch* batch = nullptr;
    ASSERT_EQ(ork_batch_create(dev, &batch), ORK_OK) << ork_last_error();
    ASSERT_EQ(ork_batch_add_matmul(batch, weights, &ta, kLifetimeM, &tc, nullptr), ORK_OK) << ork_last_error();
    ork_batch_destroy(batch);
    ork_batch_destroy(batch);
    EXPECT_NE(std::string(ork_last_error()).find("ork_batch_destroy: not a live batch"), std::string::npos);
    EXPECT_EQ(ork_batch_submit(batch, &job), ORK_E_INVALID_ARGUMENT);
    EXPECT_NE(std::string(ork_last_error()).find("not a live batch"), std::string::npos) << ork_last_error();
    // The device still works after all that.
    c.assign(c.size(), 0);
    ASSERT_EQ(ork_matmul(dev, weights, a.data(), kLifetimeM, c.data(), nullptr), ORK_OK) << ork_last_error();
    EXPECT_EQ(c, want);
    ork_weights_destroy(weights);
    ork_weights_destroy(weights);
    EXPECT_NE(std::string(ork_last_error()).find("ork_weights_destroy: not live weights"), std::string::npos)
        << ork_last_error();
    ork_device_close(dev);
    ork_device_close(dev);  // once a deadlock (or a use after free)
    EXPECT_NE(std::string(ork_last_error()).find("ork_device_close: not an open device"), std::string::npos)
        << ork_last_error();
  }
}

// The same for the other objects made on a device: buffers, weights in engine layouts and
// imported packed weights, each destroyed after ork_device_close.
TEST(Lifetime, BuffersAndEngineWeightsDestroyedAfterTheirDeviceWasClosed) {
  for (const char* name : {"emu-rknpu", "emu-rocket", "cpu"}) {
    SCOPED_TRACE(name);
    ork_device* dev = nullptr;
    ASSERT_EQ(ork_device_open(name, &dev), ORK_OK) << ork_last_error();
    std::vector<int8_t> w(kLifetimeK * kLifetimeN, 3);
    ork_buffer* buf = nullptr;
    ASSERT_EQ(ork_buffer_create(dev, 4096, &buf), ORK_OK) << ork_last_error();
    ork_weights_desc d{};
    d.struct_size = sizeof(d);
    d.dtype = ORK_DTYPE_INT8;
    d.k = kLifetimeK;
    d.n = kLifetimeN;
    d.layout = ORK_LAYOUT_K_BY_N;
    d.data = w.data();
    ork_weights* ex = nullptr;
    ASSERT_EQ(ork_weights_create_ex(dev, &d, &ex), ORK_OK) << ork_last_error();
    size_t size = 0;
    ASSERT_EQ(ork_weights_export_packed(ex, nullptr, 0, &size), ORK_OK) << ork_last_error();
    std::vector<uint8_t> blob(size);
    ASSERT_EQ(ork_weights_export_packed(ex, blob.data(), blob.size(), &size), ORK_OK) << ork_last_error();
    ork_weights* imported = nullptr;
    ASSERT_EQ(ork_weights_import_packed(dev, blob.data(), blob.size(), &imported), ORK_OK) << ork_last_error();
    EXPECT_EQ(dev->refs.load(), 4);  // the handle + the buffer + two weights
    ork_device_close(dev);
    EXPECT_EQ(dev->refs.load(), 3);
    EXPECT_EQ(ork_buffer_destroy(buf), ORK_OK) << ork_last_error();
    EXPECT_EQ(dev->refs.load(), 2);
    ork_weights_destroy(ex);
    ork_weights_destroy(imported);  // the last reference (ASan checks the rest)
  }
}

class DeviceErrors : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(ork_device_open("emu-rknpu", &dev_), ORK_OK) << ork_last_error();
    ASSERT_NE(dev_->fake, nullptr);
  }
  void TearDown() override {
    ork_weights_destroy(w_);
    ork_device_close(dev_);
  }
  ork::emu::Faults& faults() { return dev_->fake->faults(); }
  ork_device* dev_ = nullptr;
  ork_weights* w_ = nullptr;
  std::vector<int8_t> w_data_ = std::vector<int8_t>(kLifetimeK * kLifetimeN, 1), a_ = std::vector<int8_t>(kLifetimeM * kLifetimeK, 1);
  std::vector<int32_t> c_ = std::vector<int32_t>(kLifetimeM * kLifetimeN, 0);
};

TEST_F(DeviceErrors, MemMapEpermIsADeviceErrorNotNoDevice) {
  faults().fail_nr = 0x43;  // DRM_COMMAND_BASE + RKNPU_MEM_MAP
  faults().fail_errno = EPERM;
  faults().fail_times = 1;
  EXPECT_EQ(ork_weights_create(dev_, ORK_DTYPE_INT8, kLifetimeK, kLifetimeN, w_data_.data(), &w_), ORK_E_DEVICE);
  const std::string msg = ork_last_error();
  EXPECT_NE(msg.find("RKNPU_MEM_MAP of a"), std::string::npos) << msg;
  EXPECT_NE(msg.find("EPERM"), std::string::npos) << msg;
  // The device is usable afterwards.
  ASSERT_EQ(ork_weights_create(dev_, ORK_DTYPE_INT8, kLifetimeK, kLifetimeN, w_data_.data(), &w_), ORK_OK) << ork_last_error();
  ASSERT_EQ(ork_matmul(dev_, w_, a_.data(), kLifetimeM, c_.data(), nullptr), ORK_OK) << ork_last_error();
  EXPECT_EQ(c_[0], kLifetimeK);
}

TEST_F(DeviceErrors, SubmitEioBeforeAnyJobIsNotADmaFault) {
  ASSERT_EQ(ork_weights_create(dev_, ORK_DTYPE_INT8, kLifetimeK, kLifetimeN, w_data_.data(), &w_), ORK_OK) << ork_last_error();
  faults().fail_nr = 0x41;  // DRM_COMMAND_BASE + RKNPU_SUBMIT
  faults().fail_errno = EIO;
  faults().fail_times = 1;
  EXPECT_EQ(ork_matmul(dev_, w_, a_.data(), kLifetimeM, c_.data(), nullptr), ORK_E_DEVICE);
  std::string msg = ork_last_error();
  EXPECT_NE(msg.find("failed before any job ran: EIO"), std::string::npos) << msg;
  EXPECT_EQ(msg.find("DMA"), std::string::npos) << msg;
  // A job that really faults is still called a DMA (or configuration) error.
  faults().dma_error_jobs = 1;
  EXPECT_EQ(ork_matmul(dev_, w_, a_.data(), kLifetimeM, c_.data(), nullptr), ORK_E_DEVICE);
  msg = ork_last_error();
  EXPECT_NE(msg.find("the job faulted (DMA"), std::string::npos) << msg;
  ASSERT_EQ(ork_matmul(dev_, w_, a_.data(), kLifetimeM, c_.data(), nullptr), ORK_OK) << ork_last_error();
  EXPECT_EQ(c_[0], kLifetimeK);
}

}  // namespace
