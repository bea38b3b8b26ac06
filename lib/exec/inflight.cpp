// Matmuls in flight (inflight.h).
#include "lib/exec/inflight.h"

#include <chrono>
#include <utility>

namespace ork::exec {
namespace {

int64_t ns_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

Result<InFlight> launch_matmul(driver::Kmd& kmd, std::shared_ptr<matmul::Context> ctx, const void* a) {
  InFlight job;
  if (auto s = matmul::pack_input(kmd, *ctx, a, job.stats); !s) return s.error();
  job.out = matmul::make_output_state(*ctx);
  const auto t0 = std::chrono::steady_clock::now();
  auto pending = kmd.submit_async(ctx->groups[0].desc);
  job.submit_ns = ns_since(t0);
  if (!pending) return pending.error();
  job.pending = std::move(*pending);
  job.ctx = std::move(ctx);
  return job;
}

Status complete_matmul(driver::Kmd& kmd, InFlight& job, void* c) {
  const auto t0 = std::chrono::steady_clock::now();
  auto r = kmd.wait(*job.pending, -1);  // -1: up to the job's own timeout (desc.timeout_ms)
  if (!r) return make_error(r.error().code, "the matmul failed on the device: " + r.error().message);
  matmul::account_submit(job.stats, *r, job.submit_ns + ns_since(t0));
  if (auto s = matmul::unpack_group(kmd, *job.ctx, 0, c, job.out, job.stats); !s) return s;
  return matmul::run_groups(kmd, *job.ctx, 1, c, job.out, job.stats);
}

void drain_matmul(driver::Kmd& kmd, InFlight& job) {
  if (job.pending && !job.pending->finished) (void)kmd.wait(*job.pending, -1);
}

}  // namespace ork::exec
