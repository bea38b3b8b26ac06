// The kept workers' claiming run (lib/ref/workers.h run_claiming): every item of a claiming
// loop done exactly once whoever takes it; no helper inside fn, or entering it, once the call
// has returned (a withdrawn helper must never start a finished call's fn); the caller alone
// when the kept workers are busy, without waiting for them; an exception on any thread the
// caller's; the workers usable after all of it.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <new>
#include <thread>
#include <vector>

#include "lib/ref/workers.h"

namespace ork::ref::detail {
namespace {

// One call of a claiming loop over `items` items: each item's count, which threads took some.
struct ClaimRun {
  std::vector<std::atomic<int>> done;
  std::atomic<int64_t> next{0};
  std::atomic<int> inside{0};      // threads inside fn now
  std::atomic<unsigned> entered{0};  // bit i: thread index i entered fn
  explicit ClaimRun(size_t items) : done(items) {}
  void run(int threads) {
    run_claiming(threads, [this](int index) {
      ++inside;
      entered |= 1u << index;
      for (int64_t i; (i = next.fetch_add(1)) < static_cast<int64_t>(done.size());) {
        ++done[static_cast<size_t>(i)];
      }
      --inside;
    });
  }
};

TEST(WorkersClaiming, EveryItemIsDoneOnceAndNoHelperOutlivesTheCall) {
  // Many short calls: a helper often wakes after the caller took every item (then it is
  // withdrawn), sometimes before (then it is waited for). Either way each item once, and no
  // thread is inside fn when the call returns.
  for (int threads : {2, 3})
    for (int call = 0; call < 2000; ++call) {
      ClaimRun r(static_cast<size_t>(1 + call % 97));
      r.run(threads);
      ASSERT_EQ(r.inside.load(), 0) << "a helper still inside fn after the call returned, call " << call;
      for (size_t i = 0; i < r.done.size(); ++i) ASSERT_EQ(r.done[i].load(), 1) << "item " << i << " call " << call;
    }
}

// The caller does not wait for a helper that has not started: with the kept worker asleep
// (a millisecond between calls, past its polling) the caller takes every item before it
// wakes, and returns without it. A plain run_on_threads waits for it to enter fn every time.
TEST(WorkersClaiming, TheCallerDoesNotWaitForAHelperThatHasNotStarted) {
  int without_helper = 0;
  for (int call = 0; call < 200 && without_helper == 0; ++call) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    ClaimRun r(4);
    r.run(2);
    if (r.entered.load() == 1u) ++without_helper;
  }
  EXPECT_GT(without_helper, 0) << "every call waited for its helper to start";
}

// A withdrawn helper that wakes late must skip the old call, not run its (destroyed) fn: each
// call's fn checks that its own call is still the current one.
TEST(WorkersClaiming, AWithdrawnHelperNeverStartsAFinishedCall) {
  static std::atomic<int> current{0};
  std::atomic<int> stale{0};
  for (int call = 1; call <= 3000; ++call) {
    current = call;
    run_claiming(2, [call, &stale](int) {
      if (current.load() != call) ++stale;
    });
  }
  current = 0;
  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // a late helper's chance to misbehave
  EXPECT_EQ(stale.load(), 0);
}

TEST(WorkersClaiming, TheCallerRunsAloneWhenTheKeptWorkersAreBusy) {
  std::atomic<bool> holding{false}, release{false};
  std::thread other([&] {  // holds the kept workers until released
    run_on_threads(2, std::function<void(int)>([&](int) {
      holding = true;
      while (!release.load()) std::this_thread::yield();
    }));
  });
  while (!holding.load()) std::this_thread::yield();
  ClaimRun r(64);
  r.run(2);  // returns though the other caller still holds the workers
  EXPECT_EQ(r.entered.load(), 1u) << "only the caller (index 0) ran fn: no thread made, none waited for";
  for (size_t i = 0; i < r.done.size(); ++i) EXPECT_EQ(r.done[i].load(), 1) << i;
  release = true;
  other.join();
}

TEST(WorkersClaiming, AnExceptionIsTheCallersAndTheWorkersStayUsable) {
  EXPECT_THROW(run_claiming(2, [](int index) {
                 if (index == 0) throw std::bad_alloc();
               }),
               std::bad_alloc);
  ClaimRun r(1000);
  r.run(2);
  for (size_t i = 0; i < r.done.size(); ++i) ASSERT_EQ(r.done[i].load(), 1) << i;
  std::atomic<int> sum{0};  // the plain run still runs every index
  run_on_threads(3, std::function<void(int)>([&](int i) { sum += i + 1; }));
  EXPECT_EQ(sum.load(), 6);
}

}  // namespace
}  // namespace ork::ref::detail
