// lib/matmul/dump.cpp: ORK_DUMP_REGCMD (dump.h). Each command list goes to its own file,
// named by sequence, dtype, shape, slice group and core, holding the entries as raw
// little-endian 64-bit words; a file that cannot be written is reported and skipped. The
// variable is read once per process, so this test sets it before the first dump.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "lib/matmul/dump.h"
#include "lib/matmul/plan.h"

namespace ork::matmul {
namespace {

std::vector<uint8_t> bytes_of(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST(Dump, OneFilePerListNamedByItsPlanGroupAndCore) {
  char tmpl[] = "/tmp/ork-dump-test-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::filesystem::path dir = tmpl;
  ASSERT_EQ(setenv("ORK_DUMP_REGCMD", tmpl, 1), 0);
  auto plan = make_plan({4, 64, 32}, {.dtype = DType::int8, .cores = 1});
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  dump_commands(*plan, 0, 1, {0x0102030405060708ull, 0x1111222233334444ull});
  dump_commands(*plan, 2, 0, {});
  const std::vector<uint8_t> first = bytes_of(dir / "0000-int8-4x64x32-g0-core1.regcmd");
  const std::vector<uint8_t> want{0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01,
                                  0x44, 0x44, 0x33, 0x33, 0x22, 0x22, 0x11, 0x11};
  EXPECT_EQ(first, want);  // little-endian words, in order
  EXPECT_TRUE(std::filesystem::exists(dir / "0001-int8-4x64x32-g2-core0.regcmd"));
  EXPECT_TRUE(bytes_of(dir / "0001-int8-4x64x32-g2-core0.regcmd").empty());
  // The directory gone: the next list is reported on stderr, by path, and the call returns.
  std::filesystem::remove_all(dir);
  ::testing::internal::CaptureStderr();
  dump_commands(*plan, 0, 0, {1});
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("ORK_DUMP_REGCMD: cannot write " + (dir / "0002-int8-4x64x32-g0-core0.regcmd").string()),
            std::string::npos)
      << err;
  EXPECT_FALSE(std::filesystem::exists(dir));
}

}  // namespace
}  // namespace ork::matmul
