// Sizes on the command line (tools/common/size_arg.cpp): the suffixes it takes, the inputs it
// refuses with a message naming them, the 64-bit bound, and format_bytes's units.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "tools/common/size_arg.h"

namespace ork::io::tools {
namespace {

TEST(ParseSize, TakesBinarySuffixesShortAndLong) {
  const std::pair<const char*, uint64_t> cases[] = {
      {"0", 0},           {"4096", 4096},          {"4096B", 4096},          {"64K", 64ull << 10},
      {"64KiB", 64ull << 10}, {"512M", 512ull << 20}, {"512MiB", 512ull << 20}, {"2G", 2ull << 30},
      {"2GiB", 2ull << 30},   {"3T", 3ull << 40},     {"3TiB", 3ull << 40},
  };
  for (const auto& [text, bytes] : cases) {
    auto r = parse_size(text);
    ASSERT_TRUE(r.ok()) << text;
    EXPECT_EQ(*r, bytes) << text;
  }
}

TEST(ParseSize, RefusesAnythingElseNamingIt) {
  for (const char* text : {"", "K", "-1", "+4", "1.5G", "4 K", "4k", "4KB", "4X", " 4", "0x10"}) {
    auto r = parse_size(text);
    ASSERT_FALSE(r.ok()) << text;
    EXPECT_EQ(r.error().code, -EINVAL) << text;
    EXPECT_NE(r.error().message.find(std::string("\"") + text + "\""), std::string::npos) << r.error().message;
  }
}

TEST(ParseSize, RefusesWhatDoesNotFitIn64Bits) {
  EXPECT_FALSE(parse_size("1234567890123").ok()) << "more than 12 digits";
  EXPECT_EQ(*parse_size("999999999999"), 999999999999ull);
  EXPECT_EQ(*parse_size("16777215T"), 16777215ull << 40);  // 2^24 - 1 TiB: fits
  const auto r = parse_size("16777216T");                   // 2^64 bytes
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("64 bits"), std::string::npos) << r.error().message;
}

TEST(FormatBytes, PicksTheLargestUnitBelowTheValue) {
  EXPECT_EQ(format_bytes(0), "0 B");
  EXPECT_EQ(format_bytes(1023), "1023 B");
  EXPECT_EQ(format_bytes(1024), "1.00 KiB");
  EXPECT_EQ(format_bytes(1536), "1.50 KiB");
  EXPECT_EQ(format_bytes(2ull << 30), "2.00 GiB");
  EXPECT_EQ(format_bytes(5ull << 50), "5120.00 TiB") << "TiB is the largest unit";
}

}  // namespace
}  // namespace ork::io::tools
