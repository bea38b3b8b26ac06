// The quantised C API's argument checks and messages, import/export, and a device that stays
// usable after every refusal.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <initializer_list>
#include <limits>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "ork/ork.h"
#include "lib/quant/reference.h"
#include "lib/ref/workers.h"
#include "tests/support/quant_test_util.h"

namespace {

using ork::quant::testing::first_difference;
using ork::quant::testing::random_matrix;

class QuantCapi : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override { ASSERT_EQ(ork_device_open(GetParam(), &dev_), ORK_OK) << ork_last_error(); }
  void TearDown() override { ork_device_close(dev_); }

  ork_qweights* create(int bits, int group, int64_t k = 64, int64_t n = 32) {
    const auto w = random_matrix(k, n, 5);
    ork_quant_options o{sizeof(o), bits, group};
    ork_qweights* q = nullptr;
    EXPECT_EQ(ork_qweights_create(dev_, w.data(), k, n, &o, &q), ORK_OK) << ork_last_error();
    return q;
  }
  // A valid matmul after a refusal: the device and the weights still work.
  void expect_usable(ork_qweights* q, int64_t k = 64, int64_t n = 32) {
    const auto a = random_matrix(2, k, 6);
    std::vector<float> c(static_cast<size_t>(2 * n));
    EXPECT_EQ(ork_qmatmul(dev_, q, a.data(), 2, c.data(), nullptr), ORK_OK) << ork_last_error();
  }
  ork_device* dev_ = nullptr;
};

TEST_P(QuantCapi, CreateRefusesBadOptionsByName) {
  const std::vector<float> w(64 * 32, 1.0f);
  ork_qweights* q = reinterpret_cast<ork_qweights*>(&q);
  ork_quant_options o{sizeof(o), 3, 0};
  EXPECT_EQ(ork_qweights_create(dev_, w.data(), 64, 32, &o, &q), ORK_E_INVALID_ARGUMENT);
  EXPECT_EQ(q, nullptr);
  EXPECT_STREQ(ork_last_error(), "ork_qweights_create: weight_bits = 3: expected 8 or 4");
  o = {sizeof(o), 8, 48};
  EXPECT_EQ(ork_qweights_create(dev_, w.data(), 64, 32, &o, &q), ORK_E_INVALID_ARGUMENT);
  EXPECT_STREQ(ork_last_error(), "ork_qweights_create: group = 48: expected 0 (per-channel), 32, 64 or 128");
  o = {sizeof(o) + 4, 8, 0};
  EXPECT_EQ(ork_qweights_create(dev_, w.data(), 64, 32, &o, &q), ORK_E_INVALID_ARGUMENT);
  EXPECT_NE(std::string(ork_last_error()).find("struct_size"), std::string::npos);
  EXPECT_EQ(ork_qweights_create(dev_, w.data(), 0, 32, nullptr, &q), ORK_E_INVALID_ARGUMENT);
  EXPECT_STREQ(ork_last_error(), "ork_qweights_create: K = 0: must be in 1..16777216");
  EXPECT_EQ(ork_qweights_create(dev_, nullptr, 64, 32, nullptr, &q), ORK_E_INVALID_ARGUMENT);
  EXPECT_STREQ(ork_last_error(), "ork_qweights_create: w is NULL");
  EXPECT_EQ(ork_qweights_create(nullptr, w.data(), 64, 32, nullptr, &q), ORK_E_INVALID_ARGUMENT);
  EXPECT_EQ(ork_qweights_create(dev_, w.data(), 64, 32, nullptr, nullptr), ORK_E_INVALID_ARGUMENT);
}

TEST_P(QuantCapi, PerChannelKLimit) {
  const int64_t k = 131073;
  const std::vector<float> w(static_cast<size_t>(k), 1.0f);
  ork_qweights* q = nullptr;
  EXPECT_EQ(ork_qweights_create(dev_, w.data(), k, 1, nullptr, &q), ORK_E_INVALID_ARGUMENT);
  EXPECT_NE(std::string(ork_last_error()).find("K = 131073: per-channel scales allow K <= 131072"), std::string::npos)
      << ork_last_error();
}

TEST_P(QuantCapi, NonFiniteInputsNamedByPosition) {
  auto w = random_matrix(64, 32, 1);
  w[2 * 32 + 3] = std::numeric_limits<float>::quiet_NaN();
  ork_qweights* q = nullptr;
  EXPECT_EQ(ork_qweights_create(dev_, w.data(), 64, 32, nullptr, &q), ORK_E_INVALID_ARGUMENT);
  EXPECT_STREQ(ork_last_error(), "ork_qweights_create: W[2][3] = nan: inputs must be finite");
  q = create(8, 32);
  auto a = random_matrix(3, 64, 2);
  a[1 * 64 + 0] = -std::numeric_limits<float>::infinity();
  std::vector<float> c(3 * 32);
  EXPECT_EQ(ork_qmatmul(dev_, q, a.data(), 3, c.data(), nullptr), ORK_E_INVALID_ARGUMENT);
  EXPECT_STREQ(ork_last_error(), "ork_qmatmul: A[1][0] = -inf: inputs must be finite");
  expect_usable(q);
  ork_qweights_destroy(q);
}

TEST_P(QuantCapi, MatmulRefusesBadOptionsByName) {
  ork_qweights* q8 = create(8, 0);
  const auto a = random_matrix(2, 64, 3);
  std::vector<float> c(2 * 32);
  ork_qmatmul_options o{sizeof(o), 5, 0, 0};
  EXPECT_EQ(ork_qmatmul(dev_, q8, a.data(), 2, c.data(), &o), ORK_E_INVALID_ARGUMENT);
  EXPECT_STREQ(ork_last_error(), "ork_qmatmul: activation_bits = 5: expected 8 or 4");
  o = {sizeof(o), 8, 2, 0};
  EXPECT_EQ(ork_qmatmul(dev_, q8, a.data(), 2, c.data(), &o), ORK_E_INVALID_ARGUMENT);
  EXPECT_STREQ(ork_last_error(), "ork_qmatmul: per_row = 2: expected 0 or 1");
  o = {sizeof(o), 8, 0, 4};
  EXPECT_EQ(ork_qmatmul(dev_, q8, a.data(), 2, c.data(), &o), ORK_E_INVALID_ARGUMENT);
  EXPECT_NE(std::string(ork_last_error()).find("cores = 4"), std::string::npos);
  o = {sizeof(o), 4, 0, 0};  // w8a4 is not a mode
  EXPECT_EQ(ork_qmatmul(dev_, q8, a.data(), 2, c.data(), &o), ORK_E_INVALID_ARGUMENT);
  EXPECT_STREQ(ork_last_error(), "ork_qmatmul: int4 activations with int8 weights (w8a4) is not a mode: use w8a8, "
                                 "w4a8 or w4a4");
  EXPECT_EQ(ork_qmatmul(dev_, q8, a.data(), 0, c.data(), nullptr), ORK_E_INVALID_ARGUMENT);
  EXPECT_EQ(ork_qmatmul(dev_, q8, nullptr, 2, c.data(), nullptr), ORK_E_INVALID_ARGUMENT);
  EXPECT_STREQ(ork_last_error(), "ork_qmatmul: A is NULL");
  EXPECT_EQ(ork_qmatmul(dev_, nullptr, a.data(), 2, c.data(), nullptr), ORK_E_INVALID_ARGUMENT);
  ork_device* other = nullptr;
  ASSERT_EQ(ork_device_open("cpu", &other), ORK_OK);
  EXPECT_EQ(ork_qmatmul(other, q8, a.data(), 2, c.data(), nullptr), ORK_E_INVALID_ARGUMENT);
  EXPECT_STREQ(ork_last_error(), "ork_qmatmul: the weights belong to another device");
  ork_device_close(other);
  expect_usable(q8);
  ork_qweights_destroy(q8);
}

// Export, then import the same codes and scales: the same weights, the same bytes out.
TEST_P(QuantCapi, ExportImportRoundTrip) {
  for (auto [bits, group] : {std::pair{8, 0}, {4, 32}, {4, 128}, {8, 64}}) {
    const int64_t k = 200, n = 33;  // K*N odd: int4 codes end in a half byte
    ork_qweights* q = create(bits, group, k, n);
    ASSERT_NE(q, nullptr);
    const int64_t groups = ork_qweights_groups(q);
    EXPECT_EQ(groups, group == 0 ? 1 : (k + group - 1) / group);
    const size_t code_bytes = bits == 8 ? size_t{k * n} : size_t{(k * n + 1) / 2};
    std::vector<uint8_t> codes(code_bytes);
    std::vector<float> scales(static_cast<size_t>(groups * n));
    EXPECT_EQ(ork_qweights_export(q, codes.data(), code_bytes - 1, nullptr, 0), ORK_E_INVALID_ARGUMENT);
    ASSERT_EQ(ork_qweights_export(q, codes.data(), codes.size(), scales.data(), scales.size()), ORK_OK);
    ork_quant_options o{sizeof(o), bits, group};
    ork_qweights* q2 = nullptr;
    ASSERT_EQ(ork_qweights_import(dev_, codes.data(), scales.data(), k, n, &o, &q2), ORK_OK) << ork_last_error();
    const auto a = random_matrix(3, k, 8);
    std::vector<float> c1(3 * n), c2(3 * n);
    ASSERT_EQ(ork_qmatmul(dev_, q, a.data(), 3, c1.data(), nullptr), ORK_OK);
    ASSERT_EQ(ork_qmatmul(dev_, q2, a.data(), 3, c2.data(), nullptr), ORK_OK);
    EXPECT_EQ(first_difference(c2, c1, n), "");
    ork_qweights_destroy(q);
    ork_qweights_destroy(q2);
  }
}

TEST_P(QuantCapi, ImportRefusesOutOfRangeCodes) {
  std::vector<int8_t> codes(64 * 32, 1);
  codes[5 * 32 + 7] = -128;
  const std::vector<float> scales(32, 0.1f);
  ork_qweights* q = nullptr;
  EXPECT_EQ(ork_qweights_import(dev_, codes.data(), scales.data(), 64, 32, nullptr, &q), ORK_E_INVALID_ARGUMENT);
  EXPECT_STREQ(ork_last_error(), "ork_qweights_import: codes[5][7] = -128: int8 codes must lie in [-127, 127]");
  EXPECT_EQ(ork_qweights_import(dev_, codes.data(), nullptr, 64, 32, nullptr, &q), ORK_E_INVALID_ARGUMENT);
  EXPECT_STREQ(ork_last_error(), "ork_qweights_import: scales is NULL");
}

// ork_qmatmul counts in the device's statistics like ork_matmul: two calls of one shape are
// one context build and one hit; the NPU backends report their submits and bytes, rknpu its
// device time, rocket none; a refused call counts nothing.
TEST_P(QuantCapi, StatsCountEveryCall) {
  const std::string name = GetParam();
  for (auto [bits, group] : {std::pair{8, 0}, {4, 32}}) {
    ork_qweights* q = create(bits, group);
    ASSERT_EQ(ork_device_reset_stats(dev_), ORK_OK);
    const auto a = random_matrix(2, 64, 9);
    std::vector<float> c(2 * 32);
    ASSERT_EQ(ork_qmatmul(dev_, q, a.data(), 2, c.data(), nullptr), ORK_OK) << ork_last_error();
    ASSERT_EQ(ork_qmatmul(dev_, q, a.data(), 2, c.data(), nullptr), ORK_OK) << ork_last_error();
    EXPECT_EQ(ork_qmatmul(dev_, q, a.data(), 0, c.data(), nullptr), ORK_E_INVALID_ARGUMENT);
    ork_stats s{};
    s.struct_size = sizeof s;
    ASSERT_EQ(ork_device_get_stats(dev_, &s), ORK_OK);
    SCOPED_TRACE(name + " w" + std::to_string(bits) + " group " + std::to_string(group));
    EXPECT_EQ(s.calls, 2u);
    EXPECT_GT(s.wall_ns, 0u);
    if (name == "cpu") {
      EXPECT_EQ(s.submits, 0u);
      EXPECT_GT(s.device_ns, 0u);  // the cpu is the device: its multiply
    } else {
      EXPECT_GE(s.submits, 2u);
      EXPECT_EQ(s.context_builds, 1u);
      EXPECT_EQ(s.context_hits, 1u);
      EXPECT_GT(s.pack_ns, 0u);
      EXPECT_GT(s.bytes_to_device, 0u);
      EXPECT_GT(s.bytes_from_device, 0u);
      if (name == "emu-rocket") {
        EXPECT_EQ(s.device_unknown_calls, 2u);
      } else {
        EXPECT_EQ(s.device_unknown_calls, 0u);
        EXPECT_GT(s.device_ns, 0u);
      }
    }
    ork_qweights_destroy(q);
  }
}

// options.stats (API version 4): each call's figures, which add up to the device's totals;
// a bad struct_size is refused by name before any work, and an older caller's smaller
// options struct (no stats field) still runs.
TEST_P(QuantCapi, PerCallStatsAddUpToTheTotals) {
  const std::string name = GetParam();
  ork_qweights* q = create(4, 32);  // two K-groups: two matmuls inside one call
  ASSERT_NE(q, nullptr);
  ASSERT_EQ(ork_device_reset_stats(dev_), ORK_OK);
  const auto a = random_matrix(2, 64, 9);
  std::vector<float> c(2 * 32);
  ork_stats one[2] = {};
  for (ork_stats& s : one) {
    s.struct_size = sizeof s;
    ork_qmatmul_options o{sizeof(o), 8, 0, 0, &s};
    ASSERT_EQ(ork_qmatmul(dev_, q, a.data(), 2, c.data(), &o), ORK_OK) << ork_last_error();
    EXPECT_EQ(s.struct_size, sizeof s);
    EXPECT_EQ(s.calls, 1u);
    EXPECT_GT(s.wall_ns, 0u);
  }
  ork_stats bad{};
  ork_qmatmul_options o{sizeof(o), 8, 0, 0, &bad};
  EXPECT_EQ(ork_qmatmul(dev_, q, a.data(), 2, c.data(), &o), ORK_E_INVALID_ARGUMENT);
  EXPECT_STREQ(ork_last_error(), "ork_qmatmul: options.stats.struct_size is 0: set it to the struct's sizeof");
  o.struct_size = offsetof(ork_qmatmul_options, stats);  // an API version 3 caller
  EXPECT_EQ(ork_qmatmul(dev_, q, a.data(), 2, c.data(), &o), ORK_OK) << ork_last_error();
  ork_stats total{};
  total.struct_size = sizeof total;
  ASSERT_EQ(ork_device_get_stats(dev_, &total), ORK_OK);
  EXPECT_EQ(total.calls, 3u);  // the refused call counts nothing
  if (name == "cpu") {
    EXPECT_EQ(one[0].submits, 0u);
    EXPECT_GT(one[0].device_ns, 0u);
  } else {
    EXPECT_EQ(one[0].context_builds, 1u);
    EXPECT_EQ(one[1].context_builds, 0u);
    EXPECT_EQ(one[1].context_hits, 1u);
    EXPECT_GE(one[0].submits, 1u);  // the K-groups go as K-slices of one job
    EXPECT_EQ(one[0].submits, one[1].submits);
    EXPECT_EQ(one[0].bytes_to_device, one[1].bytes_to_device);
    EXPECT_GT(one[0].bytes_to_device, 0u);
    EXPECT_EQ(total.submits, 3 * one[0].submits);
    EXPECT_EQ(total.bytes_from_device, 3 * one[0].bytes_from_device);
    EXPECT_EQ(one[0].device_unknown_calls, name == "emu-rocket" ? 1u : 0u);
    if (name != "emu-rocket") {
      EXPECT_GT(one[0].device_ns, 0u);
    }
  }
  EXPECT_GE(total.wall_ns, one[0].wall_ns + one[1].wall_ns);
  ork_qweights_destroy(q);
}

// The int8 copy an NPU device makes of quantised weights, sized before they exist: on emu
// the window gives it exactly that, rounded to 4 KiB pages (the fake kernel's figure), for
// per-channel, per-group and int4 weights, and for ggml blocks (Q8_0: group 32; Q4_0: 4-bit, 32).
uint64_t quant_window_used(ork_device* d) {
  ork_memory_info m{};
  m.struct_size = sizeof m;
  EXPECT_EQ(ork_device_memory(d, &m), ORK_OK) << ork_last_error();
  return m.window_bytes - m.window_free_bytes;
}

TEST(QuantPackedBytes, IsTheWindowTheWeightsTake) {
  for (const char* name : {"emu-rknpu", "emu-rocket"}) {
    ork_device* dev = nullptr;
    ASSERT_EQ(ork_device_open(name, &dev), ORK_OK) << ork_last_error();
    for (auto [bits, group] : {std::pair{8, 0}, std::pair{8, 32}, std::pair{4, 32}, std::pair{4, 0}, std::pair{8, 64}}) {
      for (auto [k, n] : {std::pair{64, 32}, std::pair{1536, 256}, std::pair{8960, 24}}) {
        SCOPED_TRACE(::testing::Message() << name << " bits " << bits << " group " << group << " K " << k << " N " << n);
        ork_quant_options o{sizeof(o), bits, group};
        uint64_t bytes = 0;
        ASSERT_EQ(ork_qweights_packed_bytes(k, n, &o, &bytes), ORK_OK) << ork_last_error();
        const auto w = random_matrix(k, n, 5);
        const uint64_t before = quant_window_used(dev);
        ork_qweights* q = nullptr;
        ASSERT_EQ(ork_qweights_create(dev, w.data(), k, n, &o, &q), ORK_OK) << ork_last_error();
        EXPECT_EQ(quant_window_used(dev) - before, (bytes + 4095) / 4096 * 4096);
        ork_qweights_destroy(q);
      }
    }
    ork_device_close(dev);
  }
  uint64_t a = 0, b = 0;  // NULL options: w8 per-channel
  ork_quant_options o{sizeof(o), 8, 0};
  ASSERT_EQ(ork_qweights_packed_bytes(256, 64, nullptr, &a), ORK_OK);
  ASSERT_EQ(ork_qweights_packed_bytes(256, 64, &o, &b), ORK_OK);
  EXPECT_EQ(a, b);
  EXPECT_GE(a, uint64_t{256 * 64});
}

TEST(QuantPackedBytes, RefusesBadArguments) {
  uint64_t bytes = 7;
  ork_quant_options o{sizeof(o), 6, 0};
  EXPECT_EQ(ork_qweights_packed_bytes(64, 32, &o, &bytes), ORK_E_INVALID_ARGUMENT);
  EXPECT_NE(std::string(ork_last_error()).find("weight_bits = 6"), std::string::npos) << ork_last_error();
  o = {sizeof(o), 8, 48};
  EXPECT_EQ(ork_qweights_packed_bytes(64, 32, &o, &bytes), ORK_E_INVALID_ARGUMENT);
  EXPECT_EQ(ork_qweights_packed_bytes(0, 32, nullptr, &bytes), ORK_E_INVALID_ARGUMENT);
  EXPECT_NE(std::string(ork_last_error()).find("K = 0"), std::string::npos) << ork_last_error();
  EXPECT_EQ(ork_qweights_packed_bytes(64, 32, nullptr, nullptr), ORK_E_INVALID_ARGUMENT);
  EXPECT_EQ(bytes, 7u);
}

// One quantised weights (K x N, groups of 32) shared by the calling thread and two more at
// once, each alternating short calls (1 and 4 rows: on the cpu device the vnni kernel) and
// longer ones (9, 16 and 40 rows: the amx tiles where the CPU has them), per-tensor and
// per-row scales, w4a8 and w4a4: every cell of every call is the reference's (lib/quant
// reference::qmatmul). `ms`: the rows of each thread's calls, in order. Returns the host
// threads each short call (up to 4 rows) ran on (ork_stats.cpu_threads).
std::vector<uint64_t> calls_from_threads_share_weights(ork_device* dev, int64_t k, int64_t n,
                                                       std::initializer_list<int64_t> ms) {
  const auto w = random_matrix(k, n, 5);
  ork_quant_options qo{sizeof(qo), 4, 32};
  ork_qweights* q = nullptr;
  EXPECT_EQ(ork_qweights_create(dev, w.data(), k, n, &qo, &q), ORK_OK) << ork_last_error();
  if (q == nullptr) return {};
  struct Call {
    int64_t m;
    int abits, per_row;
    std::vector<float> a, want, got;
    ork_stats stats;
  };
  std::vector<std::vector<Call>> per(3);
  uint32_t seed = 40;
  for (auto& calls : per)
    for (int64_t m : ms)
      for (int abits : {8, 4}) {
        Call c{m, abits, static_cast<int>(m % 2), random_matrix(m, k, ++seed), {}, {}, {}};
        const ork::quant::ActScheme as{abits == 8 ? ork::quant::Bits::int8 : ork::quant::Bits::int4, c.per_row == 1};
        auto want = ork::quant::reference::qmatmul(c.a, w, m, k, n, {ork::quant::Bits::int4, 32}, as);
        EXPECT_TRUE(want.ok());
        if (!want.ok()) return {};
        c.want = *want;
        c.got.assign(c.want.size(), -1.0f);
        c.stats.struct_size = sizeof c.stats;
        calls.push_back(std::move(c));
      }
  std::vector<int> failed(per.size(), 0);
  auto run = [&](size_t t) {
    for (Call& c : per[t]) {
      ork_qmatmul_options o{sizeof(o), c.abits, c.per_row, 0, &c.stats};
      if (ork_qmatmul(dev, q, c.a.data(), c.m, c.got.data(), &o) != ORK_OK) ++failed[t];
    }
  };
  std::thread t1(run, 1), t2(run, 2);
  run(0);
  t1.join();
  t2.join();
  std::vector<uint64_t> short_threads;
  for (size_t t = 0; t < per.size(); ++t) {
    EXPECT_EQ(failed[t], 0) << "thread " << t;
    for (const Call& c : per[t]) {
      EXPECT_EQ(first_difference(c.got, c.want, n), "") << k << " x " << n << ", thread " << t << " M = " << c.m
                                                        << " a" << c.abits << (c.per_row ? " per row" : " per tensor");
      if (c.m <= 4) short_threads.push_back(c.stats.cpu_threads);
    }
  }
  ork_qweights_destroy(q);
  return short_threads;
}

// K = 200 (a short last group of 8), N = 70 (off the 32-column strip): every device.
TEST_P(QuantCapi, ShortAndLongCallsFromThreadsShareWeights) {
  calls_from_threads_share_weights(dev_, 200, 70, {1, 16, 4, 40, 9});
}

// On the cpu device a short call takes int8's thread rule (a thread per 1 MiB of packed
// weights, lib/ref/split.h): at K = 1000 (a short last group of 8) x N = 3300 (off the strip)
// the weights pass 2 MiB (int4 codes two a byte), so each short call also runs on a kept worker while the other two
// calling threads run theirs on the same weights, and a 9-row call (the tiles where the CPU
// has AMX) between them. (Rows kept few: the scalar reference of every call took 55 s of
// build-san's CPU with the 70 rows of the test above.)
TEST(QuantCapiCpu, ShortCallsOnTwoWorkersShareWeightsWithOtherThreads) {
  ork_device* dev = nullptr;
  ASSERT_EQ(ork_device_open("cpu", &dev), ORK_OK) << ork_last_error();
  const std::vector<uint64_t> threads = calls_from_threads_share_weights(dev, 1000, 3300, {1, 9, 4});
  ork_device_close(dev);
  const auto want = static_cast<uint64_t>(std::min(2, ork::ref::detail::online_cpus()));
  ASSERT_EQ(threads.size(), 3u * 2 * 2);  // 3 threads x M = 1 and 4 x w4a8 and w4a4
  for (uint64_t t : threads) EXPECT_EQ(t, want);
}

INSTANTIATE_TEST_SUITE_P(Devices, QuantCapi, ::testing::Values("emu-rknpu", "emu-rocket", "cpu"));

}  // namespace
