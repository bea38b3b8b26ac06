// The timing model's fit (tools/mc_prof/model_fit.h) and its inputs: the shipped constants
// are what fitting the training figures gives, the fit recovers parameters it is handed,
// leave-one-out never sees the figure it judges, and board reports are checked field by
// field (tools/mc_prof/board_report.h).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <set>
#include <string>

#include "tools/mc_prof/board_report.h"
#include "tools/mc_prof/model_fit.h"

namespace ork::tools {
namespace {

std::vector<Figure> training() {
  std::vector<Figure> out;
  for (const Figure& f : published_figures())
    if (f.train) out.push_back(f);
  return out;
}

TEST(PublishedFigures, EveryFigureOfTheExperimentWithItsSource) {
  const auto& all = published_figures();
  ASSERT_EQ(all.size(), 14u);  // 7 sweep points, 7 table cells (the 8th is "—")
  std::set<std::string> names;
  int held_out = 0;
  for (const Figure& f : all) {
    EXPECT_TRUE(names.insert(f.name).second) << f.name;
    EXPECT_GT(f.published_us, 0) << f.name;
    EXPECT_NE(f.source.find("oRKLLM/ork-driver"), std::string::npos) << f.name;
    held_out += f.train ? 0 : 1;
  }
  EXPECT_EQ(held_out, 4);
}

// The constants in timing.h are the training fit's result (to 0.1 %): change the model or a
// figure and this fails until the constants are refitted (mc_prof --seed004 prints them).
TEST(ModelFit, ShippedConstantsAreTheTrainingFit) {
  const FitResult r = fit(training());
  EXPECT_NEAR(r.params.task_ns / emu::kTaskNs, 1, 1e-3);
  EXPECT_NEAR(r.params.core_dma_bytes_per_ns / emu::kCoreDmaBytesPerNs, 1, 1e-3);
  EXPECT_NEAR(r.params.shared_dram_bytes_per_ns / emu::kSharedDramBytesPerNs, 1, 1e-3);
  EXPECT_NEAR(r.params.serial_mac_efficiency / emu::kSerialMacEfficiency, 1, 1e-3);
  // The training figures within 3 %; the held-out K = 3584 single-core figures within 15 %.
  for (const Judged& j : judge(published_figures(), r, false)) {
    if (j.figure->train) {
      EXPECT_LT(std::abs(j.error_percent), 3) << j.figure->name;
    }
    if (j.figure->setup.k == 3584 && j.figure->setup.cores == 1) {
      EXPECT_LT(std::abs(j.error_percent), 15) << j.figure->name;
    }
  }
}

// Figures made by the model under known parameters and M: the fit, started elsewhere,
// finds them again.
TEST(ModelFit, RecoversTheParametersThatMadeTheFigures) {
  emu::TimingParams truth;
  truth.task_ns = 70000, truth.core_dma_bytes_per_ns = 9.5, truth.shared_dram_bytes_per_ns = 19,
  truth.serial_mac_efficiency = 0.6;
  std::vector<Figure> figs = published_figures();
  for (Figure& f : figs) f.published_us = modelled_us(f.setup, truth, 576);
  const FitResult r = fit(figs);
  EXPECT_EQ(r.experiment_m, 576);
  EXPECT_NEAR(r.params.task_ns / truth.task_ns, 1, 1e-3);
  EXPECT_NEAR(r.params.core_dma_bytes_per_ns / truth.core_dma_bytes_per_ns, 1, 1e-3);
  EXPECT_NEAR(r.params.shared_dram_bytes_per_ns / truth.shared_dram_bytes_per_ns, 1, 1e-3);
  EXPECT_NEAR(r.params.serial_mac_efficiency / truth.serial_mac_efficiency, 1, 1e-3);
  EXPECT_LT(r.loss, 1e-8);
}

// Leave-one-out is honest: a figure's left-out prediction does not move when its own
// published value does, while the in-fit model (fitted with it) does.
TEST(ModelFit, LeaveOneOutNeverSeesTheFigureItJudges) {
  std::vector<Figure> figs = training();
  const FitResult base = fit(figs);
  const auto before = judge(figs, base, true);
  figs[7].published_us *= 1.5;  // K2048/1c/cap31
  const FitResult moved = fit(figs);
  const auto after = judge(figs, moved, true);
  EXPECT_DOUBLE_EQ(after[7].loo_modelled_us, before[7].loo_modelled_us);
  EXPECT_GT(std::abs(after[7].modelled_us - before[7].modelled_us), 1.0);
}

TEST(ModelFit, PerTileLayoutDealsTilesToCores) {
  emu::TimingParams p;
  const double tile31 = modelled_us({.m = 31, .k = 2048, .n = 2048, .cores = 1, .mc = 31}, p);
  const double tile20 = modelled_us({.m = 20, .k = 2048, .n = 2048, .cores = 1, .mc = 20}, p);
  // 640 rows = 20 tiles of 31 + one of 20, one core: their sum.
  EXPECT_NEAR(modelled_us({.m = 640, .k = 2048, .n = 2048, .cores = 1, .mc = 31}, p), 20 * tile31 + tile20, 1e-6);
  // An unknown M takes the M given.
  EXPECT_NEAR(modelled_us({.k = 2048, .n = 2048, .cores = 1, .mc = 31, .m_unknown = true}, p, 640), 20 * tile31 + tile20, 1e-6);
  // Three cores: 7 tiles on the busiest, slower than 7 alone (shared DRAM), faster than 21.
  const double three = modelled_us({.m = 640, .k = 2048, .n = 2048, .cores = 3, .mc = 31}, p);
  EXPECT_GT(three, 7 * tile31);
  EXPECT_LT(three, 20 * tile31);
}

std::string write(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + name;
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
  EXPECT_NE(err("{\"figures\": [").find("is not JSON"), std::string::npos);
  EXPECT_NE(err("{}").find("missing key \"figures\""), std::string::npos);
  EXPECT_NE(err(R"({"figures": []})").find("non-empty list"), std::string::npos);
  EXPECT_NE(err(R"({"figures": [{"measured_us": 5, )" + ok + "}]}").find("figures[0]: missing \"name\""), std::string::npos);
  EXPECT_NE(err(R"({"figures": [{"name": "x", )" + ok + "}]}").find("figures[0] (\"x\"): missing \"measured_us\""),
            std::string::npos);
  EXPECT_NE(err(R"({"figures": [{"name": "x", "measured_us": -5, )" + ok + "}]}").find("positive finite"), std::string::npos);
  EXPECT_NE(err(R"({"figures": [{"name": "x", "measured_us": 0, )" + ok + "}]}").find("positive finite"), std::string::npos);
  EXPECT_NE(err(R"({"figures": [{"name": "x", "measured_us": "NaN", )" + ok + "}]}").find("must be a number"),
            std::string::npos);
  EXPECT_NE(err(R"({"figures": [{"name": "x", "measured_us": 1e999, )" + ok + "}]}").find("not JSON"), std::string::npos);
  EXPECT_NE(err(R"({"figures": [{"name": "x", "measured_us": 5, "m": 1, "k": 32, "n": 32, "cores": 4, "mc_cap": 0}]})")
                .find("\"cores\" must be from 1 to 3"),
            std::string::npos);
  EXPECT_NE(err(R"({"figures": [{"name": "x", "measured_us": 5, "k": 32, "n": 32, "cores": 1, "mc_cap": 0}]})")
                .find("missing \"m\""),
            std::string::npos);
  EXPECT_NE(err(R"({"figures": [{"name": "x", "measured_us": 5, )" + ok + R"(, "layout": "tiles"}]})").find("\"layout\""),
            std::string::npos);
}

}  // namespace
}  // namespace ork::tools
