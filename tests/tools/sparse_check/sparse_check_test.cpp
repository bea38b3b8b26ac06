// sparse_check run as a user would: small shapes pass on each interface, the text output,
// and bad usage exits 2.
// Part of meson test 'tool_runs' (the fixture: tests/tools/tool_runs.h).
#include <nlohmann/json.hpp>

#include "tests/tools/tool_runs.h"

namespace ork::tools::test {
namespace {

TEST_F(ToolRuns, SparseCheckPassesOnSmallShapes) {
  struct Case { std::vector<std::string> args; };
  const std::vector<Case> cases = {
      {{"1", "32", "32"}},
      {{"130", "2048", "96", "3"}},  // M-tiles of 128 at K = 2048: edges 127/128
      {{"65", "64", "40", "2", "--full"}},
      {{"3", "6144", "64", "1"}},    // wide K: K-slices
      {{"70", "512", "64", "--device", "emu-rocket", "--mc-cap", "31", "--full"}},
      {{"33", "96", "64", "--device", "cpu", "--full"}},
  };
  for (const Case& cs : cases) {
    std::vector<std::string> argv = {sparse_check_};
    argv.insert(argv.end(), cs.args.begin(), cs.args.end());
    argv.push_back("--json");
    RunResult r = run_tool(argv);
    SCOPED_TRACE(r.err);
    ASSERT_EQ(r.exit_code, 0) << r.out;
    nlohmann::json j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["ok"], true);
    EXPECT_EQ(j["mismatches"], 0);
    EXPECT_GT(j["cells_checked"].get<int64_t>(), 0);
    if (j["full"] == true) {
      EXPECT_EQ(j["cells_checked"], j["m"].get<int64_t>() * j["n"].get<int64_t>());
    }
  }
}

TEST_F(ToolRuns, SparseCheckTextAndBadUsage) {
  RunResult r = run_tool({sparse_check_, "129", "1024", "64"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "M=129 K=1024 N=64 int8 on default (emu via rknpu)")) << r.out;
  EXPECT_TRUE(contains(r.out, "0 mismatch(es)")) << r.out;
  for (const std::vector<std::string>& bad : std::vector<std::vector<std::string>>{
           {"0", "32", "32"}, {"1", "32"}, {"1", "32", "32", "4"}, {"1", "x", "32"},
           {"1", "32", "32", "--bogus"}, {"1", "32", "32", "--device", "nosuch"},
           {"1", "32", "32", "--device", "cpu", "--mc-cap", "-1"},
           {"9223372036854775807", "9223372036854775807", "2"}, {"3000000000", "4", "4"}}) {
    std::vector<std::string> argv = {sparse_check_};
    argv.insert(argv.end(), bad.begin(), bad.end());
    EXPECT_EQ(run_tool(argv).exit_code, 2) << bad[0] << " " << bad[1];
  }
  r = run_tool({sparse_check_, "64", "96", "64", "--full"}, {"ORK_DEVICE=emu-rocket"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "on default (emu via rocket)")) << r.out;
  // The cpu device takes the NPU's core counts (host threads); 4 is refused as on the NPU.
  r = run_tool({sparse_check_, "64", "96", "64", "3"}, {"ORK_DEVICE=cpu"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  r = run_tool({sparse_check_, "64", "96", "64", "4"}, {"ORK_DEVICE=cpu"});
  EXPECT_EQ(r.exit_code, 2) << "4 cores";
  EXPECT_TRUE(contains(r.err, "cores")) << r.err;
  r = run_tool({sparse_check_, "--help"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_TRUE(contains(r.out, "--full")) << r.out;
}

}  // namespace
}  // namespace ork::tools::test
