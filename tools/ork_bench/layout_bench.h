// Host-side layout work of one matmul (lib/matmul/layout.h): the fast pack/unpack against a
// per-element loop over the index functions (the obvious implementation), same run.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace ork::bench {

struct LayoutFigure {
  std::string what;   // "pack_a M=1 K=2048"
  double fast_us = 0;     // microseconds per call, best of the repetitions
  double naive_us = 0;
  bool equal = false;     // the fast and the naive result are the same bytes
};

struct LayoutFigures {
  std::vector<LayoutFigure> rows;
};

LayoutFigures measure_layout(int reps);
nlohmann::json layout_json(const LayoutFigures& f);
void print_layout(const LayoutFigures& f);

}  // namespace ork::bench
