// ORK_DUMP_REGCMD=DIR: every command list a context builds is also written to DIR as raw
// little-endian 64-bit entries (what ork_regdump reads), one file per (context, slice group,
// core) in build order: DIR/NNNN-<dtype>-<M>x<K>x<N>-g<group>-core<c>.regcmd. The same
// program on a board and on the emulator writes the same names, so the two command streams
// can be compared file by file (docs/board.md "When a test fails"). Unset: nothing is
// written. A file that cannot be written is reported on stderr and skipped; the call goes on.
#pragma once

#include <cstdint>
#include <vector>

#include "lib/matmul/plan.h"

namespace ork::matmul {

void dump_commands(const Plan& plan, int64_t group, int core, const std::vector<uint64_t>& entries);

}  // namespace ork::matmul
