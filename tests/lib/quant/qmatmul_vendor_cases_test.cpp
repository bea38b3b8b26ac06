// The vendor runtime's reported failures (docs/hardware.md section 12,
// airockchip/rknn-toolkit2#550): INT8 -> INT32 with per-channel B returns all zeros; FP32
// output rejects per-channel B; per-group B with FP32 output returns zeros. Ours: the same
// cases return the right, non-zero results on every backend.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <vector>

#include "lib/api/device.h"
#include "lib/quant/qmatmul.h"
#include "lib/quant/reference.h"
#include "lib/ref/oracle.h"
#include "ork/ork.h"
#include "tests/support/quant_test_util.h"
#include "tools/common/ork_handles.h"

namespace ork::quant {
namespace {

using testing::first_difference;
using testing::random_matrix;

tools::DevicePtr open_vendor_device(const char* name) {
  ork_device* d = nullptr;
  EXPECT_EQ(ork_device_open(name, &d), ORK_OK) << ork_last_error();
  return tools::DevicePtr(d);
}

size_t nonzero(const std::vector<float>& x) {
  size_t c = 0;
  for (float v : x) c += v != 0.0f;
  return c;
}

class VendorCases : public ::testing::TestWithParam<const char*> {};

// INT8 x INT8 -> INT32 with per-channel B scales: the int32 accumulators themselves, as the
// vendor's mode returns them (before any dequantisation): equal to the integer oracle over
// the codes, and not zero.
TEST_P(VendorCases, Int8PerChannelInt32Output) {
  auto dev = open_vendor_device(GetParam());
  for (auto [m, k, n] : {std::tuple<int64_t, int64_t, int64_t>{1, 1024, 64}, {4, 256, 64}, {64, 512, 32}}) {
    const auto w = random_matrix(k, n, 41);
    const auto a = random_matrix(m, k, 42);
    auto qw = QuantWeights::quantise(w, k, n, {Bits::int8, 0});
    ASSERT_TRUE(qw.ok());
    auto qa = quantise_activations(a, m, k, {Bits::int8, false});
    ASSERT_TRUE(qa.ok());
    std::vector<int8_t> codes(static_cast<size_t>(k * n));
    qw->widen_rows(0, k, codes);
    std::vector<int32_t> want(static_cast<size_t>(m * n));
    ASSERT_TRUE(ref::matmul_int8(qa->codes, codes, want, ref::Dims{m, k, n}).ok());
    auto mm = dev->backend->make_quant(std::move(*qw));  // the device's kind, NPU or cpu
    ASSERT_TRUE(mm.ok()) << mm.error().message;
    for (int cores = 1; cores <= dev->info.cores; ++cores) {
      std::vector<int32_t> acc(static_cast<size_t>(m * n), 0);
      auto s = (*mm)->group_sum(*qa, 0, acc, cores);
      ASSERT_TRUE(s.ok()) << s.error().message;
      EXPECT_EQ(acc, want) << m << "x" << k << "x" << n << " cores " << cores;
      size_t zeros = 0;
      for (int32_t v : acc) zeros += v == 0;
      EXPECT_LT(zeros, acc.size() / 10) << "mostly zeros: the vendor's failure";
    }
  }
}

// FP32 output with per-channel B (rejected by the vendor) and with per-group B (zeros from
// the vendor): the reference's bytes, non-zero, and close to the float64 product.
TEST_P(VendorCases, Fp32OutputPerChannelAndPerGroup) {
  auto dev = open_vendor_device(GetParam());
  const int64_t m = 8, k = 512, n = 64;
  const auto w = random_matrix(k, n, 51);
  const auto a = random_matrix(m, k, 52);
  for (int64_t group : {0, 32, 64, 128}) {
    ork_quant_options qo{sizeof(qo), 8, static_cast<int32_t>(group)};
    ork_qweights* qw = nullptr;
    ASSERT_EQ(ork_qweights_create(dev.get(), w.data(), k, n, &qo, &qw), ORK_OK) << ork_last_error();
    std::vector<float> c(static_cast<size_t>(m * n), 0.0f);
    const ork_status st = ork_qmatmul(dev.get(), qw, a.data(), m, c.data(), nullptr);
    ork_qweights_destroy(qw);
    ASSERT_EQ(st, ORK_OK) << ork_last_error();
    auto want = reference::qmatmul(a, w, m, k, n, {Bits::int8, group}, {Bits::int8, false});
    ASSERT_EQ(first_difference(c, *want, n), "") << "group " << group;
    EXPECT_EQ(nonzero(c), c.size()) << "group " << group;
    double err2 = 0, ref2 = 0;  // relative RMS error against float64
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double exact = 0;
        for (int64_t x = 0; x < k; ++x) exact += double{a[static_cast<size_t>(i * k + x)]} * w[static_cast<size_t>(x * n + j)];
        err2 += (c[static_cast<size_t>(i * n + j)] - exact) * (c[static_cast<size_t>(i * n + j)] - exact);
        ref2 += exact * exact;
      }
    EXPECT_LT(std::sqrt(err2 / ref2), 0.02) << "group " << group;  // w8a8 on Gaussian data: ~0.01
  }
}

INSTANTIATE_TEST_SUITE_P(Devices, VendorCases, ::testing::Values("emu-rknpu", "emu-rocket", "cpu"));

}  // namespace
}  // namespace ork::quant
