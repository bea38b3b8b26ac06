// A matmul job: one kernel job of one or more matmuls, handed to the device without waiting
// and completed later (docs/library.md "The matmul job"). The one assembly of pack A,
// submit, wait, unpack C and the remaining slice groups for every caller that does not
// block on a matmul: the C API's jobs and batches (lib/api/job_api.cpp, batch.cpp) and the
// executor's matmuls in flight (lib/exec/executor.cpp). A blocking call runs a context
// with execute_any (context.h), the same pieces back to back.
//
// The rule of a context's buffers: a job in flight owns its contexts' feature (A) and
// output BOs until it completes. Any new use of those BOs, through the same context or
// another one sharing them (context.h IoBuffers), blocking (execute_any, the runner's
// MatmulRunner::run) or not (Job::add), first completes the job in flight on them: waits
// for it, unpacks its C where its owner asked, and keeps its outcome for the owner's
// complete(). It is applied where A is packed (execute.cpp pack_input), which every use of
// a context starts with, so no caller can forget it; the mark is the BOs' (IoBuffers::busy).
// Callers serialise their uses of a device (the C API's device mutex, the executor's one
// device thread).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "driver/common/result.h"
#include "driver/kmd/kmd.h"
#include "lib/matmul/context.h"

namespace ork::matmul {

class Job {
 public:
  // `stats`: the call's figures so far (e.g. the context lookup's plan_ns); the job adds
  // its pack, submit, wait and unpack times to them.
  explicit Job(driver::Kmd& kmd, RunStats stats = {});
  // A job still in flight is waited for first (its C not written): the kernel may still
  // read and write its buffers.
  ~Job();
  Job(const Job&) = delete;
  Job& operator=(const Job&) = delete;

  // Adds a matmul on `ctx`: the job in flight on ctx's buffers (if any) completes first, then A
  // (formats as execute_any) is packed into ctx's feature BO, so the caller may reuse A as
  // soon as add returns. `c` (formats as execute_any) is written when this job completes,
  // by complete() or by the rule, and must stay valid until then. A second matmul on the
  // buffers of one already added is an error (its A would overwrite the first's).
  Status add(std::shared_ptr<Context> ctx, const void* a, void* c);
  // The same, C's columns each to its part's own output (plan.h ColumnPart; kept here).
  Status add(std::shared_ptr<Context> ctx, const void* a, std::span<const ColumnPart> columns);
  // Hands the job to the kernel: the first slice group of its one matmul, or `chained`
  // (chain_contexts over its matmuls' contexts, in the order added, checked once by this
  // kmd: Kmd::check). Either was checked and laid out once, when it was built, so a submit
  // neither checks nor lays out anything (Kmd::submit_async_checked). From here on its
  // contexts are busy with this job.
  Status submit(const driver::CheckedSubmit* chained = nullptr);
  // Waits for the kernel job up to `timeout_ms` (-1: up to its own timeout), then unpacks
  // each matmul's first slice group into its C and runs its remaining groups (blocking:
  // they reuse the output slots). -EBUSY: still running after timeout_ms, wait again. Once
  // completed it returns the same outcome again. After a failure the C are undefined.
  Status complete(int64_t timeout_ms = -1);
  // Waits for the kernel job and discards its result (no C written), unless completed.
  void drain();

  bool in_flight() const { return pending_ != nullptr && !done_; }
  // The outcome came from the kernel's wait (the job failed on the device; no C written),
  // not from unpacking.
  bool failed_on_device() const { return failed_on_device_; }
  const RunStats& stats() const { return stats_; }
  // Its matmuls whose K-slices run stacked (Plan::stacked).
  int stacked_matmuls() const {
    int n = 0;
    for (const Part& p : parts_) n += p.ctx->plan.stacked ? 1 : 0;
    return n;
  }

 private:
  struct Part {
    std::shared_ptr<Context> ctx;
    void* c = nullptr;
    std::vector<ColumnPart> columns;  // C to these parts instead, when any
    OutputState out;
  };
  Status unpack();
  void settle(Status outcome);

  driver::Kmd& kmd_;
  std::vector<Part> parts_;
  std::unique_ptr<driver::PendingJob> pending_;
  int64_t submit_ns_ = 0;  // the submit ioctl's host time
  RunStats stats_;
  bool done_ = false;
  bool failed_on_device_ = false;
  Status outcome_;
};

// One submit descriptor running the first slice group of every context in `ctxs`, one after
// the other on each physical core (a job of several matmuls, Job::submit): on each core the
// last task of a context's list is re-chained (its PC trailer, regcmd::patch_next) to the
// first task of the next context's list on that core, and the regcmd BOs are synced. Every
// context must have exactly one slice group; they are the caller's (a batch's own), no
// longer usable alone afterwards.
Result<driver::SubmitDesc> chain_contexts(driver::Kmd& kmd, std::span<Context* const> ctxs);

// The rule: completes the job in flight on `ctx`'s buffers (ctx.io, maybe shared), if any
// (pack_input calls it).
void complete_busy(const Context& ctx);

}  // namespace ork::matmul
