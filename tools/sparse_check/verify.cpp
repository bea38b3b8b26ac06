#include "tools/sparse_check/verify.h"

#include <algorithm>

#include <fmt/format.h>

#include "tools/common/progress.h"
#include "tools/sparse_check/host_ref.h"

namespace ork::tools {
namespace {

void record(Outcome& out, const Cell& cell, int64_t expected, int32_t got) {
  ++out.checked;
  if (expected == got) return;
  if (++out.mismatches <= static_cast<int64_t>(kMaxReportedMismatches))
    out.first.push_back({cell, expected, got});
}

}  // namespace

void verify_full(const Problem& p, std::span<const int32_t> c, bool show_progress, Outcome& out) {
  Progress progress("sparse_check: full reference", p.m, show_progress);
  std::vector<int64_t> row(static_cast<size_t>(p.n));
  for (int64_t i = 0; i < p.m; ++i) {
    host_row(p.a, p.w, p.k, p.n, i, row);
    for (int64_t j = 0; j < p.n; ++j) record(out, {i, j}, row[j], c[i * p.n + j]);
    progress.update(i + 1);
  }
}

void verify_cells(const Problem& p, const std::vector<Cell>& cells, std::span<const int32_t> c,
                  bool show_progress, Outcome& out) {
  std::vector<int64_t> cols;
  for (const Cell& cell : cells) cols.push_back(cell.n);
  std::sort(cols.begin(), cols.end());
  cols.erase(std::unique(cols.begin(), cols.end()), cols.end());
  const WColumns w_cols(p.w, p.k, p.n, std::move(cols));
  const auto total = static_cast<int64_t>(cells.size());
  Progress progress("sparse_check: sampled reference", total, show_progress);
  for (int64_t i = 0; i < total; ++i) {
    const Cell& cell = cells[i];
    record(out, cell, w_cols.dot(p.a, cell.m, cell.n), c[cell.m * p.n + cell.n]);
    if (i % 256 == 0) progress.update(i);
  }
}

std::string format_mismatch(const Mismatch& mm, const CellLocator& where) {
  return fmt::format("mismatch C[{}][{}]: {}: expected {}, got {}", mm.cell.m, mm.cell.n,
                     CellLocator::describe(where.locate(mm.cell)), mm.expected, mm.got);
}

}  // namespace ork::tools
