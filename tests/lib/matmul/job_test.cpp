// The job's rule over shared buffers (lib/matmul/job.h, context.h IoBuffers): contexts of one
// geometry built on one set of A and output BOs, as the runner's blocking calls are. A job in
// flight through one context is completed before any other context on the set packs its A
// (blocking or as another job), a job cannot hold one set twice, and the runner's blocking
// calls do share one set per geometry while its asynchronous contexts do not. Every C is
// checked against the CPU reference on the emulated NPU, both kernel interfaces.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "driver/emu/kernel/fake_kernel.h"
#include "driver/kmd/kmd.h"
#include "lib/matmul/context.h"
#include "lib/matmul/job.h"
#include "lib/matmul/run.h"
#include "lib/ref/oracle.h"
#include "lib/ref/random.h"

namespace {

using namespace ork::matmul;

constexpr int64_t kJobM = 4, kJobK = 320, kJobN = 96;

struct Weights {
  std::vector<int8_t> w;
  std::unique_ptr<ResidentWeights> rw;
};

class SharedIo : public ::testing::TestWithParam<ork::driver::KmdKind> {
 protected:
  void SetUp() override {
    auto k = ork::driver::discover(fake_, GetParam());
    ASSERT_TRUE(k.ok()) << k.error().message;
    kmd_ = std::move(*k);
    for (uint32_t i = 0; i < 3; ++i) {
      Weights w;
      w.w = ork::ref::random_int8(kJobK * kJobN, 10 + i);
      auto rw = ResidentWeights::create(*kmd_, DType::int8, kJobK, kJobN, w.w.data());
      ASSERT_TRUE(rw.ok()) << rw.error().message;
      w.rw = std::move(*rw);
      weights_.push_back(std::move(w));
    }
    auto plan = make_plan({kJobM, kJobK, kJobN}, {.dtype = DType::int8, .cores = 1, .mc_cap = 0});
    ASSERT_TRUE(plan.ok()) << plan.error().message;
    auto io = allocate_io(*kmd_, io_geometry(*plan));
    ASSERT_TRUE(io.ok()) << io.error().message;
    for (const Weights& w : weights_) {  // every context on the one set
      auto ctx = build_context(*kmd_, *plan, w.rw->bo(), {}, 0, *io);
      ASSERT_TRUE(ctx.ok()) << ctx.error().message;
      ASSERT_EQ((*ctx)->io, io->get());
      ctxs_.push_back(std::shared_ptr<Context>(std::move(*ctx)));
    }
  }
  std::vector<int32_t> want(const std::vector<int8_t>& a, size_t w) const {
    std::vector<int32_t> c(kJobM * kJobN);
    EXPECT_TRUE(ork::ref::matmul_int8(a, weights_[w].w, c, {kJobM, kJobK, kJobN}).ok());
    return c;
  }

  ork::emu::FakeKernel fake_;
  std::unique_ptr<ork::driver::Kmd> kmd_;
  std::vector<Weights> weights_;
  std::vector<std::shared_ptr<Context>> ctxs_;
};

// A job in flight on the set, then a blocking call through another context: the call
// completes the job first (its C unpacked before the slots are reused), both exact.
TEST_P(SharedIo, BlockingCallCompletesTheJobOnItsBuffers) {
  const auto a0 = ork::ref::random_int8(kJobM * kJobK, 1), a1 = ork::ref::random_int8(kJobM * kJobK, 2);
  std::vector<int32_t> c0(kJobM * kJobN, -1), c1(kJobM * kJobN, -1);
  Job job(*kmd_);
  ASSERT_TRUE(job.add(ctxs_[0], a0.data(), c0.data()).ok());
  ASSERT_TRUE(job.submit().ok());
  ASSERT_TRUE(job.in_flight());
  EXPECT_EQ(ctxs_[1]->io->busy, &job);  // the mark is the set's, seen through any context
  RunStats st;
  ASSERT_TRUE(execute_any(*kmd_, *ctxs_[1], a1.data(), c1.data(), st).ok());
  EXPECT_FALSE(job.in_flight());
  EXPECT_EQ(ctxs_[0]->io->busy, nullptr);
  EXPECT_EQ(c0, want(a0, 0));  // written by the rule, before the blocking call packed its A
  ASSERT_TRUE(job.complete().ok());  // its kept outcome
  EXPECT_EQ(c0, want(a0, 0));
  EXPECT_EQ(c1, want(a1, 1));
}

// Two jobs of one shape on different weights and A, both submitted: the second's add
// completes the first; waited in reverse order, both exact.
TEST_P(SharedIo, TwoJobsOfOneShapeBothExact) {
  const auto a0 = ork::ref::random_int8(kJobM * kJobK, 3), a2 = ork::ref::random_int8(kJobM * kJobK, 4);
  std::vector<int32_t> c0(kJobM * kJobN, -1), c2(kJobM * kJobN, -1);
  Job first(*kmd_), second(*kmd_);
  ASSERT_TRUE(first.add(ctxs_[0], a0.data(), c0.data()).ok());
  ASSERT_TRUE(first.submit().ok());
  ASSERT_TRUE(second.add(ctxs_[2], a2.data(), c2.data()).ok());
  EXPECT_FALSE(first.in_flight());
  ASSERT_TRUE(second.submit().ok());
  EXPECT_EQ(ctxs_[0]->io->busy, &second);
  ASSERT_TRUE(second.complete().ok());
  ASSERT_TRUE(first.complete().ok());
  EXPECT_EQ(c0, want(a0, 0));
  EXPECT_EQ(c2, want(a2, 2));
}

// One job cannot hold one set twice (the second A would overwrite the first): refused by
// name, and the job still runs its first matmul exactly.
TEST_P(SharedIo, OneJobRefusesTheSameBuffersTwice) {
  const auto a0 = ork::ref::random_int8(kJobM * kJobK, 5), a1 = ork::ref::random_int8(kJobM * kJobK, 6);
  std::vector<int32_t> c0(kJobM * kJobN, -1), c1(kJobM * kJobN, -1);
  Job job(*kmd_);
  ASSERT_TRUE(job.add(ctxs_[0], a0.data(), c0.data()).ok());
  auto s = job.add(ctxs_[1], a1.data(), c1.data());
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("same feature and output buffers"), std::string::npos) << s.error().message;
  ASSERT_TRUE(job.submit().ok());
  ASSERT_TRUE(job.complete().ok());
  EXPECT_EQ(c0, want(a0, 0));
  EXPECT_EQ(c1, std::vector<int32_t>(kJobM * kJobN, -1));
}

// A set too small for a plan (here its output slot: 4 x 1024 int32 against the 4 KiB BO of
// 4 x 96) is refused by name.
TEST_P(SharedIo, SetOfAnotherGeometryRefused) {
  constexpr int64_t wide = 1024;
  auto plan = make_plan({kJobM, kJobK, wide}, {.dtype = DType::int8, .cores = 1, .mc_cap = 0});
  ASSERT_TRUE(plan.ok());
  auto w = ResidentWeights::create(*kmd_, DType::int8, kJobK, wide, ork::ref::random_int8(kJobK * wide, 7).data());
  ASSERT_TRUE(w.ok());
  auto ctx = build_context(*kmd_, *plan, (*w)->bo(), {}, 0, ctxs_[0]->io_owner);
  ASSERT_FALSE(ctx.ok());
  EXPECT_NE(ctx.error().message.find("do not fit the plan's geometry"), std::string::npos) << ctx.error().message;
}

// The runner: blocking calls of one shape share one set (a second weight adds only its
// command lists to the cache's bytes), an asynchronous context owns one (adds a set).
TEST_P(SharedIo, RunnerSharesOnlyBlockingCalls) {
  MatmulRunner runner(*kmd_);
  std::vector<int32_t> c(kJobM * kJobN);
  const auto a = ork::ref::random_int8(kJobM * kJobK, 8);
  ASSERT_TRUE(runner.run(*weights_[0].rw, a.data(), kJobM, c.data(), {.cores = 1}).ok());
  EXPECT_EQ(c, want(a, 0));
  const size_t one = runner.cache_stats().bytes;
  ASSERT_TRUE(runner.run(*weights_[1].rw, a.data(), kJobM, c.data(), {.cores = 1}).ok());
  EXPECT_EQ(c, want(a, 1));
  const size_t two = runner.cache_stats().bytes;
  RunStats st;
  auto own = runner.acquire(*weights_[2].rw, kJobM, {.cores = 1}, st);
  ASSERT_TRUE(own.ok());
  const size_t three = runner.cache_stats().bytes;
  const size_t set = (*own)->io->bytes();
  EXPECT_EQ(two - one, (*own)->regcmd->size());  // the second blocking context: lists only
  EXPECT_EQ(three - two, (*own)->regcmd->size() + set);
  EXPECT_FALSE((*own)->shared_io);
  EXPECT_EQ(runner.cache_stats().contexts, 3u);
}

INSTANTIATE_TEST_SUITE_P(Emu, SharedIo,
                         ::testing::Values(ork::driver::KmdKind::rknpu, ork::driver::KmdKind::rocket));

}  // namespace
