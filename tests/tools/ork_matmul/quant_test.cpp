// ork_matmul --quant as a user runs it: fp32 .npy in, fp32 .npy out, bit-identical to the
// reference; bad usage exits 2 with a message.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "lib/quant/reference.h"
#include "tests/support/quant_test_util.h"
#include "tools/common/npy.h"

namespace ork::quant {
namespace {

using testing::first_difference;
using testing::random_matrix;

class ToolQuant : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* tool = std::getenv("ORK_MATMUL");
    ASSERT_NE(tool, nullptr) << "ORK_MATMUL names the ork_matmul binary";
    tool_ = tool;
    dir_ = std::filesystem::temp_directory_path() / ("ork_quant_tool_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string write(const char* name, const std::vector<float>& x, int64_t rows, int64_t cols) {
    const std::string p = (dir_ / name).string();
    auto s = tools::npy_write_matrix(p, tools::NpyDtype::fp32, rows, cols,
                                     {reinterpret_cast<const uint8_t*>(x.data()), x.size() * sizeof(float)});
    EXPECT_TRUE(s.ok()) << s.error().message;
    return p;
  }
  int run(const std::string& args) {
    const int rc = std::system((tool_ + " " + args + " > " + (dir_ / "log").string() + " 2>&1").c_str());
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
  }
  std::string tool_;
  std::filesystem::path dir_;
};

TEST_F(ToolQuant, EveryModeWritesTheReferenceBytes) {
  const int64_t m = 5, k = 200, n = 40;
  const auto a = random_matrix(m, k, 61), w = random_matrix(k, n, 62);
  const std::string ap = write("a.npy", a, m, k), bp = write("b.npy", w, k, n), cp = (dir_ / "c.npy").string();
  for (const char* mode : {"w8a8", "w4a8", "w4a4"})
    for (int group : {0, 32, 128})
      for (const char* dev : {"emu", "cpu"}) {
        const std::string args = "--a " + ap + " --b " + bp + " --out " + cp + " --device " + dev + " --quant " + mode +
                                 " --group " + std::to_string(group) + " --per-row -q";
        ASSERT_EQ(run(args), 0) << args;
        auto c = tools::npy_read_matrix(cp, tools::NpyDtype::fp32);
        ASSERT_TRUE(c.ok()) << c.error().message;
        ASSERT_EQ(c->rows, m);
        ASSERT_EQ(c->cols, n);
        std::vector<float> got(static_cast<size_t>(m * n));
        std::memcpy(got.data(), c->bytes.data(), got.size() * sizeof(float));
        const Mode md = *parse_mode(mode);
        auto want = reference::qmatmul(a, w, m, k, n, {weight_bits(md), group}, {activation_bits(md), true});
        ASSERT_EQ(first_difference(got, *want, n), "") << args;
      }
}

TEST_F(ToolQuant, BadUsageExitsTwo) {
  const auto a = random_matrix(2, 64, 1), w = random_matrix(64, 8, 2);
  const std::string ap = write("a.npy", a, 2, 64), bp = write("b.npy", w, 64, 8), cp = (dir_ / "c.npy").string();
  const std::string io = "--a " + ap + " --b " + bp + " --out " + cp + " --device cpu";
  EXPECT_EQ(run(io + " --quant w8a4"), 2);
  EXPECT_EQ(run(io + " --quant w8a8 --group 48"), 2);
  EXPECT_EQ(run(io + " --group 32"), 2);         // --group without --quant
  EXPECT_EQ(run(io + " --quant w8a8 --group 64"), 0);
  EXPECT_EQ(run(io), 2);                         // fp32 files without --quant: wrong dtype
}

}  // namespace
}  // namespace ork::quant
