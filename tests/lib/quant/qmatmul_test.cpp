// Every mode (w8a8, w4a8, w4a4) x {per-channel, group 32/64/128} x shapes x cores through the
// C API on emu-rknpu, emu-rocket and cpu: bit-identical to the reference (lib/quant/reference.h).
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "driver/common/cpu_features.h"
#include "lib/quant/qmatmul.h"
#include "lib/quant/reference.h"
#include "lib/ref/fast.h"
#include "ork/ork.h"
#include "tests/support/quant_test_util.h"
#include "tools/common/ork_handles.h"

namespace ork::quant {
namespace {

using testing::first_difference;
using testing::random_matrix;

using tools::DevicePtr;
using tools::QWeightsPtr;

DevicePtr open_qmatmul_device(const char* name) {
  ork_device* d = nullptr;
  EXPECT_EQ(ork_device_open(name, &d), ORK_OK) << ork_last_error();
  return DevicePtr(d);
}

struct QmatmulShape {
  int64_t m, k, n;
};
// Decode and prefill rows, K with and without a tail group (200 = 3 x 64 + 8, 130 = 128 + 2),
// N off the 32-column weight atom, K past one 64-row M-tile boundary case.
const QmatmulShape kQmatmulShapes[] = {{1, 64, 32}, {3, 200, 40}, {5, 130, 33}, {17, 256, 64}, {65, 96, 8}};
const int64_t kGroups[] = {0, 32, 64, 128};

struct Mode {
  int wbits, abits;
};

// Runs one case on `dev` and compares with the reference; returns "" or the mismatch.
std::string run_case(ork_device* dev, Mode mode, int64_t group, QmatmulShape s, int cores, bool per_row, uint32_t seed) {
  const auto w = random_matrix(s.k, s.n, seed);
  const auto a = random_matrix(s.m, s.k, seed + 1);
  ork_quant_options qo{sizeof(qo), mode.wbits, static_cast<int32_t>(group)};
  ork_qweights* raw = nullptr;
  if (ork_qweights_create(dev, w.data(), s.k, s.n, &qo, &raw) != ORK_OK) return ork_last_error();
  QWeightsPtr qw(raw);
  std::vector<float> c(static_cast<size_t>(s.m * s.n), -1.0f);
  ork_qmatmul_options mo{sizeof(mo), mode.abits, per_row ? 1 : 0, cores};
  if (ork_qmatmul(dev, qw.get(), a.data(), s.m, c.data(), &mo) != ORK_OK) return ork_last_error();
  const WeightScheme ws{mode.wbits == 8 ? Bits::int8 : Bits::int4, group};
  const ActScheme as{mode.abits == 8 ? Bits::int8 : Bits::int4, per_row};
  auto want = reference::qmatmul(a, w, s.m, s.k, s.n, ws, as);
  if (!want) return want.error().message;
  return first_difference(c, *want, s.n);
}

class QuantBackends : public ::testing::TestWithParam<const char*> {};

TEST_P(QuantBackends, EveryModeMatchesTheReference) {
  DevicePtr dev = open_qmatmul_device(GetParam());
  ASSERT_TRUE(dev);
  ork_device_info info{};
  ASSERT_EQ(ork_device_get_info(dev.get(), &info), ORK_OK);
  uint32_t seed = 100;
  for (Mode mode : {Mode{8, 8}, Mode{4, 8}, Mode{4, 4}})
    for (int64_t group : kGroups)
      for (QmatmulShape s : kQmatmulShapes)
        for (int cores = 1; cores <= info.cores; ++cores) {
          const bool per_row = (seed % 2) == 0;
          const std::string diff = run_case(dev.get(), mode, group, s, cores, per_row, seed++);
          ASSERT_EQ(diff, "") << GetParam() << " w" << mode.wbits << "a" << mode.abits << " group " << group
                              << " " << s.m << "x" << s.k << "x" << s.n << " cores " << cores
                              << (per_row ? " per-row" : " per-tensor");
        }
}

INSTANTIATE_TEST_SUITE_P(Devices, QuantBackends, ::testing::Values("emu-rknpu", "emu-rocket", "cpu"));

// w4a4 and w4a8 from the same weights on one device: the int8 copy (widened) and the native
// int4 copy are separate, and each matches the reference.
TEST(QuantW4, BothActivationWidthsFromOneWeights) {
  for (const char* name : {"emu-rknpu", "emu-rocket", "cpu"}) {
    DevicePtr dev = open_qmatmul_device(name);
    const int64_t m = 9, k = 200, n = 70;
    for (int64_t group : kGroups) {
      const auto w = random_matrix(k, n, 31);
      ork_quant_options qo{sizeof(qo), 4, static_cast<int32_t>(group)};
      ork_qweights* raw = nullptr;
      ASSERT_EQ(ork_qweights_create(dev.get(), w.data(), k, n, &qo, &raw), ORK_OK) << ork_last_error();
      QWeightsPtr qw(raw);
      for (int abits : {4, 8, 4}) {
        const auto a = random_matrix(m, k, 32 + abits);
        std::vector<float> c(static_cast<size_t>(m * n));
        ork_qmatmul_options mo{sizeof(mo), abits, 0, 1};
        ASSERT_EQ(ork_qmatmul(dev.get(), qw.get(), a.data(), m, c.data(), &mo), ORK_OK) << ork_last_error();
        auto want = reference::qmatmul(a, w, m, k, n, {Bits::int4, group}, {abits == 8 ? Bits::int8 : Bits::int4, false});
        ASSERT_EQ(first_difference(c, *want, n), "") << name << " group " << group << " a" << abits;
      }
    }
  }
}

// The same weights used many times, several M: the contexts kept per (M, cores) stay right.
TEST(QuantBackendsReuse, RepeatedCallsAndShapes) {
  DevicePtr dev = open_qmatmul_device("emu-rknpu");
  const int64_t k = 160, n = 48;
  const auto w = random_matrix(k, n, 77);
  ork_quant_options qo{sizeof(qo), 4, 32};
  ork_qweights* raw = nullptr;
  ASSERT_EQ(ork_qweights_create(dev.get(), w.data(), k, n, &qo, &raw), ORK_OK) << ork_last_error();
  QWeightsPtr qw(raw);
  uint32_t seed = 900;
  for (int64_t m : {1, 7, 1, 33, 2, 3, 4, 5, 7, 1}) {  // more shapes than the 4 kept
    const auto a = random_matrix(m, k, seed++);
    std::vector<float> c(static_cast<size_t>(m * n));
    ASSERT_EQ(ork_qmatmul(dev.get(), qw.get(), a.data(), m, c.data(), nullptr), ORK_OK) << ork_last_error();
    auto want = reference::qmatmul(a, w, m, k, n, {Bits::int4, 32}, {Bits::int8, false});
    ASSERT_EQ(first_difference(c, *want, n), "") << "M = " << m;
  }
}

}  // namespace
}  // namespace ork::quant

namespace ork::quant {
namespace {

// Wide K: per-channel past the full-K limit (4096) goes through the runner's K-slices, whose
// int32 partials the host adds; groups of 128 at the same K are 65 separate matmuls.
TEST(QuantBackendsWideK, SlicedPerChannelAndManyGroups) {
  const QmatmulShape s{4, 8192 + 40, 64};
  for (const char* name : {"emu-rknpu", "emu-rocket", "cpu"})
    for (int64_t group : {0, 128})
      for (Mode mode : {Mode{8, 8}, Mode{4, 4}}) {  // w4a4 per-channel: the runner's 480-wide int4 slices
        DevicePtr dev = open_qmatmul_device(name);
        const std::string diff = run_case(dev.get(), mode, group, s, name[0] == 'c' ? 1 : 3, true, 4242);
        ASSERT_EQ(diff, "") << name << " w" << mode.wbits << "a" << mode.abits << " group " << group;
      }
}

// The cpu device's per-channel path (group_matmul.cpp: lib/ref's int8 call, each chunk of
// columns dequantised by the thread that computed it): on every lib/ref tier (lower ones
// forced by hiding CPU features before the weights are packed), 1 and 2 threads, M through
// the rows kernel and full tiles, K and N off the kernels' widths (N past one 128-column
// chunk), w8a8 and w4a8, per-row and per-tensor: the reference's bytes. Then every code at
// its limit over a long K (the largest sums).
TEST(QuantCpuPerChannel, EveryTierAndThreadCountIsTheReference) {
  const uint32_t masks[] = {0, cpu::kAmxInt8, cpu::kAmxInt8 | cpu::kAvx512f | cpu::kAvx512vnni,
                            cpu::kAmxInt8 | cpu::kAvx512f | cpu::kAvx512vnni | cpu::kAvx2};
  const QmatmulShape shapes[] = {{1, 45, 33}, {5, 300, 130}, {9, 64, 257}, {70, 131, 200}};
  uint32_t seed = 3000;
  for (uint32_t mask : masks) {
    cpu::HiddenCpuFeatures hidden(mask);
    for (QmatmulShape s : shapes)
      for (Bits wb : {Bits::int8, Bits::int4}) {
        const auto w = random_matrix(s.k, s.n, ++seed);
        const auto a = random_matrix(s.m, s.k, ++seed);
        auto qw = QuantWeights::quantise(w, s.k, s.n, {wb, 0});
        ASSERT_TRUE(qw.ok());
        auto q = QuantMatmul::create_cpu(std::move(*qw));
        ASSERT_TRUE(q.ok()) << q.error().message;
        for (int threads : {1, 2}) {
          const ActScheme as{Bits::int8, threads == 2};
          std::vector<float> c(static_cast<size_t>(s.m * s.n), -1.0f);
          ASSERT_TRUE((*q)->run(a, s.m, c, {.act = as, .threads = threads}).ok());
          auto want = reference::qmatmul(a, w, s.m, s.k, s.n, {wb, 0}, as);
          ASSERT_TRUE(want.ok());
          ASSERT_EQ(first_difference(c, *want, s.n), "") << ref::isa_name(ref::best_isa()) << " threads " << threads
                                                         << " " << s.m << "x" << s.k << "x" << s.n;
        }
      }
  }
}

TEST(QuantCpuPerChannel, LargestSumsStayExact) {
  const int64_t m = 3, k = 4096 + 5, n = 150;
  std::vector<float> w(static_cast<size_t>(k * n), 1.0f), a(static_cast<size_t>(m * k), -1.0f);
  for (int64_t j = 0; j < n; j += 2) w[static_cast<size_t>(j)] = -1.0f;  // column scales stay 1/127
  for (int64_t j = 0; j < k; ++j) a[static_cast<size_t>(k + j)] = 1.0f;  // row 1 the other sign
  for (Bits wb : {Bits::int8, Bits::int4}) {
    auto qw = QuantWeights::quantise(w, k, n, {wb, 0});
    ASSERT_TRUE(qw.ok());
    auto q = QuantMatmul::create_cpu(std::move(*qw));
    ASSERT_TRUE(q.ok());
    for (int threads : {1, 2}) {
      std::vector<float> c(static_cast<size_t>(m * n));
      ASSERT_TRUE((*q)->run(a, m, c, {.act = {}, .threads = threads}).ok());
      auto want = reference::qmatmul(a, w, m, k, n, {wb, 0}, {});
      ASSERT_EQ(first_difference(c, *want, n), "") << "threads " << threads;
    }
  }
}

}  // namespace
}  // namespace ork::quant
