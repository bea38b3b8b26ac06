// Calls sharing weights while a job is in flight (ork.h "Asynchronous jobs and batches": a
// new call on the same weights, M and options first completes the job in flight on them).
// Every pairing of the four ways to run a matmul (a blocking ork_matmul, ork_matmul_submit,
// a batch's first submit, a batch's replay) on one weights and one M, the first left in
// flight while the second runs, on every device; every cell of both results against the
// CPU reference. The threaded counterpart is in threads_test.cpp.
#include <gtest/gtest.h>

#include <array>
#include <string>
#include <tuple>
#include <vector>

#include "lib/ref/oracle.h"
#include "lib/ref/random.h"
#include "ork/ork.h"
#include "tests/support/device_names.h"

namespace {

constexpr int64_t kM = 5, kK = 256, kN = 128;  // 640 cells of C

enum class Kind { sync, submit, batch, replay };
constexpr std::array<Kind, 4> kKinds{Kind::sync, Kind::submit, Kind::batch, Kind::replay};

std::string kind_name(Kind k) {
  switch (k) {
    case Kind::sync: return "sync";
    case Kind::submit: return "submit";
    case Kind::batch: return "batch";
    case Kind::replay: return "replay";
  }
  return "?";
}

ork_tensor shared_host(void* p) {
  ork_tensor t{};
  t.host = p;
  return t;
}

// One call: its A, its C, the reference C, and what it left in flight.
struct SharedCall {
  std::vector<int8_t> a;
  std::vector<int32_t> c = std::vector<int32_t>(kM * kN, -1);
  std::vector<int32_t> want;
  ork_job* job = nullptr;
  ork_batch* batch = nullptr;
};

class SharedWeights : public ::testing::TestWithParam<std::tuple<std::string, Kind, Kind>> {
 protected:
  void SetUp() override {
    ASSERT_EQ(ork_device_open(std::get<0>(GetParam()).c_str(), &dev_), ORK_OK) << ork_last_error();
    w_ = ork::ref::random_int8(kK * kN, 7);
    ASSERT_EQ(ork_weights_create(dev_, ORK_DTYPE_INT8, kK, kN, w_.data(), &weights_), ORK_OK) << ork_last_error();
  }
  void TearDown() override {
    ork_weights_destroy(weights_);
    ork_device_close(dev_);
  }

  SharedCall make_call(uint64_t seed) {
    SharedCall call;
    call.a = ork::ref::random_int8(kM * kK, seed);
    call.want.resize(kM * kN);
    EXPECT_TRUE(ork::ref::matmul_int8(call.a, w_, call.want, {kM, kK, kN}).ok());
    return call;
  }

  // Starts `call` the `kind` way; a job is left in flight in call.job (none for sync). A
  // replay's batch is recorded and run once first (on the same A; its C then reset).
  void start(Kind kind, SharedCall& call) {
    ork_tensor a = shared_host(call.a.data()), c = shared_host(call.c.data());
    if (kind == Kind::sync) {
      ASSERT_EQ(ork_matmul(dev_, weights_, call.a.data(), kM, call.c.data(), nullptr), ORK_OK) << ork_last_error();
      return;
    }
    if (kind == Kind::submit) {
      ASSERT_EQ(ork_matmul_submit(dev_, weights_, &a, kM, &c, nullptr, &call.job), ORK_OK) << ork_last_error();
      return;
    }
    ASSERT_EQ(ork_batch_create(dev_, &call.batch), ORK_OK) << ork_last_error();
    ASSERT_EQ(ork_batch_add_matmul(call.batch, weights_, &a, kM, &c, nullptr), ORK_OK) << ork_last_error();
    if (kind == Kind::replay) {
      ork_job* first = nullptr;
      ASSERT_EQ(ork_batch_submit(call.batch, &first), ORK_OK) << ork_last_error();
      ASSERT_EQ(ork_job_wait(first, -1), ORK_OK) << ork_last_error();
      ork_job_release(first);
      EXPECT_EQ(call.c, call.want) << "the replay's recording run";
      call.c.assign(call.c.size(), -1);
    }
    ASSERT_EQ(ork_batch_submit(call.batch, &call.job), ORK_OK) << ork_last_error();
  }

  void finish(SharedCall& call) {
    if (call.job != nullptr) {
      EXPECT_EQ(ork_job_wait(call.job, -1), ORK_OK) << ork_last_error();
    }
    ork_job_release(call.job);
    ork_batch_destroy(call.batch);
    call.job = nullptr;
    call.batch = nullptr;
  }

  ork_device* dev_ = nullptr;
  std::vector<int8_t> w_;
  ork_weights* weights_ = nullptr;
};

// The first call is left in flight, the second runs on the same weights and M, then the
// first is waited: each C is its own product, every cell.
TEST_P(SharedWeights, SecondCallDoesNotChangeTheFirstsResult) {
  const auto& [device, first_kind, second_kind] = GetParam();
  SharedCall first = make_call(1), second = make_call(2);
  ASSERT_NE(first.want, second.want);
  start(first_kind, first);
  start(second_kind, second);
  finish(first);
  finish(second);
  EXPECT_EQ(first.c, first.want) << kind_name(first_kind) << " then " << kind_name(second_kind)
                                 << ": the first call's C";
  EXPECT_EQ(second.c, second.want) << kind_name(first_kind) << " then " << kind_name(second_kind)
                                   << ": the second call's C";
}

// Three in a row, the middle one waited last: the queue completes in submission order
// whatever forced the completion.
TEST_P(SharedWeights, ThreeCallsMiddleWaitedLast) {
  const auto& [device, first_kind, second_kind] = GetParam();
  SharedCall a = make_call(11), b = make_call(12), c = make_call(13);
  start(first_kind, a);
  start(second_kind, b);
  start(first_kind, c);
  finish(a);
  finish(c);
  finish(b);
  EXPECT_EQ(a.c, a.want);
  EXPECT_EQ(b.c, b.want);
  EXPECT_EQ(c.c, c.want);
}

INSTANTIATE_TEST_SUITE_P(
    Pairs, SharedWeights,
    ::testing::Combine(::testing::Values("emu", "emu-rocket", "cpu"), ::testing::ValuesIn(kKinds),
                       ::testing::ValuesIn(kKinds)),
    [](const auto& info) {
      return ork::testing::device_test_name(std::get<0>(info.param)) + "_" + kind_name(std::get<1>(info.param)) +
             "_then_" + kind_name(std::get<2>(info.param));
    });

}  // namespace
