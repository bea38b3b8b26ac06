// Which of a model's groups the executor runs as one fused matmul (docs/execution.md "Fused
// groups"): a group that reads one A, whose board plan with `fuse` on (plan_group) is the
// fused one, whose members' packed weights fill one weight buffer with no padding, K-slice by
// K-slice (fused_pieces: every piece but the buffer's last a whole number of the slots'
// alignment, 4 KiB), and which runs in the same row pieces fused as apart (row_pieces of the
// members and of the summed shape). Such a group's members share one weight buffer and slot;
// C's columns [columns[j], columns[j + 1]) of the fused job (one a row piece) go straight to
// member j.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "driver/common/result.h"
#include "lib/exec/board_plan.h"
#include "lib/exec/pack_file.h"
#include "lib/matmul/plan.h"

namespace ork::exec {

// One range of a fused group's weight buffer: `bytes` of a member's packed tensor from its
// byte `from` on, at byte `at` of the buffer.
struct FusedPiece {
  uint64_t from = 0, bytes = 0, at = 0;
};

// Where the members' packed weights (K x ns[j] each, one K and int4 width: fusable) go in
// their fused group's buffer, per member its pieces in slice order. The fused K x (N1 + N2 +
// ...) weights are K-slice after K-slice, slice s ([N/wa][kt_s/32][wa][32], kt_s its depth:
// lib/matmul/layout.h) holding every N-block of its K range, N-blocks outermost; member j's
// N-blocks of slice s are its own slice s, N_j x kt_s elements from the start of its slice s,
// so the buffer is slice 0 of every member in order, then slice 1 of every member, and so on.
// One slice: one piece a member, member after member. Fails when the members' layouts have
// N padding or differ in their slices.
Result<std::vector<std::vector<FusedPiece>>> fused_pieces(matmul::DType dtype, int64_t k, std::span<const int64_t> ns,
                                                          int64_t width);

struct Fusion {
  // Per tensor (layer x matmuls + matmul): the matmul of its fused group's first member, or
  // -1 when its group runs unfused (every tensor when fusion is off).
  std::vector<int> first;
  // Per tensor: its bytes' place when the members' bytes are counted member after member (0
  // for the first member): the range its load stands for in the execution plan's stream
  // (exec_plan.h; disjoint from the other members', together the buffer, as its pieces are).
  std::vector<uint64_t> offset;
  std::vector<uint64_t> bytes;   // per tensor: its fused group's buffer (members' bytes summed, aligned)
  std::vector<std::vector<FusedPiece>> pieces;  // per tensor: where its bytes go (fused_pieces); empty unfused
  bool fused(size_t tensor) const { return tensor < first.size() && first[tensor] >= 0; }
  // The reads that bring tensor `tensor` (`bytes` packed bytes) into its buffer: its pieces
  // when fused, else all of it at the buffer's start.
  std::vector<FusedPiece> reads(size_t tensor, uint64_t bytes) const;
  // Its packed bytes as read into `buffer`: one piece in place, several gathered into `gathered`.
  std::span<const uint8_t> tensor_bytes(size_t tensor, std::span<const std::byte> buffer, uint64_t bytes,
                                        std::vector<uint8_t>& gathered) const;
};

// The plan the executor runs for one group: plan_group with `fuse`, the same chooser the
// projection prices with.
Result<GroupPlan> executor_group_plan(matmul::DType dtype, int64_t m, std::span<const std::pair<int64_t, int64_t>> shapes,
                                      int cores, std::span<const int64_t> slice_k, bool fuse);

// Whether the executor may run a group fused, before the chooser's say: the group is
// fusable (board_plan.h: one K and width, every N whole blocks), its members' packed `bytes`
// are their fused_pieces, every piece but the buffer's last a whole number of `align` (each
// read lands aligned, from an aligned file offset, and nothing pads the fused weights), and
// the group and its fused matmul (K x the members' N summed) run in the same row pieces
// (row_pieces: 1, or 2 halves of m each a job of its own). The projection asks the same
// (project.h ProjectOptions::fuse).
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
