// Running a context (context.h), split where an asynchronous call waits: pack A into the
// feature BO, hand the first slice group to the kernel, and later wait for it, unpack its
// K-slices, run the remaining groups (each waits: they reuse the output slots) and round an
// fp16 C. Private to lib/matmul: execute_any (context.h) is these steps back to back with a
// blocking submit, and the matmul job (job.h) splits them around the wait; everyone else
// uses one of those two.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "driver/common/result.h"
#include "driver/kmd/kmd.h"
#include "lib/matmul/context.h"

namespace ork::matmul {

// A of the call into the context's feature BO in the plan's native layout, synced for the
// NPU (A's formats as execute_any), after completing the job in flight on ctx (job.h, the
// rule). Fills stats.pack_ns and bytes_to_device.
Status pack_input(driver::Kmd& kmd, const Context& ctx, const void* a, RunStats& stats);

// The output state of one matmul of `ctx` (context.h OutputState).
OutputState make_output_state(const Context& ctx);

// The output slots of slice group `group` (its job has finished) into C, or with `columns`
// into each part's own output instead (c unused).
Status unpack_group(driver::Kmd& kmd, const Context& ctx, size_t group, void* c, OutputState& out,
                    RunStats& stats, std::span<const ColumnPart> columns = {});

// Groups [first, end) each submitted blocking and unpacked, then C finished (fp16 rounding).
Status run_groups(driver::Kmd& kmd, const Context& ctx, size_t first, void* c, OutputState& out, RunStats& stats,
                  std::span<const ColumnPart> columns = {});

}  // namespace ork::matmul
