// The runner's context cache at model scale (lib/matmul/run.h): bounded by the bytes of the
// BOs its contexts hold, not by a count. More weights than the old fixed 16 keep their
// contexts (a second pass builds nothing); a small ORK_CONTEXT_CACHE_BYTES evicts (by the
// clock, driver/common/byte_lru.h), and every result stays exact; destroying weights drops their
// contexts, and weights made after them never find one (the handle carries its resident
// weights' id, never reused); a bad value of the variable is a named error.
#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "lib/api/device.h"
#include "lib/api/weights.h"
#include "lib/ref/oracle.h"
#include "lib/ref/random.h"
#include "ork/ork.h"

namespace {

using ork::ref::random_int8;

constexpr int64_t kCacheM = 3, kCacheK = 256, kCacheN = 96;
constexpr int kWeights = 40;  // more than the 16 contexts the runner used to keep

struct Model {
  std::vector<std::vector<int8_t>> w;
  std::vector<ork_weights*> handles;
};

class ContextCache : public ::testing::TestWithParam<const char*> {
 protected:
  void TearDown() override {
    for (ork_weights* h : model_.handles) ork_weights_destroy(h);
    ork_device_close(dev_);
    unsetenv("ORK_CONTEXT_CACHE_BYTES");
  }
  void open() {
    ASSERT_EQ(ork_device_open(GetParam(), &dev_), ORK_OK) << ork_last_error();
    for (int i = 0; i < kWeights; ++i) {
      model_.w.push_back(random_int8(kCacheK * kCacheN, 100 + static_cast<uint32_t>(i)));
      ork_weights* h = nullptr;
      ASSERT_EQ(ork_weights_create(dev_, ORK_DTYPE_INT8, kCacheK, kCacheN, model_.w.back().data(), &h), ORK_OK) << ork_last_error();
      model_.handles.push_back(h);
    }
  }
  // One pass over every weight, each result against the oracle.
  void pass(uint32_t seed) {
    for (int i = 0; i < kWeights; ++i) {
      const auto a = random_int8(kCacheM * kCacheK, seed + static_cast<uint32_t>(i));
      std::vector<int32_t> c(kCacheM * kCacheN, 0x5a5a5a5a), want(kCacheM * kCacheN);
      ASSERT_EQ(ork_matmul(dev_, model_.handles[i], a.data(), kCacheM, c.data(), nullptr), ORK_OK) << ork_last_error();
      ASSERT_TRUE(ork::ref::matmul_int8(a, model_.w[i], want, {kCacheM, kCacheK, kCacheN}).ok());
      ASSERT_EQ(c, want) << "weight " << i;
    }
  }
  ork::matmul::MatmulRunner::CacheStats cache() const { return dev_->backend->runner()->cache_stats(); }
  ork_device* dev_ = nullptr;
  Model model_;
};

TEST_P(ContextCache, EveryWeightKeepsItsContext) {
  open();
  pass(1);
  const auto first = cache();
  EXPECT_EQ(first.contexts, static_cast<size_t>(kWeights));
  EXPECT_EQ(first.evictions, 0u);
  EXPECT_GT(first.bytes, 0u);
  EXPECT_EQ(first.capacity, ork::matmul::MatmulRunner::default_context_bytes());
  pass(1000);
  EXPECT_EQ(cache().contexts, static_cast<size_t>(kWeights));  // nothing rebuilt, nothing dropped
  EXPECT_EQ(cache().bytes, first.bytes);
  ork_weights_destroy(model_.handles[7]);  // its context goes with it
  model_.handles.erase(model_.handles.begin() + 7);
  model_.w.erase(model_.w.begin() + 7);
  EXPECT_EQ(cache().contexts, static_cast<size_t>(kWeights - 1));
  EXPECT_LT(cache().bytes, first.bytes);
}

TEST_P(ContextCache, SmallBoundEvictsAndStaysExact) {
  setenv("ORK_CONTEXT_CACHE_BYTES", "64K", 1);
  open();
  EXPECT_EQ(cache().capacity, size_t{64} << 10);
  pass(1);
  const auto st = cache();
  EXPECT_LE(st.bytes, size_t{64} << 10);
  EXPECT_LT(st.contexts, static_cast<size_t>(kWeights));
  EXPECT_GT(st.evictions, 0u);
  pass(2000);  // every call may rebuild: still exact
  EXPECT_GT(cache().evictions, st.evictions);
}

// A call keys the runner's cache by the id the handle keeps beside its resident weights
// (matmul::OwnedWeights), read from the handle's one line of per-call fields. Weights destroyed
// and made again, of the same shape, often at the same addresses, take a new id: each new
// handle's first call builds its own context and finds none of its predecessor's, every C of
// its own weights exact.
TEST_P(ContextCache, WeightsMadeAfterDestroyedOnesNeverFindTheirContext) {
  ASSERT_EQ(ork_device_open(GetParam(), &dev_), ORK_OK) << ork_last_error();
  std::vector<uint64_t> ids;
  for (uint32_t i = 0; i < 6; ++i) {
    SCOPED_TRACE(i);
    const auto w = random_int8(kCacheK * kCacheN, 300 + i);
    ork_weights* h = nullptr;
    ASSERT_EQ(ork_weights_create(dev_, ORK_DTYPE_INT8, kCacheK, kCacheN, w.data(), &h), ORK_OK) << ork_last_error();
    // The per-call fields: one line of the handle's, past its first, and the resident weights
    // with their id and remembered context the end of it; the w4a8 copy (read only by int4
    // weights' w4a8 calls) in the lines before; the id is its resident weights'.
    const auto* base = reinterpret_cast<const char*>(h);
    const auto line = [&](const void* p) { return (static_cast<const char*>(p) - base) / 64; };
    EXPECT_EQ(reinterpret_cast<uintptr_t>(h) % 64, 0u);
    const auto hot = line(&h->device);
    EXPECT_GE(hot, 1);
    EXPECT_EQ((reinterpret_cast<const char*>(&h->device) - base) % 64, 0);
    EXPECT_EQ(line(&h->dtype), hot);
    EXPECT_EQ(line(&h->n), hot);
    EXPECT_EQ(line(&h->resident), hot);
    EXPECT_EQ(sizeof h->resident, 32u);
    EXPECT_EQ(line(reinterpret_cast<const char*>(&h->resident) + sizeof h->resident - 1), hot);
    EXPECT_LT(line(reinterpret_cast<const char*>(&h->resident_w4a8) + sizeof h->resident_w4a8 - 1), hot);
    ASSERT_TRUE(h->resident);
    EXPECT_EQ(h->resident.id(), h->resident->id());
    EXPECT_EQ(h->resident.ref().id(), h->resident->id());
    for (uint64_t seen : ids) EXPECT_NE(seen, h->resident.id());
    ids.push_back(h->resident.id());
    for (uint32_t call = 0; call < 2; ++call) {
      const auto a = random_int8(kCacheM * kCacheK, 400 + 2 * i + call);
      std::vector<int32_t> c(kCacheM * kCacheN, 0x5a5a5a5a), want(kCacheM * kCacheN);
      ork_stats stats{};
      stats.struct_size = sizeof stats;
      ork_matmul_options o{};
      o.struct_size = sizeof o;
      o.stats = &stats;
      ASSERT_EQ(ork_matmul(dev_, h, a.data(), kCacheM, c.data(), &o), ORK_OK) << ork_last_error();
      ASSERT_TRUE(ork::ref::matmul_int8(a, w, want, {kCacheM, kCacheK, kCacheN}).ok());
      EXPECT_EQ(c, want) << "call " << call;
      EXPECT_EQ(stats.context_builds, call == 0 ? 1u : 0u) << "call " << call;
      EXPECT_EQ(cache().contexts, 1u);  // its own: the destroyed weights' went with them
    }
    ork_weights_destroy(h);
    EXPECT_EQ(cache().contexts, 0u);
  }
}

TEST_P(ContextCache, BadBoundIsANamedError) {
  setenv("ORK_CONTEXT_CACHE_BYTES", "12Q", 1);
  EXPECT_NE(ork_device_open(GetParam(), &dev_), ORK_OK);
  EXPECT_NE(std::string(ork_last_error()).find("ORK_CONTEXT_CACHE_BYTES='12Q'"), std::string::npos) << ork_last_error();
  dev_ = nullptr;
  unsetenv("ORK_CONTEXT_CACHE_BYTES");
  setenv("ORK_EMU_WEIGHT_CACHE_BYTES", "lots", 1);  // the emulator's bound, read at open too
  EXPECT_NE(ork_device_open(GetParam(), &dev_), ORK_OK);
  EXPECT_NE(std::string(ork_last_error()).find("ORK_EMU_WEIGHT_CACHE_BYTES='lots'"), std::string::npos)
      << ork_last_error();
  unsetenv("ORK_EMU_WEIGHT_CACHE_BYTES");
  dev_ = nullptr;
}

INSTANTIATE_TEST_SUITE_P(Emu, ContextCache, ::testing::Values("emu-rknpu", "emu-rocket"));

}  // namespace
