// Comparing C from the device with the host reference: every cell (--full) or a sample,
// counting mismatches and keeping the first few for the report.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "tools/sparse_check/cells.h"

namespace ork::tools {

inline constexpr size_t kMaxReportedMismatches = 20;

struct Problem {
  std::span<const int8_t> a, w;  // A: M x K, W: K x N, row-major
  int64_t m = 0, k = 0, n = 0;
};

struct Mismatch {
  Cell cell;
  int64_t expected = 0;
  int32_t got = 0;
};

struct Outcome {
  int64_t checked = 0;
  int64_t mismatches = 0;
  std::vector<Mismatch> first;  // at most kMaxReportedMismatches, in check order
};

// Every cell of C (M x N int32, row-major); progress on a terminal when `show_progress`.
void verify_full(const Problem& p, std::span<const int32_t> c, bool show_progress, Outcome& out);

// Only `cells`.
void verify_cells(const Problem& p, const std::vector<Cell>& cells, std::span<const int32_t> c,
                  bool show_progress, Outcome& out);

// "mismatch C[m][n]: M-tile i (rows a..b), N-task j (cols c..d), core k: expected E, got G"
std::string format_mismatch(const Mismatch& mm, const CellLocator& where);

}  // namespace ork::tools
