// The emulator's prepared-weight cache seen from the public API (driver/emu/npu/
// weight_cache.h, counted in ork_stats): repeated calls on resident weights hit it; weights
// destroyed and made again (often at the same IOVA) are never answered from it;
// ORK_EMU_WEIGHT_CACHE=off gives the same bytes; a bad value is a named error; each device
// has its own cache, so one device's bound never changes another's. Results are checked
// against the oracle.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "lib/ref/oracle.h"
#include "ork/ork.h"
#include "lib/ref/random.h"

namespace {

using ork::ref::random_int8;

constexpr int64_t kCacheM = 300, kCacheK = 2048, kCacheN = 200;  // 3 M-tiles of 128 rows at K = 2048

ork_stats stats_of(ork_device* dev) {
  ork_stats s{};
  s.struct_size = sizeof s;
  EXPECT_EQ(ork_device_get_stats(dev, &s), ORK_OK) << ork_last_error();
  return s;
}

std::vector<int32_t> oracle(const std::vector<int8_t>& a, const std::vector<int8_t>& w, int64_t m) {
  std::vector<int32_t> c(m * kCacheN);
  EXPECT_TRUE(ork::ref::matmul_int8(a, w, c, {m, kCacheK, kCacheN}).ok());
  return c;
}

class WeightCacheApi : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override { ASSERT_EQ(ork_device_open(GetParam(), &dev_), ORK_OK) << ork_last_error(); }
  void TearDown() override { ork_device_close(dev_); }
  std::vector<int32_t> run(const ork_weights* w, const std::vector<int8_t>& a, int64_t m, int cores) {
    std::vector<int32_t> c(m * kCacheN, 0x5a5a5a5a);
    ork_matmul_options o{};
    o.struct_size = sizeof o;
    o.cores = cores;
    EXPECT_EQ(ork_matmul(dev_, w, a.data(), m, c.data(), &o), ORK_OK) << ork_last_error();
    return c;
  }
  ork_device* dev_ = nullptr;
};

TEST_P(WeightCacheApi, RepeatedCallsHitAndStayExact) {
  const auto w = random_int8(kCacheK * kCacheN, 1);
  ork_weights* wh = nullptr;
  ASSERT_EQ(ork_weights_create(dev_, ORK_DTYPE_INT8, kCacheK, kCacheN, w.data(), &wh), ORK_OK) << ork_last_error();
  const auto before = stats_of(dev_);
  for (int i = 0; i < 3; ++i) {
    const auto a = random_int8(kCacheM * kCacheK, 10 + i);
    const auto want = oracle(a, w, kCacheM);  // once per input: the scalar oracle is most of an ASan run
    for (int cores : {1, 3}) EXPECT_EQ(run(wh, a, kCacheM, cores), want) << "call " << i << " cores " << cores;
  }
  EXPECT_GT(stats_of(dev_).weight_cache_hits, before.weight_cache_hits);
  ork_weights_destroy(wh);
}

// A layer's weights replaced by the next layer's: the new BO may sit at the old IOVA with
// the old shape, but it is another BO - every call computes with the weights it was given.
TEST_P(WeightCacheApi, NewWeightsAtTheSameShapeAreNeverStale) {
  const auto a = random_int8(kCacheM * kCacheK, 20);
  for (uint32_t layer = 0; layer < 4; ++layer) {
    const auto w = random_int8(kCacheK * kCacheN, 100 + layer);
    ork_weights* wh = nullptr;
    ASSERT_EQ(ork_weights_create(dev_, ORK_DTYPE_INT8, kCacheK, kCacheN, w.data(), &wh), ORK_OK) << ork_last_error();
    EXPECT_EQ(run(wh, a, kCacheM, 3), oracle(a, w, kCacheM)) << "layer " << layer;
    EXPECT_EQ(run(wh, a, 1, 1), oracle(std::vector<int8_t>(a.begin(), a.begin() + kCacheK), w, 1)) << "layer " << layer;
    ork_weights_destroy(wh);
  }
}

INSTANTIATE_TEST_SUITE_P(Emu, WeightCacheApi, ::testing::Values("emu-rknpu", "emu-rocket"));

TEST(WeightCacheEnv, OffGivesTheSameBytesAndBadValuesAreNamed) {
  const auto w = random_int8(kCacheK * kCacheN, 3), a = random_int8(kCacheM * kCacheK, 4);
  ASSERT_EQ(setenv("ORK_EMU_WEIGHT_CACHE", "off", 1), 0);
  ork_device* dev = nullptr;
  ASSERT_EQ(ork_device_open("emu", &dev), ORK_OK) << ork_last_error();
  ork_weights* wh = nullptr;
  ASSERT_EQ(ork_weights_create(dev, ORK_DTYPE_INT8, kCacheK, kCacheN, w.data(), &wh), ORK_OK);
  std::vector<int32_t> c(kCacheM * kCacheN);
  const auto want = oracle(a, w, kCacheM);
  const auto before = stats_of(dev);
  for (int i = 0; i < 2; ++i) {
    std::fill(c.begin(), c.end(), 0x5a5a5a5a);
    ASSERT_EQ(ork_matmul(dev, wh, a.data(), kCacheM, c.data(), nullptr), ORK_OK) << ork_last_error();
    EXPECT_EQ(c, want) << "call " << i;
  }
  EXPECT_EQ(stats_of(dev).weight_cache_hits, before.weight_cache_hits);  // nothing kept, nothing hit
  EXPECT_EQ(stats_of(dev).weight_cache_misses, before.weight_cache_misses);
  ork_weights_destroy(wh);
  ork_device_close(dev);
  ASSERT_EQ(setenv("ORK_EMU_WEIGHT_CACHE", "sometimes", 1), 0);
  EXPECT_EQ(ork_device_open("emu", &dev), ORK_E_INVALID_ARGUMENT);
  EXPECT_NE(std::string(ork_last_error()).find("ORK_EMU_WEIGHT_CACHE='sometimes': expected 'on' or 'off'"),
            std::string::npos) << ork_last_error();
  unsetenv("ORK_EMU_WEIGHT_CACHE");
}

// Two emulated devices in one process: the first opened with no room for prepared weights
// (ORK_EMU_WEIGHT_CACHE_BYTES=0), the second with the default bound. A process-wide cache
// would take the second device's bound and let the first one hit; each device's own
// cache keeps the first at zero hits, while the second hits, with every result exact.
TEST(WeightCacheEnv, EachDeviceHasItsOwnCache) {
  const auto w = random_int8(kCacheK * kCacheN, 5), a = random_int8(kCacheM * kCacheK, 6);
  ASSERT_EQ(setenv("ORK_EMU_WEIGHT_CACHE_BYTES", "0", 1), 0);
  ork_device* small = nullptr;
  ASSERT_EQ(ork_device_open("emu-rknpu", &small), ORK_OK) << ork_last_error();
  unsetenv("ORK_EMU_WEIGHT_CACHE_BYTES");
  ork_device* big = nullptr;
  ASSERT_EQ(ork_device_open("emu-rknpu", &big), ORK_OK) << ork_last_error();
  ork_weights* ws = nullptr;
  ork_weights* wb = nullptr;
  ASSERT_EQ(ork_weights_create(small, ORK_DTYPE_INT8, kCacheK, kCacheN, w.data(), &ws), ORK_OK) << ork_last_error();
  ASSERT_EQ(ork_weights_create(big, ORK_DTYPE_INT8, kCacheK, kCacheN, w.data(), &wb), ORK_OK) << ork_last_error();
  std::vector<int32_t> c(kCacheM * kCacheN);
  const auto want = oracle(a, w, kCacheM);  // one input, one weights: one oracle for the six calls
  for (int i = 0; i < 3; ++i) {
    for (auto [dev, wh] : {std::pair{small, ws}, std::pair{big, wb}}) {
      std::fill(c.begin(), c.end(), 0x5a5a5a5a);
      ASSERT_EQ(ork_matmul(dev, wh, a.data(), kCacheM, c.data(), nullptr), ORK_OK) << ork_last_error();
      EXPECT_EQ(c, want) << "call " << i;
    }
  }
  EXPECT_EQ(stats_of(small).weight_cache_hits, 0u);
  EXPECT_GT(stats_of(small).weight_cache_misses, 0u);
  EXPECT_GT(stats_of(big).weight_cache_hits, 0u);
  ork_memory_info ms{}, mb{};
  ms.struct_size = mb.struct_size = sizeof(ork_memory_info);
  ASSERT_EQ(ork_device_memory(small, &ms), ORK_OK);
  ASSERT_EQ(ork_device_memory(big, &mb), ORK_OK);
  EXPECT_EQ(ms.weight_cache_capacity_bytes, 0u);
  EXPECT_GT(mb.weight_cache_capacity_bytes, 0u);
  ork_weights_destroy(ws);
  ork_weights_destroy(wb);
  ork_device_close(small);
  ork_device_close(big);
}

}  // namespace
