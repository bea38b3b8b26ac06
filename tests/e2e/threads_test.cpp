// One device used from several threads at once (docs/library.md, "Threads and processes"):
// four threads, a weight each, M = 8, K = 256, N = 128 (the shape that gave wrong cells
// before the device had a queue), every cell of every call checked against the CPU
// reference; then the same through asynchronous jobs and batch replays from every thread;
// then all four threads on ONE weights, mixing every kind of call while jobs of every kind
// are in flight on it (each call's result its own, every cell); and all four on one weights
// with every call's key (M, core mask) in turn, which its remembered context must follow.
// Built with -Db_sanitize=thread it is the ThreadSanitizer check (docs/library.md, "Threads").
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
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

// `w_seed`: the weights' seed (0: `seed`).
Operands make_operands(uint64_t seed, uint64_t w_seed = 0) {
  Operands o;
  o.w = ork::ref::random_int8(kK * kN, w_seed != 0 ? w_seed : seed);
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
// failure and every wrong cell fails the test. `shared`: one weights made before the
// threads start, used by all four (each thread's own A).
template <class Calls>
void four_threads(const std::string& device, uint64_t seed, Calls calls, bool shared = false,
                  uint64_t* evictions = nullptr) {
  ork_device* dev = nullptr;
  ASSERT_EQ(ork_device_open(device.c_str(), &dev), ORK_OK) << ork_last_error();
  std::vector<Operands> ops;
  std::vector<ork_weights*> weights(kThreads, nullptr);
  for (int t = 0; t < kThreads; ++t) ops.push_back(make_operands(seed + static_cast<uint64_t>(t), shared ? seed : 0));
  ork_weights* one = nullptr;
  if (shared) {
    ASSERT_EQ(ork_weights_create(dev, ORK_DTYPE_INT8, kK, kN, ops[0].w.data(), &one), ORK_OK) << ork_last_error();
  }
  std::atomic<int64_t> bad{0}, failed{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      if (shared) bad += calls(dev, t, one, ops[t], failed);
      else if (ork_weights_create(dev, ORK_DTYPE_INT8, kK, kN, ops[t].w.data(), &weights[t]) != ORK_OK) ++failed;
      else bad += calls(dev, t, weights[t], ops[t], failed);
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(failed.load(), 0) << ork_last_error();
  EXPECT_EQ(bad.load(), 0) << "cells that differ from the reference";
  if (evictions != nullptr) {
    ork_stats st{};
    st.struct_size = sizeof st;
    EXPECT_EQ(ork_device_get_stats(dev, &st), ORK_OK) << ork_last_error();
    *evictions = st.context_evictions;
  }
  for (ork_weights* w : weights) ork_weights_destroy(w);
  ork_weights_destroy(one);
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

// A call in flight of mixed_calls: its job, a first-submit batch to destroy once waited,
// and the C to check.
struct Pending {
  ork_job* job = nullptr;
  ork_batch* batch = nullptr;
  const std::vector<int32_t>* c = nullptr;
  int call = 0;
};

// Call i of mixed_calls, of `kind` (see there): returns what it left in flight (no job
// for the blocking call, whose cells it checks into `bad`).
Pending start_call(ork_device* dev, ork_weights* w, const Operands& o, int i, int kind, std::vector<int32_t>& c,
                   ork_batch* replay, std::vector<int8_t>& replay_a, const std::vector<int32_t>& replay_c,
                   int64_t& bad, std::atomic<int64_t>& failed) {
  ork_tensor a{}, out{};
  a.host = const_cast<int8_t*>(o.a[i].data());
  out.host = c.data();
  Pending p{.job = nullptr, .batch = nullptr, .c = &c, .call = i};
  switch (kind) {
    case 0:
      if (ork_matmul_submit(dev, w, &a, kM, &out, nullptr, &p.job) != ORK_OK) ++failed;
      break;
    case 1:  // right after a submit of this thread's, still in flight
      if (ork_matmul(dev, w, o.a[i].data(), kM, c.data(), nullptr) != ORK_OK) ++failed;
      else bad += wrong_cells(c, o.expected[i]);
      break;
    case 2:
      if (ork_batch_create(dev, &p.batch) != ORK_OK || ork_batch_add_matmul(p.batch, w, &a, kM, &out, nullptr) != ORK_OK ||
          ork_batch_submit(p.batch, &p.job) != ORK_OK)
        ++failed;
      break;
    default:
      replay_a = o.a[i];
      p.c = &replay_c;  // waited before the next replay (four calls later) overwrites it
      if (ork_batch_submit(replay, &p.job) != ORK_OK) ++failed;
      break;
  }
  return p;
}

// Thread t's calls on the weights every thread shares (one M): call i is in turn a
// submit, a blocking ork_matmul, a batch's first submit and a replay of the thread's own
// batch (A copied in); each asynchronous call is waited two calls later, so every kind of
// call runs while jobs of every kind, this thread's and the others', are in flight on the
// same context's buffers. Returns the wrong cells; counts failures.
int64_t mixed_calls(ork_device* dev, ork_weights* w, const Operands& o, int t, std::atomic<int64_t>& failed) {
  int64_t bad = 0;
  std::vector<std::vector<int32_t>> c(kCalls, std::vector<int32_t>(kM * kN, -1));
  std::vector<int8_t> replay_a(kM * kK);
  std::vector<int32_t> replay_c(kM * kN, -1);
  ork_tensor ra{}, rc{};
  ra.host = replay_a.data();
  rc.host = replay_c.data();
  ork_batch* replay = nullptr;
  if (ork_batch_create(dev, &replay) != ORK_OK || ork_batch_add_matmul(replay, w, &ra, kM, &rc, nullptr) != ORK_OK) {
    ++failed;
    ork_batch_destroy(replay);
    return 0;
  }
  std::vector<Pending> pending;
  auto finish = [&](Pending& p) {
    if (ork_job_wait(p.job, -1) != ORK_OK) ++failed;
    else bad += wrong_cells(*p.c, o.expected[p.call]);
    ork_job_release(p.job);
    ork_batch_destroy(p.batch);
  };
  for (int i = 0; i < kCalls; ++i) {
    Pending p = start_call(dev, w, o, i, (t + i) % 4, c[i], replay, replay_a, replay_c, bad, failed);
    if (p.job != nullptr) pending.push_back(p);
    else ork_batch_destroy(p.batch);
    if (pending.size() > 2) {
      finish(pending.front());
      pending.erase(pending.begin());
    }
  }
  for (Pending& p : pending) finish(p);
  ork_batch_destroy(replay);
  return bad;
}

TEST_P(Threads, FourThreadsOneWeightsEveryKindOfCallEveryCellExact) {
  four_threads(GetParam(), 21, [](ork_device* dev, int t, ork_weights* w, const Operands& o,
                                   std::atomic<int64_t>& failed) { return mixed_calls(dev, w, o, t, failed); },
               /*shared=*/true);
}

// Blocking calls on the weights every thread shares, each call of its own key in turn (M 1..3
// of A's rows, core masks 1, 3, 7, 2 and 4): the handle remembers the context of whichever
// call ran last (matmul::ContextMemo), so a call finds another thread's, or another key's,
// memo and must recall it only when it is its own key's; each C checked over its M rows.
int64_t every_key_calls(ork_device* dev, int t, ork_weights* w, const Operands& o, std::atomic<int64_t>& failed) {
  static constexpr uint32_t kMasks[] = {1, 3, 7, 2, 4};
  int64_t bad = 0;
  for (int i = 0; i < kCalls; ++i) {
    const int64_t m = 1 + (t + i) % 3;
    ork_matmul_options opt{};
    opt.struct_size = sizeof opt;
    opt.core_mask = kMasks[(t + 2 * i) % 5];
    std::vector<int32_t> c(static_cast<size_t>(m * kN), -1);
    if (ork_matmul(dev, w, o.a[i].data(), m, c.data(), &opt) != ORK_OK) {
      ++failed;
      continue;
    }
    const std::vector<int32_t> want(o.expected[i].begin(), o.expected[i].begin() + m * kN);
    bad += wrong_cells(c, want);
  }
  return bad;
}

TEST_P(Threads, FourThreadsOneWeightsEveryKeyInTurnEveryCellExact) {
  four_threads(GetParam(), 31, every_key_calls, /*shared=*/true);
}

// The memo under evictions: a context cache far smaller than the calls' contexts
// (ORK_CONTEXT_CACHE_BYTES, lib/api/device.cpp), so nearly every call drops another's context
// while two threads make every kind of call (submits, blocking calls, batches, replays) and
// two make blocking calls of every key, all on one weights. A memo that outlived its context
// would run a freed or rebuilt one; every cell is checked, and the cache must have evicted.
TEST_P(Threads, FourThreadsEveryKindAndKeyUnderEvictionsEveryCellExact) {
  struct SmallCache {
    SmallCache() { setenv("ORK_CONTEXT_CACHE_BYTES", "16K", 1); }
    ~SmallCache() { unsetenv("ORK_CONTEXT_CACHE_BYTES"); }
  } small;
  uint64_t evictions = 0;
  four_threads(GetParam(), 41, [](ork_device* dev, int t, ork_weights* w, const Operands& o,
                                   std::atomic<int64_t>& failed) {
    return t % 2 == 0 ? mixed_calls(dev, w, o, t, failed) : every_key_calls(dev, t, w, o, failed);
  }, /*shared=*/true, &evictions);
  if (GetParam() != std::string("cpu")) {  // the cpu device builds no contexts
    EXPECT_GT(evictions, 0u) << "the bound evicted nothing: the test tests no eviction";
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, Threads, ::testing::Values("emu", "emu-rocket", "cpu"),
                         [](const auto& info) { return ork::testing::device_test_name(info.param); });

}  // namespace
