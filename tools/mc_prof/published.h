// The published timing figures the emulator's timing model is fitted to and judged by
// (docs/timing-model.md "The published figures"), each with its source. Numbers only: the
// model and the fit are in model_fit.h.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ork::tools {

// What ran: an int8 matmul of M x K x N on `cores` cores.
//   per_tile: the published experiment's layout: M-tiles of `mc` rows, each its own submit
//             of one task streaming all K x N weights, dealt round-robin to the cores.
//   chained:  libork's plan (lib/matmul/plan.h) with `mc` as the M-tile cap (0 = the bank
//             limit), one submit per core chaining its tasks.
struct Setup {
  int64_t m = 0, k = 0, n = 0;
  int cores = 1;
  int64_t mc = 0;
  bool per_tile = true;
  bool m_unknown = false;  // the source does not state M: the fit chooses it (experiment_m)
};

struct Figure {
  std::string name;
  double published_us = 0;  // measured, µs (per submit or per matmul, as the setup says)
  Setup setup;
  bool train = false;       // in the training set of the shipped constants (timing_model.h)
  std::string source;
};

// The fourteen figures of the published M-tile experiment: its single-core sweep (µs per
// submit of one M-tile) and its before/after table (µs per matmul, M not stated).
const std::vector<Figure>& published_figures();

}  // namespace ork::tools
