// Which cells of C sparse_check verifies, chosen from the plan libork runs: the rows and
// columns on both sides of every task boundary (M-tile edges 63/64, 127/128, ...; N-task
// edges; the tiles of every core and of every K-slice), plus random cells. Pure: no device.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "lib/matmul/plan.h"

namespace ork::tools {

struct Cell {
  int64_t m = 0, n = 0;
  auto operator<=>(const Cell&) const = default;
};

// splitmix64 (Steele, Lea, Flood 2014): tiny, seedable, identical on every platform,
// which std::uniform_int_distribution is not.
class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t next();
  int64_t below(int64_t bound);  // uniform-ish in [0, bound), bound >= 1
 private:
  uint64_t state_;
};

// Fills `out` with seeded int8 values over the full range -128..127.
void fill_random_int8(std::span<int8_t> out, SplitMix64& rng);

// The cells to check for an M x N output under `plan`: for every task, the 16 cells where
// its first two / last two rows meet its first two / last two columns; every task-edge row
// against `cross_per_edge` random columns and every task-edge column against as many random
// rows; and `random_cells` random cells (every cell of C, once, when random_cells >= M x N).
// Sorted, no duplicates, all inside M x N.
std::vector<Cell> sample_cells(const matmul::Plan& plan, int64_t random_cells,
                               int64_t cross_per_edge, uint64_t seed);

// Where a cell is computed: the task of K-slice 0 that covers it, as indices among the
// plan's distinct M-tiles and N-tasks, and the core that runs it.
struct CellHome {
  int64_t m_tile = -1, m0 = 0, mc = 0;
  int64_t n_task = -1, n0 = 0, nt = 0;
  int core = -1;
};

class CellLocator {
 public:
  explicit CellLocator(const matmul::Plan& plan);
  CellHome locate(const Cell& cell) const;
  static std::string describe(const CellHome& home);

 private:
  const matmul::Plan& plan_;
  std::vector<int64_t> m_starts_, n_starts_;  // sorted distinct m0 / n0 of slice 0
};

}  // namespace ork::tools
