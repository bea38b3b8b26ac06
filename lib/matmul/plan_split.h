// Splitting helpers of the planner: ranges of rows or columns, pure arithmetic.
#pragma once

#include <cstdint>
#include <vector>

namespace ork::matmul {

struct Range {
  int64_t start = 0, len = 0;
};

// `units` units of `unit` elements each, split into `parts` contiguous ranges whose sizes
// differ by at most one unit (the first units % parts ranges get the extra one), from `start`.
inline std::vector<Range> split_even(int64_t units, int64_t parts, int64_t unit, int64_t start) {
  std::vector<Range> out;
  out.reserve(static_cast<size_t>(parts));
  const int64_t base = units / parts, extra = units % parts;
  int64_t at = 0;
  for (int64_t i = 0; i < parts; ++i) {
    const int64_t n = base + (i < extra ? 1 : 0);
    out.push_back(Range{start + at * unit, n * unit});
    at += n;
  }
  return out;
}

// [0, total) cut into ranges of `size`, the last one shorter when size does not divide total.
inline std::vector<Range> split_fixed(int64_t total, int64_t size) {
  std::vector<Range> out;
  out.reserve(static_cast<size_t>((total + size - 1) / size));
  for (int64_t at = 0; at < total; at += size) {
    out.push_back(Range{at, total - at < size ? total - at : size});
  }
  return out;
}

}  // namespace ork::matmul
