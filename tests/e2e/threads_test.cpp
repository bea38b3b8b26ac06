// One device used from several threads at once (docs/library.md, "Threads and processes"):
// four threads, a weight each, M = 8, K = 256, N = 128 (the shape that gave wrong cells
// before the device had a queue), every cell of every call checked against the CPU
// reference. Built with -Db_sanitize=thread it is the ThreadSanitizer check
// (docs/library.md, "Threads").
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

class Threads : public ::testing::TestWithParam<std::string> {};

TEST_P(Threads, FourThreadsOneDeviceEveryCellExact) {
  ork_device* dev = nullptr;
  ASSERT_EQ(ork_device_open(GetParam().c_str(), &dev), ORK_OK) << ork_last_error();
  std::vector<Operands> ops;
  std::vector<ork_weights*> weights(kThreads, nullptr);
  for (int t = 0; t < kThreads; ++t) ops.push_back(make_operands(static_cast<uint64_t>(t + 1)));
  // The weights are made from the threads too: creation shares the device's queue.
  std::atomic<int64_t> bad{0}, failed{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      if (ork_weights_create(dev, ORK_DTYPE_INT8, kK, kN, ops[t].w.data(), &weights[t]) != ORK_OK) {
        ++failed;
        return;
      }
      for (int i = 0; i < kCalls; ++i) {
        std::vector<int32_t> c(kM * kN, -1);
        if (ork_matmul(dev, weights[t], ops[t].a[i].data(), kM, c.data(), nullptr) != ORK_OK) {
          ++failed;
          continue;
        }
        bad += wrong_cells(c, ops[t].expected[i]);
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failed.load(), 0) << ork_last_error();
  EXPECT_EQ(bad.load(), 0) << "cells that differ from the reference";
  for (ork_weights* w : weights) ork_weights_destroy(w);
  ork_device_close(dev);
}

INSTANTIATE_TEST_SUITE_P(Backends, Threads, ::testing::Values("emu", "emu-rocket", "cpu"),
                         [](const auto& info) { return ork::testing::device_test_name(info.param); });

}  // namespace
