// Running a context (context.h), split where an asynchronous call waits: pack A into the
// feature BO, hand the first slice group to the kernel, and later wait for it, unpack its
// K-slices, run the remaining groups (each waits: they reuse the output slots) and round an
// fp16 C. execute_any (context.h) is these steps back to back with a blocking submit; the
// engine interface's jobs and batches (lib/api/job.*, batch.*) split them around the wait.
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
// NPU (A's formats as execute_any). Fills stats.pack_ns and bytes_to_device.
Status pack_input(driver::Kmd& kmd, const Context& ctx, const void* a, RunStats& stats);

// One matmul's C being assembled: fp16 C from several K-slices keeps fp32 partials here,
// rounded once at the end (docs/dtypes.md).
struct OutputState {
  std::vector<float> acc;
};
OutputState make_output_state(const Context& ctx);

// Adds one kernel submit's figures (a blocking submit, or an asynchronous one and its wait)
// to `stats`: submits, submit_ns, wait_ns, device_ns (-1 once any submit reports none).
void account_submit(RunStats& stats, const driver::SubmitResult& result, int64_t submit_ns);

// The output slots of slice group `group` (its job has finished) into C.
Status unpack_group(driver::Kmd& kmd, const Context& ctx, size_t group, void* c, OutputState& out,
                    RunStats& stats);

// Groups [first, end) each submitted blocking and unpacked, then C finished (fp16 rounding).
Status run_groups(driver::Kmd& kmd, const Context& ctx, size_t first, void* c, OutputState& out, RunStats& stats);

// One submit descriptor running the first slice group of every context in `ctxs`, one after
// the other on each physical core: on each core the last task of a context's list is
// re-chained (its PC trailer, regcmd::patch_next) to the first task of the next context's
// list on that core, and the regcmd BOs are synced. Every context must have exactly one
// slice group; they are the caller's (a batch's own), no longer usable alone afterwards.
Result<driver::SubmitDesc> chain_contexts(driver::Kmd& kmd, std::span<Context* const> ctxs);

}  // namespace ork::matmul
