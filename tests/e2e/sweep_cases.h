// Sampling the shape cross product (M x K x N x cores) so that every value of every
// dimension appears, within a budget of multiply-accumulates, deterministically (fixed seed).
#pragma once

#include <cstdint>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <vector>

namespace ork::test {

struct SweepCase {
  int64_t m, k, n;
  int cores;
  double macs() const { return double(m) * double(k) * double(n); }
  std::string name() const {
    return "M" + std::to_string(m) + "_K" + std::to_string(k) + "_N" + std::to_string(n) + "_c" +
           std::to_string(cores);
  }
};

// The values of the int8 sweep.
inline const std::vector<int64_t> kSweepM = {1, 2, 63, 64, 65, 127, 128, 129, 704, 705, 2047, 2048, 4100};
inline const std::vector<int64_t> kSweepK = {32, 96, 512, 1024, 2048, 3584, 4096, 4128, 6144, 8192, 18944};
inline const std::vector<int64_t> kSweepN = {32, 96, 2048, 8192, 8224, 16384};
inline const std::vector<int> kSweepCores = {1, 2, 3};

struct SweepValues {
  std::vector<int64_t> m, k, n;
};

// Every value of every dimension at least once (the others, and the core count 1..3, drawn
// at random among the combinations under max_case_macs), then random extra cases until
// total_macs is spent or max_cases are drawn.
inline std::vector<SweepCase> sample_shapes(const SweepValues& v, uint64_t seed, double max_case_macs,
                                            double total_macs, size_t max_cases = 400, int attempts = 2000) {
  std::mt19937_64 rng(seed);
  auto pick = [&](const auto& x) { return x[rng() % x.size()]; };
  std::set<std::tuple<int64_t, int64_t, int64_t, int>> seen;
  std::vector<SweepCase> out;
  double spent = 0;
  auto draw = [&](int dim, int64_t value) {
    for (int attempt = 0; attempt < attempts; ++attempt) {
      SweepCase c{pick(v.m), pick(v.k), pick(v.n), pick(kSweepCores)};
      if (dim == 0) c.m = value;
      if (dim == 1) c.k = value;
      if (dim == 2) c.n = value;
      if (dim == 3) c.cores = static_cast<int>(value);
      if (c.macs() > max_case_macs || seen.count({c.m, c.k, c.n, c.cores})) continue;
      seen.insert({c.m, c.k, c.n, c.cores});
      spent += c.macs();
      out.push_back(c);
      return true;
    }
    return false;
  };
  for (int64_t x : v.m) draw(0, x);
  for (int64_t x : v.k) draw(1, x);
  for (int64_t x : v.n) draw(2, x);
  for (int x : kSweepCores) draw(3, x);
  while (spent < total_macs && out.size() < max_cases)
    if (!draw(-1, 0)) break;
  return out;
}

// The int8 sweep of those values.
inline std::vector<SweepCase> sample_sweep(uint64_t seed, double max_case_macs, double total_macs) {
  return sample_shapes({kSweepM, kSweepK, kSweepN}, seed, max_case_macs, total_macs);
}

}  // namespace ork::test
