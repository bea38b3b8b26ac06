// The timing model against measured figures: what the model says a setup costs, a least-
// squares fit of its four fitted parameters (timing_model.h), and leave-one-out errors. Pure
// arithmetic: no device. docs/timing-model.md "The fit".
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "driver/timing/timing_model.h"
#include "tools/mc_prof/published.h"

namespace ork::tools {

// Modelled µs of one setup (published.h) with parameters `p`; `m` replaces setup.m when
// setup.m_unknown. 0 when the setup cannot be planned (chained, a shape the planner refuses).
double modelled_us(const Setup& setup, const timing::TimingParams& p, int64_t m = 0);

struct FitResult {
  timing::TimingParams params;
  int64_t experiment_m = 0;  // the M chosen for figures whose source does not state it
  double loss = 0;           // sum of squared log errors over the figures fitted
};

// Where every fit starts, from no figure: 100 us per task, 10 GB/s per core, 20 GB/s shared
// (the middle of RK3588's measured 17-22 GB/s, timing_model.h), half the peak MAC rate past R.
// The same start for every fit keeps leave-one-out honest: a fold's result cannot depend
// on a model that saw the figure it leaves out.
timing::TimingParams fit_start();

// Fits task_ns, core_dma_bytes_per_ns, shared_dram_bytes_per_ns and serial_mac_efficiency
// (the others stay as in `start`) to `figures` (published_us as the measurement),
// minimising the sum of squared log errors (Nelder-Mead from `start`, restarted once from
// its result). When a figure's M is unknown, M is chosen from 384..1024 in steps of 32 as
// part of the fit.
FitResult fit(std::span<const Figure> figures, const timing::TimingParams& start = fit_start());

struct Judged {
  const Figure* figure = nullptr;
  double modelled_us = 0, error_percent = 0;          // the model given
  double loo_modelled_us = 0, loo_error_percent = 0;  // fitted on every other figure
};

struct Spread3 {
  double min = 0, median = 0, max = 0;  // of |error| in percent
  std::string worst;                    // the figure with the largest |error|
};
Spread3 abs_spread(const std::vector<double>& errors, const std::vector<std::string>& names);

// Every figure under `model` (with `experiment_m`), and, when `loo`, leave-one-out: for each
// figure, the model fitted (from fit_start()) on all the others.
std::vector<Judged> judge(std::span<const Figure> figures, const FitResult& model, bool loo);

double error_percent(double modelled, double measured);

}  // namespace ork::tools
