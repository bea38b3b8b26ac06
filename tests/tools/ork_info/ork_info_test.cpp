// ork_info run as a user would: --json lists every backend, --stats reports the workload,
// ORK_DEVICE is honoured, and the exit codes.
// Part of meson test 'tool_runs' (the fixture: tests/tools/tool_runs.h).
#include <cstddef>

#include <nlohmann/json.hpp>

#include "ork/ork.h"

#include "tests/tools/tool_runs.h"

namespace ork::tools::test {
namespace {

TEST_F(ToolRuns, OrkInfoJsonListsEveryBackend) {
  RunResult r = run_tool({ork_info_, "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["api_version"], 6);
  ASSERT_EQ(j["devices"].size(), 6u);
  std::vector<std::string> names;
  for (const auto& d : j["devices"]) names.push_back(d["name"]);
  EXPECT_EQ(names, (std::vector<std::string>{"rknpu", "rocket", "emu-rknpu", "emu-rocket", "cpu",
                                             "default"}));
  for (int i : {0, 1}) {  // no NPU on a build machine: both real drivers fail with a reason
    EXPECT_EQ(j["devices"][i]["opened"], false);
    EXPECT_EQ(j["devices"][i]["status"], "ORK_E_NO_DEVICE");
    EXPECT_FALSE(j["devices"][i]["error"].get<std::string>().empty());
  }
  const auto& emu_rknpu = j["devices"][2];
  EXPECT_EQ(emu_rknpu["opened"], true);
  EXPECT_EQ(emu_rknpu["backend"], "emu");
  EXPECT_EQ(emu_rknpu["kernel_interface"], "rknpu");
  EXPECT_EQ(emu_rknpu["emulated"], true);
  EXPECT_EQ(emu_rknpu["cores"], 3);
  EXPECT_EQ(j["devices"][3]["kernel_interface"], "rocket");
  EXPECT_EQ(j["devices"][4]["backend"], "cpu");
  EXPECT_EQ(j["devices"][4]["cores"], 3);  // the NPU's range: cores as host threads
  EXPECT_EQ(j["devices"][5]["backend"], "emu");  // default = auto = emu off the board
}

// ork_info --stats: the counters after its workload (4 decode calls on two weights).
TEST_F(ToolRuns, OrkInfoStatsReportsTheWorkload) {
  RunResult r = run_tool({ork_info_, "--stats", "--stats-calls", "4"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["devices"].size(), 3u);
  for (const auto& d : j["devices"]) {
    SCOPED_TRACE(d["name"].get<std::string>());
    EXPECT_EQ(d["workload"]["exact"], true);
    EXPECT_EQ(d["stats"]["calls"], 4);
    EXPECT_GT(d["stats"]["wall_ns"].get<uint64_t>(), 0u);
    EXPECT_GT(d["memory"]["bytes_resident"].get<uint64_t>(), 1024u * 5120u - 1);  // both weights
    // Every ork_stats counter under its name: calls .. emulator_ns (API 4), cpu_threads (API 5).
    EXPECT_EQ(d["stats"].size(), (sizeof(ork_stats) - offsetof(ork_stats, calls)) / sizeof(uint64_t));
    ASSERT_TRUE(d["stats"].contains("cpu_threads"));
    if (d["name"] == "cpu") {
      EXPECT_GE(d["stats"]["cpu_threads"].get<uint64_t>(), 4u);  // 4 calls, each on >= 1 thread
      continue;
    }
    EXPECT_EQ(d["stats"]["cpu_threads"], 0);
    EXPECT_EQ(d["stats"]["context_builds"], 2);  // one per weight
    EXPECT_EQ(d["stats"]["context_hits"], 2);
    EXPECT_GT(d["stats"]["bytes_to_device"].get<uint64_t>(), 0u);
    EXPECT_EQ(d["memory"]["exact"], true);
    EXPECT_GT(d["memory"]["window_free_bytes"].get<uint64_t>(), 0u);
  }
  EXPECT_EQ(j["devices"][1]["stats"]["device_unknown_calls"], 4);  // emu-rocket: no device time
  EXPECT_GT(j["devices"][0]["stats"]["device_ns"].get<uint64_t>(), 0u);
  r = run_tool({ork_info_, "--stats", "--device", "nosuch"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(contains(r.out, "nosuch")) << r.out;
}

TEST_F(ToolRuns, OrkInfoHonoursOrkDeviceAndExitCodes) {
  RunResult r = run_tool({ork_info_, "--json", "--device", "default"}, {"ORK_DEVICE=cpu"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["ork_device_env"], "cpu");
  EXPECT_EQ(j["devices"][0]["backend"], "cpu");

  r = run_tool({ork_info_, "--device", "rknpu"});
  EXPECT_EQ(r.exit_code, 3);  // device unavailable
  EXPECT_TRUE(contains(r.out, "rknpu") && contains(r.out, "failed")) << r.out;
  r = run_tool({ork_info_, "--device", "emu-rocket"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_TRUE(contains(r.out, "opened  backend emu, 3 cores, interface rocket")) << r.out;
  EXPECT_EQ(run_tool({ork_info_, "--no-such-flag"}).exit_code, 2);
  r = run_tool({ork_info_, "--help"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_TRUE(contains(r.out, "--device")) << r.out;
}

}  // namespace
}  // namespace ork::tools::test
