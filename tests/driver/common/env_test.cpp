// The environment parsers (driver/common/env.h): byte counts with K/M/G suffixes, the
// default when unset or empty, and every malformed value refused naming variable and value.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "driver/common/env.h"

namespace ork {
namespace {

constexpr const char* kVar = "ORK_TEST_ENV_BYTES";

Result<uint64_t> parse(const char* value) {
  if (value) setenv(kVar, value, 1);
  else unsetenv(kVar);
  auto r = env_bytes(kVar, 777);
  unsetenv(kVar);
  return r;
}

TEST(EnvBytes, ParsesCountsAndSuffixes) {
  EXPECT_EQ(*parse(nullptr), 777u);
  EXPECT_EQ(*parse(""), 777u);
  EXPECT_EQ(*parse("0"), 0u);
  EXPECT_EQ(*parse("1073741824"), uint64_t{1} << 30);
  EXPECT_EQ(*parse("64K"), uint64_t{64} << 10);
  EXPECT_EQ(*parse("64k"), uint64_t{64} << 10);
  EXPECT_EQ(*parse("512M"), uint64_t{512} << 20);
  EXPECT_EQ(*parse("6G"), uint64_t{6} << 30);
  EXPECT_EQ(*parse("18446744073709551615"), UINT64_MAX);
}

TEST(EnvBytes, RefusesMalformedValuesNamingThem) {
  for (const char* bad : {"12Q", "-1", "+5", "M", "1.5G", "5 M", "5MB", "0x10", "18446744073709551616",
                          "17179869184G"}) {
    auto r = parse(bad);
    ASSERT_FALSE(r) << bad;
    EXPECT_NE(r.error().message.find(std::string(kVar) + "='" + bad + "'"), std::string::npos) << r.error().message;
    EXPECT_EQ(r.error().code, -EINVAL);
  }
}

TEST(PhysicalMemory, IsKnownHere) { EXPECT_GT(physical_memory_bytes(), uint64_t{1} << 28); }

}  // namespace
}  // namespace ork
