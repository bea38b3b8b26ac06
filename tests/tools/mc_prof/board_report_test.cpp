// Board reports (tools/mc_prof/board_report.h), checked field by field: the figures read,
// the runbook's figures read with wall times skipped, and bad reports saying why.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "tests/support/scratch_dir.h"
#include "tools/mc_prof/board_report.h"

namespace ork::tools {
namespace {

std::string write(const std::string& name, const std::string& text) {
  const std::string path = ork::test::process_scratch().file(name);
  std::ofstream(path) << text;
  return path;
}

TEST(BoardReport, ReadsTheFigures) {
  const auto r = read_board_report(write("good.json", R"({"figures": [
      {"name": "a", "measured_us": 3000.5, "m": 512, "k": 2048, "n": 2048, "cores": 1, "mc_cap": 0, "board": "x"},
      {"name": "b", "measured_us": 500, "m": 31, "k": 2048, "n": 2048, "cores": 1, "mc_cap": 31, "layout": "per_tile"}]})"));
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->figures.size(), 2u);
  const auto& f = r->figures;
  EXPECT_EQ(f[0].name, "a");
  EXPECT_EQ(f[0].published_us, 3000.5);
  EXPECT_FALSE(f[0].setup.per_tile);
  EXPECT_EQ(f[0].setup.m, 512);
  EXPECT_TRUE(f[1].setup.per_tile);
  EXPECT_EQ(f[1].setup.mc, 31);
  EXPECT_TRUE(r->skipped.empty());
}

// The board runbook's figures (docs/board.md): both interfaces under one name, rocket's
// a wall time (skipped: the model is device time).
TEST(BoardReport, ReadsTheRunbooksFiguresAndSkipsWallTimes) {
  const std::string common = R"("m": 512, "k": 2048, "n": 2048, "cores": 1, "mc_cap": 31, "mc": 31, "layout": "chained")";
  const auto r = read_board_report(write("runbook.json", R"({"mode": "real", "figures": [
      {"name": "K2048/1c/cap31", "interface": "rknpu", "measured_us": 8300.5, "device_source": "kernel", )" + common + R"(},
      {"name": "K2048/1c/cap31", "interface": "rocket", "measured_us": 9000, "device_source": "wall", )" + common + "}]}"));
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->figures.size(), 1u);
  EXPECT_EQ(r->figures[0].name, "rknpu K2048/1c/cap31");
  EXPECT_EQ(r->figures[0].setup.mc, 31);
  ASSERT_EQ(r->skipped.size(), 1u);
  EXPECT_NE(r->skipped[0].find("rocket K2048/1c/cap31"), std::string::npos);
  const auto none = read_board_report(write("walls.json", R"({"figures": [
      {"name": "x", "measured_us": 9000, "device_source": "wall", )" + common + "}]}"));
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.error().message.find("no figure with a device time"), std::string::npos);
}

TEST(BoardReport, BadReportsSayWhy) {
  auto err = [](const std::string& text) {
    const auto r = read_board_report(write("bad.json", text));
    return r.ok() ? std::string("accepted") : r.error().message;
  };
  const std::string ok = R"("m": 1, "k": 32, "n": 32, "cores": 1, "mc_cap": 0)";
  EXPECT_NE(read_board_report("/nonexistent/report.json").error().message.find("cannot read the report"), std::string::npos);
  EXPECT_NE(err("{\"figures\": [").find("bad.json': not valid JSON"), std::string::npos);
  EXPECT_NE(err("{}").find("missing key \"figures\""), std::string::npos);
  EXPECT_NE(err(R"({"figures": []})").find("non-empty list"), std::string::npos);
  EXPECT_NE(err(R"({"figures": [{"measured_us": 5, )" + ok + "}]}").find("figures[0]: missing \"name\""), std::string::npos);
  EXPECT_NE(err(R"({"figures": [{"name": "x", )" + ok + "}]}").find("figures[0] (\"x\"): missing \"measured_us\""),
            std::string::npos);
  EXPECT_NE(err(R"({"figures": [{"name": "x", "measured_us": -5, )" + ok + "}]}").find("positive finite"), std::string::npos);
  EXPECT_NE(err(R"({"figures": [{"name": "x", "measured_us": 0, )" + ok + "}]}").find("positive finite"), std::string::npos);
  EXPECT_NE(err(R"({"figures": [{"name": "x", "measured_us": "NaN", )" + ok + "}]}").find("must be a number"),
            std::string::npos);
  EXPECT_NE(err(R"({"figures": [{"name": "x", "measured_us": 1e999, )" + ok + "}]}").find("not valid JSON"), std::string::npos);
  EXPECT_NE(err(R"({"figures": [{"name": "x", "measured_us": 5, "m": 1, "k": 32, "n": 32, "cores": 4, "mc_cap": 0}]})")
                .find("figures[0] (\"x\"): \"cores\" = 4: must be an integer in 1..3"),
            std::string::npos);
  // Integers whole and in range: a float is refused even when whole, a huge one is not narrowed.
  for (const char* m : {"1.0", "64.7", "18446744073709551615", "4294967297", "\"2\""})
    EXPECT_NE(err(R"({"figures": [{"name": "x", "measured_us": 5, "k": 32, "n": 32, "cores": 1, "mc_cap": 0, "m": )" +
                  std::string(m) + "}]}")
                  .find(std::string("\"m\" = ") + m + ": must be an integer in 1..16777216"),
              std::string::npos)
        << m;
  // Nesting bounded before anything recurses (driver/common/json.h).
  EXPECT_NE(err(R"({"figures": )" + std::string(100000, '[') + std::string(100000, ']') + "}").find("more than 64 levels"),
            std::string::npos);
  EXPECT_NE(err(R"({"figures": [{"name": "x", "measured_us": 5, "k": 32, "n": 32, "cores": 1, "mc_cap": 0}]})")
                .find("missing \"m\""),
            std::string::npos);
  EXPECT_NE(err(R"({"figures": [{"name": "x", "measured_us": 5, )" + ok + R"(, "layout": "tiles"}]})").find("\"layout\""),
            std::string::npos);
}

}  // namespace
}  // namespace ork::tools
