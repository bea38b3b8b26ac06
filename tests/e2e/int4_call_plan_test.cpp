// An int4 ork_matmul takes the board plan's plan of the matmul alone (lib/exec/board_plan.h
// plan_alone; lib/api/backend_npu.cpp): its K-slices stacked where that plan stacks them, the
// same chooser as the executor's. Through the C API on emu and emu-rocket, at M = 1..4 and
// K with a narrower last slice before padding (odd, just past the widest task, two slices
// and three): every C cell equal to the reference, no int16 partial clamped, and the NPU ran
// exactly the chosen plan's tasks, fewer than the plain plan's where it stacks; a submitted
// call and a batch take the same plan; stacked and plain calls mixed on one weights in every
// pattern (a job in flight, blocking calls, a replayed batch, two threads).
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <numeric>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "driver/common/int4.h"
#include "driver/emu/kernel/fake_kernel.h"
#include "lib/api/device.h"
#include "lib/api/weights.h"
#include "lib/exec/board_plan.h"
#include "tests/support/host_tensor.h"
#include "tests/support/int4_values.h"
#include "lib/ref/oracle.h"
#include "ork/ork.h"

namespace {

using ork::test::host_tensor;
using ork::test::pack_int4_values;

class Int4CallPlan : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override { ASSERT_EQ(ork_device_open(GetParam(), &dev_), ORK_OK) << ork_last_error(); }
  void TearDown() override { ork_device_close(dev_); }
  uint64_t tasks_done() const {
    const auto& t = dev_->fake->stats().tasks_done;
    return std::accumulate(t.begin(), t.end(), uint64_t{0});
  }
  ork_device* dev_ = nullptr;
};

struct PlanCall {
  int64_t m, k, n;
};

// Weights of -2..2, as quantised ones mostly are: their bound allows K-slices about 3500
// wide, so every K here past 4096 runs in two or three slices, the last narrower before
// padding.
TEST_P(Int4CallPlan, IsTheBoardPlansAndExact) {
  int stacked = 0;
  for (const PlanCall& c : {PlanCall{1, 5000, 2048}, PlanCall{2, 4097, 1024}, PlanCall{3, 5001, 768}, PlanCall{4, 9000, 512},
                        PlanCall{1, 1000, 256}}) {
    const std::string what = std::to_string(c.m) + " x " + std::to_string(c.k) + " x " + std::to_string(c.n);
    const auto w = ork::test::draw_int4_values(static_cast<size_t>(c.k * c.n), 5, -2, 5), a = ork::test::draw_int4_values(static_cast<size_t>(c.m * c.k), 6, -8, 16);
    const auto pw = pack_int4_values(w), pa = pack_int4_values(a);
    ork_weights* weights = nullptr;
    ASSERT_EQ(ork_weights_create(dev_, ORK_DTYPE_INT4, c.k, c.n, pw.data(), &weights), ORK_OK) << ork_last_error();
    const int64_t width = weights->resident->slice_k();
    auto chosen = ork::exec::plan_alone(ork::matmul::DType::int4, c.m, c.k, c.n, 3, width);
    auto plain = ork::matmul::make_plan({c.m, c.k, c.n}, {.dtype = ork::matmul::DType::int4, .slice_k = width});
    ASSERT_TRUE(chosen && plain) << what;
    std::vector<int32_t> want(static_cast<size_t>(c.m * c.n)), got(want.size(), 0x5a5a5a5a);
    ASSERT_TRUE(ork::ref::matmul_int8(a, w, want, {c.m, c.k, c.n}).ok());
    const uint64_t saturated = dev_->fake->stats().int4_saturated_cells, tasks = tasks_done();
    EXPECT_EQ(ork_matmul(dev_, weights, pa.data(), c.m, got.data(), nullptr), ORK_OK) << ork_last_error();
    EXPECT_EQ(got, want) << what;
    EXPECT_EQ(dev_->fake->stats().int4_saturated_cells, saturated) << what;
    EXPECT_EQ(tasks_done() - tasks, chosen->tasks.size()) << what;
    if (chosen->stacked) {
      ++stacked;
      EXPECT_LT(chosen->tasks.size(), plain->tasks.size()) << what;
      for (const auto& t : chosen->tasks) EXPECT_EQ(t.kt, chosen->slice_k) << what << ": every slice full";
    }
    ork_weights_destroy(weights);
  }
  EXPECT_GE(stacked, 3);
}


// A submitted call and a batch of two take the same plan: exact, the chosen plan's tasks each.
TEST_P(Int4CallPlan, SubmitAndBatchTakeItToo) {
  const PlanCall c{2, 5000, 2048};
  const auto w = ork::test::draw_int4_values(static_cast<size_t>(c.k * c.n), 5, -2, 5);
  const auto pw = pack_int4_values(w);
  ork_weights* weights = nullptr;
  ASSERT_EQ(ork_weights_create(dev_, ORK_DTYPE_INT4, c.k, c.n, pw.data(), &weights), ORK_OK) << ork_last_error();
  auto chosen = ork::exec::plan_alone(ork::matmul::DType::int4, c.m, c.k, c.n, 3, weights->resident->slice_k());
  ASSERT_TRUE(chosen);
  ASSERT_TRUE(chosen->stacked);
  std::vector<std::vector<uint8_t>> pa;
  std::vector<std::vector<int32_t>> want, got;
  for (unsigned s = 0; s < 3; ++s) {
    const auto a = ork::test::draw_int4_values(static_cast<size_t>(c.m * c.k), 30 + s, -8, 16);
    pa.push_back(pack_int4_values(a));
    want.emplace_back(static_cast<size_t>(c.m * c.n));
    ASSERT_TRUE(ork::ref::matmul_int8(a, w, want.back(), {c.m, c.k, c.n}).ok());
    got.emplace_back(want.back().size(), 0x5a5a5a5a);
  }
  const uint64_t tasks = tasks_done();
  ork_tensor t0 = host_tensor(pa[0].data()), u0 = host_tensor(got[0].data());
  ork_job* job = nullptr;
  ASSERT_EQ(ork_matmul_submit(dev_, weights, &t0, c.m, &u0, nullptr, &job), ORK_OK) << ork_last_error();
  ASSERT_EQ(ork_job_wait(job, -1), ORK_OK) << ork_last_error();
  ork_job_release(job);
  ork_batch* batch = nullptr;
  ASSERT_EQ(ork_batch_create(dev_, &batch), ORK_OK) << ork_last_error();
  ork_tensor t1 = host_tensor(pa[1].data()), u1 = host_tensor(got[1].data());
  ork_tensor t2 = host_tensor(pa[2].data()), u2 = host_tensor(got[2].data());
  ASSERT_EQ(ork_batch_add_matmul(batch, weights, &t1, c.m, &u1, nullptr), ORK_OK) << ork_last_error();
  ASSERT_EQ(ork_batch_add_matmul(batch, weights, &t2, c.m, &u2, nullptr), ORK_OK) << ork_last_error();
  ork_job* bj = nullptr;
  ASSERT_EQ(ork_batch_submit(batch, &bj), ORK_OK) << ork_last_error();
  ASSERT_EQ(ork_job_wait(bj, -1), ORK_OK) << ork_last_error();
  ork_job_release(bj);
  ork_batch_destroy(batch);
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(got[i], want[i]) << "call " << i;
  EXPECT_EQ(tasks_done() - tasks, 3 * chosen->tasks.size());
  ork_weights_destroy(weights);
}

// One call's operands and result.
struct MixedCall {
  int64_t m = 0;
  std::vector<int8_t> a;
  std::vector<uint8_t> pa;
  std::vector<int32_t> want, got;
};

MixedCall mixed_call(const std::vector<int8_t>& w, int64_t m, int64_t k, int64_t n, unsigned seed) {
  MixedCall c{.m = m, .a = ork::test::draw_int4_values(static_cast<size_t>(m * k), seed, -8, 16)};
  c.pa = pack_int4_values(c.a);
  c.want.resize(static_cast<size_t>(m * n));
  EXPECT_TRUE(ork::ref::matmul_int8(c.a, w, c.want, {m, k, n}).ok());
  c.got.assign(c.want.size(), 0x5a5a5a5a);
  return c;
}

using MakeCall = std::function<MixedCall(int64_t)>;

// A job of `short_m` rows in flight while blocking calls of both lengths run beside it.
void job_beside_blocking_calls(ork_device* dev, ork_weights* weights, const MakeCall& call, int64_t short_m,
                               int64_t long_m) {
  MixedCall j = call(short_m), s1 = call(short_m), p1 = call(long_m);
  ork_tensor jt = host_tensor(j.pa.data()), ju = host_tensor(j.got.data());
  ork_job* job = nullptr;
  ASSERT_EQ(ork_matmul_submit(dev, weights, &jt, j.m, &ju, nullptr, &job), ORK_OK) << ork_last_error();
  EXPECT_EQ(ork_matmul(dev, weights, p1.pa.data(), p1.m, p1.got.data(), nullptr), ORK_OK) << ork_last_error();
  EXPECT_EQ(ork_matmul(dev, weights, s1.pa.data(), s1.m, s1.got.data(), nullptr), ORK_OK) << ork_last_error();
  ASSERT_EQ(ork_job_wait(job, -1), ORK_OK) << ork_last_error();
  ork_job_release(job);
  EXPECT_EQ(j.got, j.want) << "job of " << j.m << " rows";
  EXPECT_EQ(s1.got, s1.want) << "call of " << s1.m << " rows";
  EXPECT_EQ(p1.got, p1.want) << "call of " << p1.m << " rows";
}

// A batch of one call of each length, submitted and replayed with new A in the same memory.
void batch_replays(ork_device* dev, ork_weights* weights, const MakeCall& call, int64_t short_m, int64_t long_m) {
  MixedCall bs = call(short_m), bp = call(long_m);
  ork_batch* batch = nullptr;
  ASSERT_EQ(ork_batch_create(dev, &batch), ORK_OK) << ork_last_error();
  ork_tensor bst = host_tensor(bs.pa.data()), bsu = host_tensor(bs.got.data());
  ork_tensor bpt = host_tensor(bp.pa.data()), bpu = host_tensor(bp.got.data());
  ASSERT_EQ(ork_batch_add_matmul(batch, weights, &bst, bs.m, &bsu, nullptr), ORK_OK) << ork_last_error();
  ASSERT_EQ(ork_batch_add_matmul(batch, weights, &bpt, bp.m, &bpu, nullptr), ORK_OK) << ork_last_error();
  for (int round = 0; round < 2; ++round) {
    if (round == 1) {  // the replay reads A again: same memory, new contents
      const MixedCall ns = call(short_m), np = call(long_m);
      std::copy(ns.pa.begin(), ns.pa.end(), bs.pa.begin());
      std::copy(np.pa.begin(), np.pa.end(), bp.pa.begin());
      bs.want = ns.want, bp.want = np.want;
    }
    ork_job* bj = nullptr;
    ASSERT_EQ(ork_batch_submit(batch, &bj), ORK_OK) << ork_last_error();
    ASSERT_EQ(ork_job_wait(bj, -1), ORK_OK) << ork_last_error();
    ork_job_release(bj);
    EXPECT_EQ(bs.got, bs.want) << bs.m << " rows, batch round " << round;
    EXPECT_EQ(bp.got, bp.want) << bp.m << " rows, batch round " << round;
  }
  ork_batch_destroy(batch);
}

// Two threads, each calling both lengths in turn.
void two_threads(ork_device* dev, ork_weights* weights, const MakeCall& call, int64_t short_m, int64_t long_m) {
  std::vector<std::vector<MixedCall>> per(2);
  for (auto& calls : per)
    for (int64_t m : {short_m, long_m, int64_t{1}, short_m}) calls.push_back(call(m));
  std::vector<int> failed(2, 0);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < 2; ++t)
    threads.emplace_back([&, t] {
      for (MixedCall& c : per[t])
        if (ork_matmul(dev, weights, c.pa.data(), c.m, c.got.data(), nullptr) != ORK_OK) ++failed[t];
    });
  for (auto& th : threads) th.join();
  for (size_t t = 0; t < 2; ++t) {
    EXPECT_EQ(failed[t], 0) << "thread " << t;
    for (const MixedCall& c : per[t]) EXPECT_EQ(c.got, c.want) << "thread " << t << ", " << c.m << " rows";
  }
}

// Every call pattern at once on one int4 weights whose short calls stack their K-slices and
// whose longer ones do not (two plans, two output layouts, one weights): a stacked job in
// flight while blocking calls of both kinds run; a batch of a stacked and a plain call,
// submitted and replayed with new A contents in the same memory; then two threads calling
// both kinds in turn. Every C cell is the reference's and no int16 partial is clamped.
TEST_P(Int4CallPlan, StackedAndPlainCallsMixOnSharedWeights) {
  const int64_t k = 5000, n = 1024, short_m = 2, long_m = 24;
  const auto w = ork::test::draw_int4_values(static_cast<size_t>(k * n), 7, -2, 5);
  const auto pw = pack_int4_values(w);
  ork_weights* weights = nullptr;
  ASSERT_EQ(ork_weights_create(dev_, ORK_DTYPE_INT4, k, n, pw.data(), &weights), ORK_OK) << ork_last_error();
  const int64_t width = weights->resident->slice_k();
  auto stacked = ork::exec::plan_alone(ork::matmul::DType::int4, short_m, k, n, 3, width);
  auto plain = ork::exec::plan_alone(ork::matmul::DType::int4, long_m, k, n, 3, width);
  ASSERT_TRUE(stacked && plain);
  ASSERT_TRUE(stacked->stacked);
  ASSERT_FALSE(plain->stacked);
  const uint64_t saturated = dev_->fake->stats().int4_saturated_cells;
  unsigned seed = 100;
  const MakeCall call = [&](int64_t m) { return mixed_call(w, m, k, n, ++seed); };
  job_beside_blocking_calls(dev_, weights, call, short_m, long_m);
  batch_replays(dev_, weights, call, short_m, long_m);
  two_threads(dev_, weights, call, short_m, long_m);
  EXPECT_EQ(dev_->fake->stats().int4_saturated_cells, saturated);
  ork_weights_destroy(weights);
}

INSTANTIATE_TEST_SUITE_P(Devices, Int4CallPlan, ::testing::Values("emu", "emu-rocket"),
                         [](const auto& info) { return std::string(info.param) == "emu-rocket" ? std::string("emu_rocket")
                                                                                               : std::string(info.param); });

}  // namespace
