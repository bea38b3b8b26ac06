// Shared by the quant tests: seeded inputs and the first differing cell of two results.
#pragma once

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>

namespace ork::quant::testing {

// Gaussian values with a few exact ties and zeros sprinkled in (seeded, reproducible).
inline std::vector<float> random_matrix(int64_t rows, int64_t cols, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> x(static_cast<size_t>(rows * cols));
  for (size_t i = 0; i < x.size(); ++i) x[i] = (i % 17 == 5) ? 0.0f : dist(rng);
  return x;
}

// "" when bit-identical; else the first cell that differs, with both values.
inline std::string first_difference(const std::vector<float>& got, const std::vector<float>& want, int64_t n) {
  if (got.size() != want.size()) return fmt::format("sizes {} vs {}", got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    if (std::memcmp(&got[i], &want[i], sizeof(float)) != 0)
      return fmt::format("C[{}][{}] = {:a} ({}), reference {:a} ({})", i / static_cast<size_t>(n),
                         i % static_cast<size_t>(n), got[i], got[i], want[i], want[i]);
  return "";
}

}  // namespace ork::quant::testing
