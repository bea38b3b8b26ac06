// One device used from several threads at once (docs/library.md, "Threads and processes"):
// four threads, a weight each, M = 8, K = 256, N = 128 (the shape that gave wrong cells
// before the device had a queue), every cell of every call checked against the CPU
// reference; then the same through asynchronous jobs and batch replays from every thread.
// Built with -Db_sanitize=thread it is the ThreadSanitizer check (docs/library.md, "Threads").
#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "lib/ref/oracle.h"
#include "lib/ref/random.h"
#include "ork/ork.h"
#include "tests/support/device_names.h"

namespace {

constexpr int64_t kM = 8, kK = 256, kN = 128;
constexpr int kThreads = 4;
constexpr int kCalls = 12;  // per thread

struct Operands {
  std::vector<int8_t> w;
  std::vector<std::vector<int8_t>> a;         // one A per call
  std::vector<std::vector<int32_t>> expected;  // the reference C of each
};

Operands make_operands(uint64_t seed) {
  Operands o;
  o.w = ork::ref::random_int8(kK * kN, seed);
  for (int i = 0; i < kCalls; ++i) {
    o.a.push_back(ork::ref::random_int8(kM * kK, seed * 1000 + static_cast<uint64_t>(i)));
    std::vector<int32_t> c(kM * kN);
    EXPECT_TRUE(ork::ref::matmul_int8(o.a.back(), o.w, c, {kM, kK, kN}).ok());
    o.expected.push_back(std::move(c));
  }
  return o;
}

// Mismatching cells of `got` against `want` (0 = bit-exact).
int64_t wrong_cells(const std::vector<int32_t>& got, const std::vector<int32_t>& want) {
  int64_t bad = 0;
  for (size_t i = 0; i < got.size(); ++i) bad += got[i] != want[i];
  return bad;
}

// Four threads on one device opened by name, each with its own operands (seeds seed..seed+3):
// each thread makes its weights (creation shares the device's queue too), then runs
// `calls` (thread index, weights, operands, failure count) -> wrong cells. Every call's
// failure and every wrong cell fails the test.
template <class Calls>
void four_threads(const std::string& device, uint64_t seed, Calls calls) {
  ork_device* dev = nullptr;
  ASSERT_EQ(ork_device_open(device.c_str(), &dev), ORK_OK) << ork_last_error();
  std::vector<Operands> ops;
  std::vector<ork_weights*> weights(kThreads, nullptr);
  for (int t = 0; t < kThreads; ++t) ops.push_back(make_operands(seed + static_cast<uint64_t>(t)));
  std::atomic<int64_t> bad{0}, failed{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      if (ork_weights_create(dev, ORK_DTYPE_INT8, kK, kN, ops[t].w.data(), &weights[t]) != ORK_OK) ++failed;
      else bad += calls(dev, t, weights[t], ops[t], failed);
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(failed.load(), 0) << ork_last_error();
  EXPECT_EQ(bad.load(), 0) << "cells that differ from the reference";
  for (ork_weights* w : weights) ork_weights_destroy(w);
  ork_device_close(dev);
}

// Blocking ork_matmul calls, one C per call.
int64_t sync_calls(ork_device* dev, ork_weights* w, const Operands& o, std::atomic<int64_t>& failed) {
  int64_t bad = 0;
  for (int i = 0; i < kCalls; ++i) {
    std::vector<int32_t> c(kM * kN, -1);
    if (ork_matmul(dev, w, o.a[i].data(), kM, c.data(), nullptr) != ORK_OK) ++failed;
    else bad += wrong_cells(c, o.expected[i]);
  }
  return bad;
}

class Threads : public ::testing::TestWithParam<std::string> {};

TEST_P(Threads, FourThreadsOneDeviceEveryCellExact) {
  four_threads(GetParam(), 1, [](ork_device* dev, int, ork_weights* w, const Operands& o, std::atomic<int64_t>& failed) {
    return sync_calls(dev, w, o, failed);
  });
}

// Thread t's calls through the asynchronous entry points: even threads submit every call
// and wait two behind (two jobs in flight per thread, interleaved with the other threads'
// on the one device queue), odd threads record one batch of their matmul and replay it
// with each call's A copied into the batch's A. Returns the wrong cells; counts failures.
int64_t async_calls(ork_device* dev, ork_weights* w, const Operands& o, int t, std::atomic<int64_t>& failed) {
  int64_t bad = 0;
  std::vector<std::vector<int32_t>> c(kCalls, std::vector<int32_t>(kM * kN, -1));
  if (t % 2 == 0) {
    std::vector<ork_job*> jobs(kCalls, nullptr);
    auto finish = [&](int i) {
      if (ork_job_wait(jobs[i], -1) != ORK_OK) ++failed;
      else bad += wrong_cells(c[i], o.expected[i]);
      ork_job_release(jobs[i]);
    };
    for (int i = 0; i < kCalls; ++i) {
      ork_tensor a{}, out{};
      a.host = const_cast<int8_t*>(o.a[i].data());
      out.host = c[i].data();
      if (ork_matmul_submit(dev, w, &a, kM, &out, nullptr, &jobs[i]) != ORK_OK) ++failed;
      if (i >= 2 && jobs[i - 2] != nullptr) finish(i - 2);
    }
    for (int i = kCalls - 2; i < kCalls; ++i)
      if (jobs[i] != nullptr) finish(i);
    return bad;
  }
  std::vector<int8_t> a_in(kM * kK);
  std::vector<int32_t> c_out(kM * kN, -1);
  ork_tensor a{}, out{};
  a.host = a_in.data();
  out.host = c_out.data();
  ork_batch* b = nullptr;
  if (ork_batch_create(dev, &b) != ORK_OK || ork_batch_add_matmul(b, w, &a, kM, &out, nullptr) != ORK_OK) {
    ++failed;
    ork_batch_destroy(b);
    return bad;
  }
  for (int i = 0; i < kCalls; ++i) {
    a_in = o.a[i];
    ork_job* j = nullptr;
    if (ork_batch_submit(b, &j) != ORK_OK || ork_job_wait(j, -1) != ORK_OK) ++failed;
    else bad += wrong_cells(c_out, o.expected[i]);
    ork_job_release(j);
  }
  ork_batch_destroy(b);
  return bad;
}

TEST_P(Threads, FourThreadsSubmitWaitAndReplayEveryCellExact) {
  four_threads(GetParam(), 11, [](ork_device* dev, int t, ork_weights* w, const Operands& o,
                                   std::atomic<int64_t>& failed) { return async_calls(dev, w, o, t, failed); });
}

INSTANTIATE_TEST_SUITE_P(Backends, Threads, ::testing::Values("emu", "emu-rocket", "cpu"),
                         [](const auto& info) { return ork::testing::device_test_name(info.param); });

}  // namespace
