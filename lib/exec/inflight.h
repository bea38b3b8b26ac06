// One matmul handed to the device without waiting for it (docs/execution.md "Execution"):
// the executor's device thread packs A and submits a matmul, then prepares the next one
// (its weights, its A) while the NPU runs the first. The kernel runs jobs in submission
// order (driver/kmd/kmd.h submit_async), so completing them in that order never waits on a
// later job. The same steps as the C API's asynchronous jobs (lib/api/job.*), without the
// API's buffers and statistics.
#pragma once

#include <cstdint>
#include <memory>

#include "driver/common/result.h"
#include "driver/kmd/kmd.h"
#include "lib/matmul/context.h"
#include "lib/matmul/execute.h"
#include "lib/matmul/run.h"

namespace ork::exec {

struct InFlight {
  std::shared_ptr<matmul::Context> ctx;          // held until completion (the cache may evict it)
  std::unique_ptr<driver::PendingJob> pending;   // the kernel's job of the first slice group
  matmul::OutputState out;
  matmul::RunStats stats;
  int64_t submit_ns = 0;                         // the submit ioctl's host time
};

// Packs A (m rows) into `ctx`'s feature BO and submits the context's first slice group
// without waiting. The caller must have completed every earlier job on `ctx` (its A and
// output BOs are reused).
Result<InFlight> launch_matmul(driver::Kmd& kmd, std::shared_ptr<matmul::Context> ctx, const void* a);

// Waits for the job, unpacks its output slots into C and runs the remaining slice groups
// (blocking: they reuse the output slots). After a failure C is undefined.
Status complete_matmul(driver::Kmd& kmd, InFlight& job, void* c);

// Waits for the job and discards its result (a run that failed elsewhere must not free the
// buffers a job still reads).
void drain_matmul(driver::Kmd& kmd, InFlight& job);

}  // namespace ork::exec
