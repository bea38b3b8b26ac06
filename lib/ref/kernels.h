// Micro-kernels of the fast int8 path (internal to lib/ref). Every kernel reads K in groups
// of 4 bytes per row: two sign-extended int16 (pair kernels) or four biased uint8 (VNNI), so
// one group is one int32 broadcast. A panel of B holds, per group, `nr` columns x 4 bytes.
#pragma once

#include <cstdint>

#include "lib/ref/fast.h"

namespace ork::ref::detail {

struct Kernel {
  Isa isa;
  int mr;          // rows per micro-tile
  int nr;          // columns per micro-tile (= columns per B panel)
  int k_per_group; // 2 (int16 pairs) or 4 (uint8 quads)
  // Writes the full mr x nr int32 tile to `out` (row-major, nr per row). a_rows[i] points at
  // row i of packed A; bp at the panel; `groups` K groups.
  void (*micro)(const uint8_t* const* a_rows, const uint8_t* bp, int64_t groups, int32_t* out);
};

const Kernel& kernel_for(Isa isa);

}  // namespace ork::ref::detail
