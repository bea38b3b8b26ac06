// Min / median / max of repeated timings: what every libork benchmark reports (as
// google-benchmark and llama-bench report a spread, never one average or one best run).
#pragma once

#include <algorithm>
#include <vector>

namespace ork::tools {

struct Spread {
  double min = 0, median = 0, max = 0;
  int n = 0;
};

// Of `samples` (any order); all zero for none. The median of an even count is the mean of
// the middle two.
inline Spread spread(std::vector<double> samples) {
  Spread s;
  s.n = static_cast<int>(samples.size());
  if (samples.empty()) return s;
  std::sort(samples.begin(), samples.end());
  const size_t n = samples.size();
  s.min = samples.front();
  s.max = samples.back();
  s.median = n % 2 ? samples[n / 2] : (samples[n / 2 - 1] + samples[n / 2]) / 2;
  return s;
}

}  // namespace ork::tools
