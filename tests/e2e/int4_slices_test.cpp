// int4 K-slices as wide as the weights allow (docs/dtypes.md "int4 slices from the weights"),
// through the C API on emu, emu-rocket and cpu: weights just under the bound run in one wide
// slice, weights just over it in narrower ones, both bit-exact with the reference, and the
// emulated NPU clamps no int16 partial (its saturation counter stays 0). A packed-weight blob
// of wide-sliced weights round-trips.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "driver/common/int4.h"
#include "driver/emu/kernel/fake_kernel.h"
#include "lib/api/device.h"
#include "lib/api/weights.h"
#include "lib/ref/oracle.h"
#include "tests/support/int4_values.h"
#include "ork/ork.h"

namespace {

constexpr int64_t kSlicesM = 3, kSlicesK = 2048, kSlicesN = 64;

using ork::test::pack_int4_values;

class Int4Slices : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override { ASSERT_EQ(ork_device_open(GetParam(), &dev_), ORK_OK) << ork_last_error(); }
  void TearDown() override {
    ork_weights_destroy(w_);
    ork_device_close(dev_);
  }
  bool npu() const { return std::string(GetParam()) != "cpu"; }
  uint64_t saturated() const { return npu() ? dev_->fake->stats().int4_saturated_cells : 0; }

  // W4A4 C = A x W on the device against the oracle on the same values, every cell; the
  // resident's slice width when on an NPU (0 on cpu).
  int64_t check(const std::vector<int8_t>& a, const std::vector<int8_t>& w) {
    std::vector<int32_t> want(static_cast<size_t>(kSlicesM * kSlicesN)), got(want.size(), 0x5a5a5a5a);
    EXPECT_TRUE(ork::ref::matmul_int8(a, w, want, {kSlicesM, kSlicesK, kSlicesN}).ok());
    const std::vector<uint8_t> pw = pack_int4_values(w), pa = pack_int4_values(a);
    EXPECT_EQ(ork_weights_create(dev_, ORK_DTYPE_INT4, kSlicesK, kSlicesN, pw.data(), &w_), ORK_OK) << ork_last_error();
    const uint64_t before = saturated();
    EXPECT_EQ(ork_matmul(dev_, w_, pa.data(), kSlicesM, got.data(), nullptr), ORK_OK) << ork_last_error();
    EXPECT_EQ(got, want);
    EXPECT_EQ(saturated(), before);  // no partial left int16
    return npu() ? w_->resident->slice_k() : 0;
  }

  ork_device* dev_ = nullptr;
  ork_weights* w_ = nullptr;
};

// All +4 and A all -8: each 1024-row slice sums to exactly -32768, the int16 minimum.
TEST_P(Int4Slices, JustUnderTheBoundSlicesWideAndExact) {
  const int64_t width = check(std::vector<int8_t>(kSlicesM * kSlicesK, -8), std::vector<int8_t>(kSlicesK * kSlicesN, 4));
  if (npu()) {
    EXPECT_EQ(width, 1024);  // 2 slices, where 480-wide slicing takes 5
  }
}

// One 5 among the 4s: a 1024-row slice over it could reach -32776, so the width drops to 992.
TEST_P(Int4Slices, JustOverTheBoundSlicesNarrowerAndExact) {
  std::vector<int8_t> w(kSlicesK * kSlicesN, 4);
  w[1500 * kSlicesN + 7] = 5;
  const int64_t width = check(std::vector<int8_t>(kSlicesM * kSlicesK, -8), w);
  if (npu()) {
    EXPECT_EQ(width, 992);
  }
}

// Weights like real quantised ones (mostly small) and random A: wide slices, exact.
TEST_P(Int4Slices, SmallRandomWeightsSliceWideAndExact) {
  std::mt19937 rng(7);
  std::vector<int8_t> a(kSlicesM * kSlicesK), w(kSlicesK * kSlicesN);
  for (auto& x : a) x = static_cast<int8_t>(static_cast<int>(rng() % 16) - 8);
  for (auto& x : w) x = static_cast<int8_t>(static_cast<int>(rng() % 5) - 2);  // -2..2
  const int64_t width = check(a, w);
  if (npu()) {
    EXPECT_GT(width, 1024);
  }
}

// Export writes the dtype's 480-wide layout; import finds the width again from the weights.
TEST_P(Int4Slices, PackedBlobOfWideWeightsRoundTrips) {
  std::vector<int8_t> w(kSlicesK * kSlicesN, 4);
  w[1500 * kSlicesN + 7] = 5;
  const std::vector<int8_t> a(kSlicesM * kSlicesK, -8);
  ASSERT_EQ(check(a, w), npu() ? 992 : 0);
  size_t size = 0;
  ASSERT_EQ(ork_weights_export_packed(w_, nullptr, 0, &size), ORK_OK) << ork_last_error();
  std::vector<uint8_t> blob(size);
  ASSERT_EQ(ork_weights_export_packed(w_, blob.data(), blob.size(), &size), ORK_OK) << ork_last_error();
  ork_weights* back = nullptr;
  ASSERT_EQ(ork_weights_import_packed(dev_, blob.data(), blob.size(), &back), ORK_OK) << ork_last_error();
  if (npu()) {
    EXPECT_EQ(back->resident->slice_k(), 992);
  }
  std::vector<int32_t> want(static_cast<size_t>(kSlicesM * kSlicesN)), got(want.size(), 0x5a5a5a5a);
  ASSERT_TRUE(ork::ref::matmul_int8(a, w, want, {kSlicesM, kSlicesK, kSlicesN}).ok());
  const std::vector<uint8_t> pa = pack_int4_values(a);
  EXPECT_EQ(ork_matmul(dev_, back, pa.data(), kSlicesM, got.data(), nullptr), ORK_OK) << ork_last_error();
  EXPECT_EQ(got, want);
  ork_weights_destroy(back);
}

INSTANTIATE_TEST_SUITE_P(Devices, Int4Slices, ::testing::Values("emu", "emu-rocket", "cpu"),
                         [](const auto& info) { return std::string(info.param) == "emu-rocket" ? std::string("emu_rocket")
                                                                                               : std::string(info.param); });

}  // namespace

namespace {

ork_tensor slices_host(void* p) {
  ork_tensor t{};
  t.host = p;
  return t;
}

}  // namespace

// Wide-sliced weights shared by every call pattern at once: a job in flight, a blocking call,
// a batch of two calls submitted and replayed with new A contents; every C cell exact.
TEST_P(Int4Slices, WideWeightsSharedBySyncAsyncAndBatchReplays) {
  const auto w = ork::test::draw_int4_values(kSlicesK * kSlicesN, 11, -2, 5);
  const std::vector<uint8_t> pw = pack_int4_values(w);
  ASSERT_EQ(ork_weights_create(dev_, ORK_DTYPE_INT4, kSlicesK, kSlicesN, pw.data(), &w_), ORK_OK) << ork_last_error();
  if (npu()) {
    ASSERT_GT(w_->resident->slice_k(), 1024);
  }
  std::vector<std::vector<int8_t>> a;
  for (unsigned s = 0; s < 5; ++s) a.push_back(ork::test::draw_int4_values(kSlicesM * kSlicesK, 20 + s, -8, 16));
  auto want = [&](const std::vector<int8_t>& av) {
    std::vector<int32_t> c(static_cast<size_t>(kSlicesM * kSlicesN));
    EXPECT_TRUE(ork::ref::matmul_int8(av, w, c, {kSlicesM, kSlicesK, kSlicesN}).ok());
    return c;
  };
  std::vector<std::vector<uint8_t>> pa;
  for (const auto& av : a) pa.push_back(pack_int4_values(av));
  std::vector<std::vector<int32_t>> c(5, std::vector<int32_t>(static_cast<size_t>(kSlicesM * kSlicesN), 0x5a5a5a5a));
  const uint64_t before = saturated();

  ork_tensor t0 = slices_host(pa[0].data()), u0 = slices_host(c[0].data());
  ork_job* job = nullptr;
  ASSERT_EQ(ork_matmul_submit(dev_, w_, &t0, kSlicesM, &u0, nullptr, &job), ORK_OK) << ork_last_error();
  ASSERT_EQ(ork_matmul(dev_, w_, pa[1].data(), kSlicesM, c[1].data(), nullptr), ORK_OK) << ork_last_error();
  ork_batch* batch = nullptr;
  ASSERT_EQ(ork_batch_create(dev_, &batch), ORK_OK) << ork_last_error();
  ork_tensor t2 = slices_host(pa[2].data()), u2 = slices_host(c[2].data()), t3 = slices_host(pa[3].data()), u3 = slices_host(c[3].data());
  ASSERT_EQ(ork_batch_add_matmul(batch, w_, &t2, kSlicesM, &u2, nullptr), ORK_OK) << ork_last_error();
  ASSERT_EQ(ork_batch_add_matmul(batch, w_, &t3, kSlicesM, &u3, nullptr), ORK_OK) << ork_last_error();
  for (int round = 0; round < 2; ++round) {
    if (round == 1) {  // the replay reads A again: same memory, new contents
      const std::vector<uint8_t> next = pack_int4_values(a[4]);
      std::copy(next.begin(), next.end(), pa[2].begin());
    }
    ork_job* bj = nullptr;
    ASSERT_EQ(ork_batch_submit(batch, &bj), ORK_OK) << ork_last_error();
    ASSERT_EQ(ork_job_wait(bj, -1), ORK_OK) << ork_last_error();
    ork_job_release(bj);
    EXPECT_EQ(c[2], want(round == 0 ? a[2] : a[4])) << "round " << round;
    EXPECT_EQ(c[3], want(a[3])) << "round " << round;
  }
  ASSERT_EQ(ork_job_wait(job, -1), ORK_OK) << ork_last_error();
  ork_job_release(job);
  ork_batch_destroy(batch);
  EXPECT_EQ(c[0], want(a[0]));
  EXPECT_EQ(c[1], want(a[1]));
  EXPECT_EQ(saturated(), before);
}
