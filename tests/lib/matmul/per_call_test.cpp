// The runner's per-call path once a call's context is cached (MatmulRunner::run: the lookup,
// pack A, the checked job's submit from its flat layout, unpack C) allocates nothing on the
// library's side, on both kernel interfaces, with one K-slice or several; and every C stays
// exact (docs/library.md "The job a submit reads, flat"). The asynchronous call (acquire, a
// matmul job) submits its context's checked job as it is, allocating only the job's own. A
// context evicted by the cache's clock is rebuilt on its next call, exact, while one hit
// between the others' builds is never evicted; weights replaced in their holder never find
// the context of the ones they replaced; a cached call's fields are one run of lines of its
// context. The kernel, here the emulated NPU computing, is left out of the count
// (KernelNotCounted).
#include "tests/support/alloc_counter.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "driver/emu/kernel/fake_kernel.h"
#include "driver/kmd/kmd.h"
#include "lib/matmul/job.h"
#include "lib/matmul/run.h"
#include "lib/ref/oracle.h"
#include "lib/ref/random.h"

namespace {

using ork::driver::KmdKind;

struct Shape {
  int64_t m, k, n;
};

class PerCall : public ::testing::TestWithParam<KmdKind> {
 protected:
  void SetUp() override {
    auto k = GetParam() == KmdKind::rknpu ? ork::driver::open_rknpu(os_, "/dev/dri/card1")
                                          : ork::driver::open_rocket(os_, "/dev/accel/accel0");
    ASSERT_TRUE(k.ok()) << k.error().message;
    kmd_ = std::move(*k);
  }
  ork::emu::FakeKernel kernel_;
  ork::test::KernelNotCounted os_{kernel_};
  std::unique_ptr<ork::driver::Kmd> kmd_;
};

TEST_P(PerCall, ACachedCallAllocatesNothingAndStaysExact) {
  // Decode (M = 1) and a few rows; K = 5000 runs in three K-slices (2048 each).
  const std::vector<Shape> shapes = {{1, 512, 256}, {1, 5000, 64}, {3, 256, 96}, {1, 64, 8192}};
  ork::matmul::MatmulRunner runner(*kmd_);
  for (const Shape& s : shapes) {
    SCOPED_TRACE(::testing::PrintToString(std::vector<int64_t>{s.m, s.k, s.n}));
    const auto w = ork::ref::random_int8(static_cast<size_t>(s.k * s.n), 11);
    auto rw = ork::matmul::ResidentWeights::create(*kmd_, ork::matmul::DType::int8, s.k, s.n, w.data());
    ASSERT_TRUE(rw.ok()) << rw.error().message;
    std::vector<int32_t> want(static_cast<size_t>(s.m * s.n)), c(want.size());
    const ork::matmul::RunOptions options;
    for (uint64_t call = 0; call < 4; ++call) {
      const auto a = ork::ref::random_int8(static_cast<size_t>(s.m * s.k), 20 + call);
      ASSERT_TRUE(ork::ref::matmul_int8(a, w, want, {s.m, s.k, s.n}).ok());
      std::fill(c.begin(), c.end(), 0x5a5a5a5a);
      ork::Status st;
      const long allocations = ork::test::allocations_in([&] { st = runner.run(**rw, a.data(), s.m, c.data(), options); });
      ASSERT_TRUE(st.ok()) << st.error().message;
      EXPECT_EQ(c, want) << "call " << call;
      if (call > 0) {  // the first builds the context
        EXPECT_EQ(allocations, 0) << "call " << call;
      }
    }
    runner.forget(**rw);
  }
}

// ork_matmul_submit's path below the C API: the cached context, a matmul job of it (pack A,
// the checked job's asynchronous submit, the wait, unpack C). Per call it allocates the job's
// own only: its list of parts, the kernel interface's pending job and that job's list of
// fences (rknpu) or out handles (rocket); nothing is checked or laid out again.
TEST_P(PerCall, AnAsynchronousCallSubmitsItsCheckedJobAsItIs) {
  const int64_t m = 1, k = 512, n = 256;
  ork::matmul::MatmulRunner runner(*kmd_);
  const auto w = ork::ref::random_int8(static_cast<size_t>(k * n), 12);
  auto rw = ork::matmul::ResidentWeights::create(*kmd_, ork::matmul::DType::int8, k, n, w.data());
  ASSERT_TRUE(rw.ok()) << rw.error().message;
  std::vector<int32_t> want(static_cast<size_t>(m * n)), c(want.size());
  for (uint64_t call = 0; call < 4; ++call) {
    const auto a = ork::ref::random_int8(static_cast<size_t>(m * k), 40 + call);
    ASSERT_TRUE(ork::ref::matmul_int8(a, w, want, {m, k, n}).ok());
    std::fill(c.begin(), c.end(), 0x5a5a5a5a);
    ork::Status st;
    const long allocations = ork::test::allocations_in([&] {
      ork::matmul::RunStats stats;
      auto ctx = runner.acquire(**rw, m, {}, stats);
      if (!ctx) {
        st = ctx.error();
        return;
      }
      ork::matmul::Job job(*kmd_, stats);
      st = job.add(*ctx, a.data(), c.data());
      if (st) st = job.submit();
      if (st) st = job.complete();
    });
    ASSERT_TRUE(st.ok()) << st.error().message;
    EXPECT_EQ(c, want) << "call " << call;
    if (call > 1) {  // the first builds the context, the second the kernel's spare task array
      EXPECT_LE(allocations, 3) << "call " << call;
    }
  }
}

// Six weights under a bound of two contexts: weight 0 is called between every other call, so
// the clock finds it referenced at every build and evicts the other one, built and never
// found since; each evicted one is rebuilt when called again, every C exact.
TEST_P(PerCall, AnEvictedContextIsRebuiltExactAndAHotOneIsKept) {
  const int64_t m = 1, k = 256, n = 128;
  ork::matmul::MatmulRunner runner(*kmd_);
  std::vector<std::vector<int8_t>> w;
  std::vector<std::unique_ptr<ork::matmul::ResidentWeights>> rw;
  for (int i = 0; i < 6; ++i) {
    w.push_back(ork::ref::random_int8(static_cast<size_t>(k * n), 60 + static_cast<uint64_t>(i)));
    auto r = ork::matmul::ResidentWeights::create(*kmd_, ork::matmul::DType::int8, k, n, w.back().data());
    ASSERT_TRUE(r.ok()) << r.error().message;
    rw.push_back(std::move(*r));
  }
  std::vector<int32_t> want(static_cast<size_t>(m * n)), c(want.size());
  auto call = [&](size_t i, uint64_t seed) {
    const auto a = ork::ref::random_int8(static_cast<size_t>(m * k), seed);
    EXPECT_TRUE(ork::ref::matmul_int8(a, w[i], want, {m, k, n}).ok());
    std::fill(c.begin(), c.end(), 0x5a5a5a5a);
    ork::matmul::RunStats st;
    EXPECT_TRUE(runner.run(*rw[i], a.data(), m, c.data(), {}, &st).ok());
    EXPECT_EQ(c, want) << "weight " << i << ", seed " << seed;
    return st.built;
  };
  call(0, 1);
  call(1, 2);
  runner.set_context_capacity(runner.cache_stats().bytes);  // room for these two contexts
  uint64_t seed = 3;
  for (size_t j = 0; j < 15; ++j) {  // weights 2, 3, 4, 5, 1, 2, ...: each built, never hit
    const size_t i = 1 + (j + 1) % 5;
    EXPECT_FALSE(call(0, seed++)) << "weight 0 rebuilt at step " << j;
    EXPECT_TRUE(call(i, seed++)) << "weight " << i << " at step " << j;
  }
  EXPECT_EQ(runner.cache_stats().evictions, 15u);
  EXPECT_EQ(runner.cache_stats().contexts, 2u);
}

// Resident weights held as the C API's handle holds them (OwnedWeights: the object and its
// id) and replaced without forgetting the old ones' contexts: the reference a call passes
// names the new object's id, so its first call builds and no call finds the context of the
// weights it replaced (still cached, their BO gone); every C is the new weights', and no id
// comes twice.
TEST_P(PerCall, ReplacedWeightsNeverFindTheContextOfTheOnesTheyReplaced) {
  const int64_t m = 1, k = 256, n = 64;
  ork::matmul::MatmulRunner runner(*kmd_);
  ork::matmul::OwnedWeights held;
  EXPECT_FALSE(held);
  EXPECT_EQ(held.id(), 0u);
  std::vector<uint64_t> ids;
  for (uint64_t i = 0; i < 4; ++i) {
    const auto w = ork::ref::random_int8(static_cast<size_t>(k * n), 80 + i);
    auto r = ork::matmul::ResidentWeights::create(*kmd_, ork::matmul::DType::int8, k, n, w.data());
    ASSERT_TRUE(r.ok()) << r.error().message;
    const uint64_t id = (*r)->id();
    const ork::matmul::ResidentWeights* object = r->get();
    held = std::move(*r);  // the weights before go, their context stays cached
    EXPECT_EQ(held.id(), id);
    EXPECT_EQ(held.ref().id(), id);
    EXPECT_EQ(&held.ref().weights(), object);
    for (uint64_t seen : ids) EXPECT_NE(seen, id);
    ids.push_back(id);
    std::vector<int32_t> want(static_cast<size_t>(m * n)), c(want.size());
    for (uint64_t call = 0; call < 3; ++call) {
      const auto a = ork::ref::random_int8(static_cast<size_t>(m * k), 90 + 3 * i + call);
      ASSERT_TRUE(ork::ref::matmul_int8(a, w, want, {m, k, n}).ok());
      std::fill(c.begin(), c.end(), 0x5a5a5a5a);
      ork::matmul::RunStats st;
      ASSERT_TRUE(runner.run(held.ref(), a.data(), m, c.data(), {}, &st).ok());
      EXPECT_EQ(c, want) << "weights " << i << ", call " << call;
      EXPECT_EQ(st.built, call == 0) << "weights " << i << ", call " << call;
    }
    EXPECT_EQ(runner.cache_stats().contexts, i + 1);
  }
  runner.forget(*held);
}

// What a cached call reads of its context (the plan's per-call fields, the buffers, the first
// slice group) starts the context's second line and runs on without a gap of planning data.
TEST_P(PerCall, ACachedCallsFieldsAreOneRunFromTheContextsSecondLine) {
  ork::matmul::MatmulRunner runner(*kmd_);
  const auto w = ork::ref::random_int8(512 * 256, 13);
  auto rw = ork::matmul::ResidentWeights::create(*kmd_, ork::matmul::DType::int8, 512, 256, w.data());
  ASSERT_TRUE(rw.ok()) << rw.error().message;
  ork::matmul::RunStats stats;
  auto ctx = runner.acquire(**rw, 1, {}, stats);
  ASSERT_TRUE(ctx.ok()) << ctx.error().message;
  const auto* base = reinterpret_cast<const char*>(ctx->get());
  auto at = [&](const void* p) { return static_cast<const char*>(p) - base; };
  const ork::matmul::Context& x = **ctx;
  EXPECT_EQ(reinterpret_cast<uintptr_t>(base) % 64, 0u);
  EXPECT_EQ(at(&x.plan.shape), 64);
  EXPECT_LE(at(&x.plan.stacked) + 1, at(&x.plan) + static_cast<long>(sizeof(x.plan)));
  EXPECT_EQ(at(&x.io), at(&x.plan) + static_cast<long>(sizeof(x.plan)));
  EXPECT_LE(at(&x.groups[0].submit), 64 + 128);  // the group's head and its checked job's in the next two lines
  // A three-core decode job of one task a core: the run, flat job included, ends within the
  // context's fourth line, so a call reads three lines of it (docs/library.md "Three lines of
  // a context"): 188 bytes on rknpu, 180 on rocket.
  ASSERT_EQ(x.groups.size(), 1u);
  ASSERT_EQ(x.plan.tasks.size(), 3u);
  const ork::driver::FlatJob& flat = x.groups[0].submit.flat();
  ASSERT_LE(flat.size(), ork::driver::FlatJob::kInlineBytes);
  EXPECT_LE(at(flat.data()) + static_cast<long>(flat.size()), 4 * 64);
}

INSTANTIATE_TEST_SUITE_P(BothInterfaces, PerCall, ::testing::Values(KmdKind::rknpu, KmdKind::rocket),
                         [](const auto& info) { return std::string(ork::driver::kmd_kind_name(info.param)); });

}  // namespace
