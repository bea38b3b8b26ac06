// Shape samples for the fp16 / int4 / w4a8 sweeps: every value of every dimension at least
// once, then random extra cases within a budget of multiply-accumulates (fixed seeds).
// The values are each dtype's tile edges (docs/dtypes.md): rows around the M-tiles, K
// around the slice widths and full-K limits, N around the weight atoms and 8192.
#pragma once

#include <cstdint>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "tests/e2e/sweep_cases.h"

namespace ork::test {

enum class Mode { fp16, fp16_out, int4, w4a8 };

inline const char* mode_name(Mode m) {
  switch (m) {
    case Mode::fp16: return "fp16";
    case Mode::fp16_out: return "fp16out";
    case Mode::int4: return "w4a4";
    case Mode::w4a8: return "w4a8";
  }
  return "?";
}

struct DtypeCase {
  Mode mode;
  int64_t m, k, n;
  int cores;
  double macs() const { return double(m) * double(k) * double(n); }
  std::string name() const {
    return std::string(mode_name(mode)) + "_M" + std::to_string(m) + "_K" + std::to_string(k) + "_N" +
           std::to_string(n) + "_c" + std::to_string(cores);
  }
};

struct DimValues {
  std::vector<int64_t> m, k, n;
};

// fp16: 8/9 rows (docs/hardware.md 10.4), K-reduction tiles of 320/128/64 rows, R = 32 / 16; K
// around 2048 (rule 1), 4096 (full-K limit), 4128 (three slices); N around the 16-wide atom.
inline DimValues fp16_values() {
  return {{1, 8, 9, 16, 17, 32, 33, 65, 129, 321},
          {32, 96, 512, 1024, 2016, 2048, 2080, 4096, 4128, 6144},
          {16, 48, 80, 2048, 8208}};
}
// int4: tiles of 1472 (K <= 480) and 128 rows (R at 480); K around the 480-wide slices.
inline DimValues int4_values() {
  return {{1, 2, 64, 127, 128, 129, 1472, 1473},
          {32, 96, 448, 480, 512, 960, 992, 2048, 4096},
          {64, 100, 192, 2048, 8256}};
}

inline std::vector<DtypeCase> sample_dtype(Mode mode, const DimValues& v, uint64_t seed, double max_case_macs,
                                           double total_macs) {
  std::vector<DtypeCase> out;
  for (const SweepCase& c : sample_shapes({v.m, v.k, v.n}, seed, max_case_macs, total_macs, 200, 4000))
    out.push_back(DtypeCase{mode, c.m, c.k, c.n, c.cores});
  return out;
}

}  // namespace ork::test
