// Which of a model's groups the executor runs as one fused matmul (docs/execution.md "Fused
// groups"): a group that reads one A, whose board plan with `fuse` on (plan_group) is the
// fused one, whose members' packed weights lie side by side in one weight buffer with no
// padding (every member but the last a whole number of the slots' alignment, 4 KiB), and
// which runs in one row piece (row_pieces: 1 for the members and for the summed shape).
// Such a group's members share one weight buffer and slot, member after member; C's
// columns [columns[j], columns[j + 1]) of the fused job go straight to member j.
#pragma once

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "driver/common/result.h"
#include "lib/exec/board_plan.h"
#include "lib/exec/pack_file.h"
#include "lib/matmul/plan.h"

namespace ork::exec {

struct Fusion {
  // Per tensor (layer x matmuls + matmul): the matmul of its fused group's first member, or
  // -1 when its group runs unfused (every tensor when fusion is off).
  std::vector<int> first;
  std::vector<uint64_t> offset;  // per tensor: where its bytes start in the group's buffer
  std::vector<uint64_t> bytes;   // per tensor: its fused group's buffer (members' slots summed)
  bool fused(size_t tensor) const { return tensor < first.size() && first[tensor] >= 0; }
};

// The plan the executor runs for one group: plan_group with `fuse`, the same chooser the
// projection prices with.
Result<GroupPlan> executor_group_plan(matmul::DType dtype, int64_t m, std::span<const std::pair<int64_t, int64_t>> shapes,
                                      int cores, std::span<const int64_t> slice_k, bool fuse);

// Whether the executor may run a group fused, before the chooser's say: the group is
// fusable (board_plan.h: one K-slice, every N whole blocks), its members' packed
// `bytes` lie side by side with no padding (every member but the last a whole number of
// `align`), and the group and its fused matmul (K x the members' N summed) each run in one
// row piece (row_pieces). The projection asks the same (project.h ProjectOptions::fuse).
bool fusion_fits(matmul::DType dtype, int64_t m, std::span<const std::pair<int64_t, int64_t>> shapes,
                 std::span<const int64_t> slice_k, std::span<const uint64_t> bytes, uint64_t align);

// Where a fused call's C goes: member i's columns [n_0 + .. + n_(i-1), + n_i) straight into
// out[i], sized here to `rows` x n_i (output_bytes), unpacked there by the runner with no C
// of the summed N between (matmul::ColumnPart). `keep` >= 0: only that member's output is
// sized and written (a member run alone). The executor's fused calls (fused_calls.cpp) and
// the projection's measured host part of one (measure_fused_host_parts) both use it.
std::vector<matmul::ColumnPart> member_columns(std::span<const int64_t> ns, int64_t rows,
                                               std::vector<std::vector<uint8_t>>& out, int keep = -1);

// The fused groups of `model` at m rows on `cores`, slots aligned to `align` bytes; none
// when `fuse` is off.
Result<Fusion> find_fusion(const PackedModel& model, int64_t m, int cores, uint64_t align, bool fuse);

}  // namespace ork::exec
