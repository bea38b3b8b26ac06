// The emitter: turns a Plan into register command buffers (kept apart from planning, which is
// tested as arithmetic). It only writes registers, by the rules of docs/regcmd-contract.md;
// every value comes from the plan or the buffer addresses. Buildable and testable with no device.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "driver/common/result.h"
#include "driver/regcmd/regcmd.h"
#include "lib/matmul/plan.h"

namespace ork::matmul {

// NPU addresses of the buffers one plan runs on.
struct BufferIovas {
  uint64_t a = 0;               // feature, native layout, plan.a_bytes()
  uint64_t b = 0;               // weights, all slices, plan.b_bytes()
  std::vector<uint64_t> c;      // one output per K-slice slot, plan.c_bytes_per_slice() each
  int64_t first_slice = 0;      // c[0] holds slice first_slice (slice groups, see run.cpp)
};

struct EmitOptions {
  // false (always, in the library): a value wider than its field is an error.
  // true: fields are truncated as a register keeps them — only for tests that show what
  // the hardware does with an overflowing value (e.g. N = 16384 in one task).
  bool truncate_fields = false;
};

// A core's chained command list, laid out for one regcmd BO region: every task starts at a
// 64-byte aligned entry offset and ends with a trailer pointing at the next task.
struct CoreCommands {
  int core = 0;
  std::vector<uint64_t> entries;        // all tasks, padded between tasks to 64-byte starts
  std::vector<uint32_t> task_offsets;   // entry offset of each task in `entries`
  std::vector<uint32_t> task_entries;   // entries of each task, trailer included
};

// Appends the body (no trailer) of one task to `rc`. Error: a register field overflowed
// (names the register and field) or an address is not below 4 GiB.
Status emit_task_body(const Plan& plan, const Task& task, const BufferIovas& iovas,
                      regcmd::Builder& rc, const EmitOptions& options = {});

// Emits every task of `tasks` (one core, in order) chained for a regcmd region at
// `regcmd_iova`.
Result<CoreCommands> emit_core(const Plan& plan, std::span<const Task> tasks,
                               const BufferIovas& iovas, uint64_t regcmd_iova,
                               const EmitOptions& options = {});

}  // namespace ork::matmul
