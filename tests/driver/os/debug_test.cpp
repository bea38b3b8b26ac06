// ORK_DEBUG (driver/os/debug.cpp, parsed by driver/common/env.h debug_names): which
// subsystems a spec turns on, and the line debug_line writes. The variable is read once per
// process, so each spec is checked in a child process of its own (a death test re-executes
// the binary, which then reads the variable fresh) that exits 0 when the spec gave exactly
// the expected answers.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "driver/os/debug.h"

namespace ork::driver {
namespace {

using Expect = std::vector<std::pair<const char*, bool>>;

// Exit code: 0 when every subsystem's answer under `spec` is as expected, else 1 + index.
[[noreturn]] void check_under(const char* spec, const Expect& expect) {
  if (spec) {
    setenv("ORK_DEBUG", spec, 1);
  } else {
    unsetenv("ORK_DEBUG");
  }
  for (size_t i = 0; i < expect.size(); ++i)
    if (debug_enabled(expect[i].first) != expect[i].second) std::_Exit(static_cast<int>(1 + i));
  std::_Exit(0);
}

class OrkDebug : public testing::Test {
 protected:
  void SetUp() override { GTEST_FLAG_SET(death_test_style, "threadsafe"); }
};

TEST_F(OrkDebug, UnsetOrEmptyTurnsNothingOn) {
  EXPECT_EXIT(check_under(nullptr, {{"ioctl", false}, {"all", false}, {"", false}}), testing::ExitedWithCode(0), "");
  EXPECT_EXIT(check_under("", {{"ioctl", false}, {"", false}}), testing::ExitedWithCode(0), "");
}

TEST_F(OrkDebug, ACommaSeparatedListNamesWholeSubsystems) {
  const Expect expect = {{"ioctl", true}, {"io", true}, {"submit", false}, {"ioc", false}, {"ioctls", false}};
  EXPECT_EXIT(check_under("ioctl,io", expect), testing::ExitedWithCode(0), "");
  EXPECT_EXIT(check_under("io,,ioctl,", expect), testing::ExitedWithCode(0), "") << "empty items are skipped";
}

TEST_F(OrkDebug, AllTurnsEverySubsystemOn) {
  EXPECT_EXIT(check_under("all", {{"ioctl", true}, {"submit", true}, {"anything", true}}), testing::ExitedWithCode(0), "");
  EXPECT_EXIT(check_under("submit,all", {{"regcmd", true}}), testing::ExitedWithCode(0), "");
}

TEST_F(OrkDebug, NamesAreCaseAndSpaceExact) {
  EXPECT_EXIT(check_under("IOCTL, submit", {{"ioctl", false}, {"submit", false}, {" submit", true}}),
              testing::ExitedWithCode(0), "");
}

TEST(DebugLine, WritesOnePrefixedLineToStderr) {
  testing::internal::CaptureStderr();
  debug_line("submit", "job 3 on core 1");
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "ork[submit] job 3 on core 1\n");
}

}  // namespace
}  // namespace ork::driver
