// The context a holder's weights remember (lib/matmul/run.h ContextMemo; docs/library.md "The
// handle remembers its context"): a blocking call of the same key as the holder's last recalls
// it without the cache's lookup, and never once it could be stale: not after any context was
// dropped (an eviction, weights forgotten), not for another M, core mask, C type or a row cap,
// not through another runner (another device), not for the weights that replaced the ones it
// was found for. Each case fails on the stat it checks (`built`, `recalled`) before it fails on
// C, and every C is checked against the CPU reference, both kernel interfaces.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "driver/common/fp16.h"
#include "driver/emu/kernel/fake_kernel.h"
#include "driver/kmd/kmd.h"
#include "lib/matmul/run.h"
#include "lib/ref/oracle.h"
#include "lib/ref/random.h"

namespace {

using namespace ork::matmul;

constexpr int64_t kMemoK = 256, kMemoN = 64;

// What one call did: its stats' two flags, and whether its C was the reference's.
struct Outcome {
  bool built = false, recalled = false, exact = false;
};

class Memo : public ::testing::TestWithParam<ork::driver::KmdKind> {
 protected:
  void SetUp() override {
    auto k = ork::driver::discover(fake_, GetParam());
    ASSERT_TRUE(k.ok()) << k.error().message;
    kmd_ = std::move(*k);
  }
  // int8 weights of seed `seed` into `held` (replacing what it held); their values in w_[seed].
  void hold(OwnedWeights& held, uint64_t seed) {
    w_.resize(std::max<size_t>(w_.size(), seed + 1));
    w_[seed] = ork::ref::random_int8(kMemoK * kMemoN, seed);
    auto r = ResidentWeights::create(*kmd_, DType::int8, kMemoK, kMemoN, w_[seed].data());
    ASSERT_TRUE(r.ok()) << r.error().message;
    held = std::move(*r);
  }
  // One blocking call of M rows through `runner` on the weights of seed `seed` held in `held`.
  Outcome call(MatmulRunner& runner, const OwnedWeights& held, uint64_t seed, int64_t m, const RunOptions& o = {}) {
    const auto a = ork::ref::random_int8(static_cast<size_t>(m * kMemoK), 1000 + calls_++);
    std::vector<int32_t> want(static_cast<size_t>(m * kMemoN)), c(want.size(), 0x5a5a5a5a);
    EXPECT_TRUE(ork::ref::matmul_int8(a, w_[seed], want, {m, kMemoK, kMemoN}).ok());
    RunStats st;
    const auto s = runner.run(held.ref(), a.data(), m, c.data(), o, &st);
    EXPECT_TRUE(s.ok()) << s.error().message;
    return {st.built, st.recalled, c == want};
  }

  ork::emu::FakeKernel fake_;
  std::unique_ptr<ork::driver::Kmd> kmd_;
  std::vector<std::vector<int8_t>> w_;
  uint64_t calls_ = 0;
};

// Two weights in turn: after each one's build, every call recalls; a third weights' context
// forgotten (a drop, as an eviction is) makes the next call of each look up again (a hit, not a
// build), and the one after recall.
TEST_P(Memo, ACallRecallsItsContextUntilAnyContextIsDropped) {
  MatmulRunner runner(*kmd_);
  OwnedWeights a, b, other;
  hold(a, 1), hold(b, 2), hold(other, 3);
  for (int round = 0; round < 3; ++round)
    for (auto* held : {&a, &b}) {
      const Outcome o = call(runner, *held, held == &a ? 1 : 2, 1);
      EXPECT_TRUE(o.exact) << "round " << round;
      EXPECT_EQ(o.built, round == 0) << "round " << round;
      EXPECT_EQ(o.recalled, round > 0) << "round " << round;
    }
  EXPECT_TRUE(call(runner, other, 3, 1).built);
  runner.forget(*other);
  for (int round = 0; round < 2; ++round)
    for (auto* held : {&a, &b}) {
      const Outcome o = call(runner, *held, held == &a ? 1 : 2, 1);
      EXPECT_TRUE(o.exact) << "round " << round;
      EXPECT_FALSE(o.built) << "round " << round;
      EXPECT_EQ(o.recalled, round > 0) << "after the drop, round " << round;
    }
}

// Room for one context: each weights' build evicts the other's context, so a call after the
// other's never recalls (its context is gone: a recall would run a freed context) and builds
// again, exact.
TEST_P(Memo, AnEvictedContextIsNeverRecalled) {
  MatmulRunner runner(*kmd_);
  OwnedWeights a, b;
  hold(a, 4), hold(b, 5);
  ASSERT_TRUE(call(runner, a, 4, 1).exact);
  EXPECT_TRUE(call(runner, a, 4, 1).recalled);
  runner.set_context_capacity(runner.cache_stats().bytes);  // this one context (and its set)
  for (int i = 0; i < 6; ++i) {
    const bool on_a = i % 2 == 1;
    const Outcome o = call(runner, on_a ? a : b, on_a ? 4 : 5, 1);
    EXPECT_TRUE(o.exact) << "call " << i;
    EXPECT_TRUE(o.built) << "call " << i;
    EXPECT_FALSE(o.recalled) << "call " << i;
  }
  EXPECT_GE(runner.cache_stats().evictions, 6u);
}

// One weights, the calls' keys in turn: a key's first call builds its own context (the one
// remembered is another key's: another M, core mask, or a row cap, which never remembers),
// a key called twice running recalls on the second, every C exact.
TEST_P(Memo, AnotherKeyNeverRecallsTheContextOfTheLast) {
  MatmulRunner runner(*kmd_);
  OwnedWeights held;
  hold(held, 6);
  struct Key {
    int64_t m;
    RunOptions o;
  };
  const std::vector<Key> keys = {{1, {}},
                                 {2, {}},
                                 {1, {.cores = 1}},
                                 {1, {.core_mask = 0b100}},
                                 {1, {.core_mask = 0b110}},
                                 {3, {.cores = 2}},
                                 {1, {.mc_cap = 31}}};
  for (int pass = 0; pass < 2; ++pass)
    for (size_t i = 0; i < keys.size(); ++i) {
      SCOPED_TRACE(::testing::Message() << "pass " << pass << ", key " << i);
      const Outcome first = call(runner, held, 6, keys[i].m, keys[i].o);
      EXPECT_TRUE(first.exact);
      EXPECT_EQ(first.built, pass == 0);
      EXPECT_FALSE(first.recalled);  // the one before was another key's
      const Outcome second = call(runner, held, 6, keys[i].m, keys[i].o);
      EXPECT_TRUE(second.exact);
      EXPECT_FALSE(second.built);
      EXPECT_EQ(second.recalled, keys[i].o.mc_cap == 0);
    }
}

// fp16 weights, C as fp32 and as fp16 in turn: two keys of one M and mask, never one's context
// for the other (its C would be the other type: bytes of another width).
TEST_P(Memo, TheCTypeIsPartOfTheKeyItRecalls) {
  MatmulRunner runner(*kmd_);
  std::vector<uint16_t> w(kMemoK * kMemoN), a(kMemoK);
  const auto wi = ork::ref::random_int8(w.size(), 7), ai = ork::ref::random_int8(a.size(), 8);
  for (size_t i = 0; i < w.size(); ++i) w[i] = ork::float_to_half(static_cast<float>(wi[i] % 8));
  for (size_t i = 0; i < a.size(); ++i) a[i] = ork::float_to_half(static_cast<float>(ai[i] % 8));
  auto r = ResidentWeights::create(*kmd_, DType::fp16, kMemoK, kMemoN, w.data());
  ASSERT_TRUE(r.ok()) << r.error().message;
  OwnedWeights held;
  held = std::move(*r);
  std::vector<float> want32(kMemoN);
  std::vector<uint16_t> want16(kMemoN);
  ASSERT_TRUE(ork::ref::matmul_fp16(a, w, want32, {1, kMemoK, kMemoN}).ok());
  ASSERT_TRUE(ork::ref::matmul_fp16_to_fp16(a, w, want16, {1, kMemoK, kMemoN}).ok());
  for (int i = 0; i < 6; ++i) {
    SCOPED_TRACE(i);
    const bool half = i % 3 == 2;  // fp32, fp32, fp16, ...: each type's second call running recalls
    std::vector<uint8_t> c(kMemoN * 4, 0x5a);
    RunStats st;
    ASSERT_TRUE(runner.run(held.ref(), a.data(), 1, c.data(), {.fp16_out = half}, &st).ok());
    EXPECT_EQ(st.built, i == 0 || i == 2);
    EXPECT_EQ(st.recalled, i % 3 == 1);
    const auto* want = half ? static_cast<const void*>(want16.data()) : want32.data();
    const size_t bytes = kMemoN * (half ? 2 : 4);
    EXPECT_EQ(std::memcmp(c.data(), want, bytes), 0);
    if (half) {
      EXPECT_EQ(c[bytes], 0x5a);  // nothing past an fp16 C
    }
  }
}

// Stamps are process-wide: a memo one runner wrote is never another's (each device has its
// own), whichever ran last; a runner's own context is a hit there again, not a recall.
TEST_P(Memo, AnotherRunnerNeverRecallsIt) {
  MatmulRunner first(*kmd_), second(*kmd_);
  OwnedWeights held;
  hold(held, 9);
  EXPECT_TRUE(call(first, held, 9, 1).built);
  EXPECT_TRUE(call(first, held, 9, 1).recalled);
  const Outcome there = call(second, held, 9, 1);
  EXPECT_TRUE(there.exact);
  EXPECT_TRUE(there.built);
  EXPECT_FALSE(there.recalled);
  const Outcome back = call(first, held, 9, 1);
  EXPECT_TRUE(back.exact);
  EXPECT_FALSE(back.built);
  EXPECT_FALSE(back.recalled);
  first.forget(*held);
  second.forget(*held);
}

// Weights replaced in their holder, their context left cached: the memo goes with them, so
// the new weights' first call builds (a recall would run the old weights' context: their BO).
TEST_P(Memo, ReplacedWeightsNeverRecallTheirPredecessorsContext) {
  MatmulRunner runner(*kmd_);
  OwnedWeights held;
  for (uint64_t seed = 10; seed < 13; ++seed) {
    hold(held, seed);
    const Outcome o = call(runner, held, seed, 1);
    EXPECT_TRUE(o.exact) << seed;
    EXPECT_TRUE(o.built) << seed;
    EXPECT_FALSE(o.recalled) << seed;
    EXPECT_TRUE(call(runner, held, seed, 1).recalled) << seed;
  }
  EXPECT_EQ(runner.cache_stats().contexts, 3u);
}

INSTANTIATE_TEST_SUITE_P(BothInterfaces, Memo,
                         ::testing::Values(ork::driver::KmdKind::rknpu, ork::driver::KmdKind::rocket),
                         [](const auto& info) { return std::string(ork::driver::kmd_kind_name(info.param)); });

}  // namespace
