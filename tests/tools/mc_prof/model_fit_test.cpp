// The timing model's fit (tools/mc_prof/model_fit.h): the shipped constants are what fitting
// the training figures gives, the fit recovers parameters it is handed, leave-one-out never
// sees the figure it judges. Its inputs: published_test.cpp, board_report_test.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <set>
#include <string>

#include "tools/mc_prof/model_fit.h"

namespace ork::tools {
namespace {

std::vector<Figure> training() {
  std::vector<Figure> out;
  for (const Figure& f : published_figures())
    if (f.train) out.push_back(f);
  return out;
}

// The constants in timing_model.h are the training fit's result (to 0.1 %): change the model or a
// figure and this fails until the constants are refitted (mc_prof --published prints them).
TEST(ModelFit, ShippedConstantsAreTheTrainingFit) {
  const FitResult r = fit(training());
  EXPECT_NEAR(r.params.task_ns / timing::kTaskNs, 1, 1e-3);
  EXPECT_NEAR(r.params.core_dma_bytes_per_ns / timing::kCoreDmaBytesPerNs, 1, 1e-3);
  EXPECT_NEAR(r.params.shared_dram_bytes_per_ns / timing::kSharedDramBytesPerNs, 1, 1e-3);
  EXPECT_NEAR(r.params.serial_mac_efficiency / timing::kSerialMacEfficiency, 1, 1e-3);
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
  timing::TimingParams truth;
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
  timing::TimingParams p;
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

}  // namespace
}  // namespace ork::tools
