// lib/sched/beside.h: run_beside runs short work in the caller, at get(), and long work on a
// second thread; either way get() gives the work's result or rethrows its exception.
#include <gtest/gtest.h>

#include <stdexcept>
#include <thread>

#include "lib/sched/beside.h"

namespace ork::sched {
namespace {

TEST(Beside, ShortWorkRunsInTheCallerWhenAskedFor) {
  bool ran = false;
  auto result = run_beside(kBesideOps - 1, [&ran] {
    ran = true;
    return std::this_thread::get_id();
  });
  EXPECT_FALSE(ran);  // deferred: nothing has run yet
  EXPECT_EQ(result.get(), std::this_thread::get_id());
  EXPECT_TRUE(ran);
}

TEST(Beside, LongWorkRunsOnASecondThread) {
  auto result = run_beside(kBesideOps, [] { return std::this_thread::get_id(); });
  EXPECT_NE(result.get(), std::this_thread::get_id());
}

TEST(Beside, TheWorksExceptionReachesTheCaller) {
  for (int ops : {1, kBesideOps}) {
    auto result = run_beside(ops, []() -> int { throw std::runtime_error("no memory"); });
    EXPECT_THROW(result.get(), std::runtime_error) << ops;
  }
}

}  // namespace
}  // namespace ork::sched
