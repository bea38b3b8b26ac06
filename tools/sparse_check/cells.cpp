#include "tools/sparse_check/cells.h"

#include <algorithm>

#include <fmt/format.h>

namespace ork::tools {

uint64_t SplitMix64::next() {
  // Constants of the published splitmix64 finaliser.
  uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

int64_t SplitMix64::below(int64_t bound) {
  // Modulo bias is < bound / 2^64: irrelevant for picking sample cells.
  return static_cast<int64_t>(next() % static_cast<uint64_t>(bound));
}

void fill_random_int8(std::span<int8_t> out, SplitMix64& rng) {
  size_t i = 0;
  for (; i + 8 <= out.size(); i += 8) {
    uint64_t bits = rng.next();
    for (int b = 0; b < 8; ++b, bits >>= 8) out[i + b] = static_cast<int8_t>(bits & 0xFF);
  }
  for (uint64_t bits = rng.next(); i < out.size(); ++i, bits >>= 8)
    out[i] = static_cast<int8_t>(bits & 0xFF);
}

namespace {

// The first two and last two indices of [start, start + len) that lie inside [0, limit):
// a task over padded columns (N rounded up to the weight atom) ends at the real column N-1.
std::vector<int64_t> edges(int64_t start, int64_t len, int64_t limit) {
  const int64_t end = std::min(start + len, limit);
  std::vector<int64_t> out;
  for (int64_t i : {start, start + 1, end - 2, end - 1}) {
    if (i >= start && i < end) out.push_back(i);
  }
  return out;
}

}  // namespace

std::vector<Cell> sample_cells(const matmul::Plan& plan, int64_t random_cells,
                               int64_t cross_per_edge, uint64_t seed) {
  const int64_t m = plan.shape.m, n = plan.shape.n;
  SplitMix64 rng(seed ^ 0x5EED5A3B1E5ull);
  std::vector<Cell> cells;
  std::vector<int64_t> edge_rows, edge_cols;
  for (const matmul::Task& t : plan.tasks) {
    const auto rows = edges(t.m0, t.mc, m);
    const auto cols = edges(t.n0, t.nt, n);
    for (int64_t r : rows)
      for (int64_t c : cols) cells.push_back({r, c});
    edge_rows.insert(edge_rows.end(), rows.begin(), rows.end());
    edge_cols.insert(edge_cols.end(), cols.begin(), cols.end());
  }
  std::sort(edge_rows.begin(), edge_rows.end());
  edge_rows.erase(std::unique(edge_rows.begin(), edge_rows.end()), edge_rows.end());
  std::sort(edge_cols.begin(), edge_cols.end());
  edge_cols.erase(std::unique(edge_cols.begin(), edge_cols.end()), edge_cols.end());
  for (int64_t r : edge_rows)
    for (int64_t i = 0; i < cross_per_edge; ++i) cells.push_back({r, rng.below(n)});
  for (int64_t c : edge_cols)
    for (int64_t i = 0; i < cross_per_edge; ++i) cells.push_back({rng.below(m), c});
  if (random_cells >= m * n) {
    // As many random cells as C has (--random-cells 100000000 on 10 x 10): every cell,
    // once, instead of drawing (and storing) duplicates.
    cells.clear();
    for (int64_t r = 0; r < m; ++r)
      for (int64_t c = 0; c < n; ++c) cells.push_back({r, c});
    return cells;
  }
  for (int64_t i = 0; i < random_cells; ++i) cells.push_back({rng.below(m), rng.below(n)});
  std::sort(cells.begin(), cells.end());
  cells.erase(std::unique(cells.begin(), cells.end()), cells.end());
  return cells;
}

CellLocator::CellLocator(const matmul::Plan& plan) : plan_(plan) {
  for (const matmul::Task& t : plan.tasks) {
    if (t.slice != 0) continue;
    m_starts_.push_back(t.m0);
    n_starts_.push_back(t.n0);
  }
  for (auto* v : {&m_starts_, &n_starts_}) {
    std::sort(v->begin(), v->end());
    v->erase(std::unique(v->begin(), v->end()), v->end());
  }
}

CellHome CellLocator::locate(const Cell& cell) const {
  CellHome home;
  for (const matmul::Task& t : plan_.tasks) {
    if (t.slice != 0 || cell.m < t.m0 || cell.m >= t.m0 + t.mc || cell.n < t.n0 ||
        cell.n >= t.n0 + t.nt)
      continue;
    home.m0 = t.m0, home.mc = t.mc, home.n0 = t.n0, home.nt = t.nt, home.core = t.core;
    home.m_tile = std::lower_bound(m_starts_.begin(), m_starts_.end(), t.m0) - m_starts_.begin();
    home.n_task = std::lower_bound(n_starts_.begin(), n_starts_.end(), t.n0) - n_starts_.begin();
    break;
  }
  return home;
}

std::string CellLocator::describe(const CellHome& h) {
  if (h.core < 0) return "no task of the plan covers it";
  return fmt::format("M-tile {} (rows {}..{}), N-task {} (cols {}..{}), core {}", h.m_tile, h.m0,
                     h.m0 + h.mc - 1, h.n_task, h.n0, h.n0 + h.nt - 1, h.core);
}

}  // namespace ork::tools
