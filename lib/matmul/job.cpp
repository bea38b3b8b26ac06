// The matmul job (job.h): launch, complete, drain, and the rule of a context's buffers.
#include "lib/matmul/job.h"

#include <chrono>
#include <utility>

#include <fmt/format.h>

#include "lib/matmul/execute.h"
#include "lib/ref/workers.h"

namespace ork::matmul {
namespace {

using Clock = std::chrono::steady_clock;

int64_t job_ns_since(Clock::time_point t0) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t0).count();
}

}  // namespace

void complete_busy(const Context& ctx) {
  // complete() settles the job, which clears the mark of each of its contexts' buffers; its
  // outcome is kept for its owner. The mark is the buffers', so a job that came through
  // another context sharing them is completed too.
  if (ctx.io->busy != nullptr) (void)ctx.io->busy->complete(-1);
}

Job::Job(driver::Kmd& kmd, RunStats stats) : kmd_(kmd), stats_(stats) {}

Job::~Job() { drain(); }

Status Job::add(std::shared_ptr<Context> ctx, const void* a, void* c) {
  if (pending_) return make_error(-EINVAL, "a matmul added to a job already submitted");
  // One job cannot hold the same buffers twice: the second A would overwrite the first.
  for (const Part& p : parts_)
    if (p.ctx->io == ctx->io)
      return make_error(-EINVAL, "two matmuls of one job on the same feature and output buffers");
  if (auto s = pack_input(kmd_, *ctx, a, stats_); !s) return s;
  Part part;
  part.out = make_output_state(*ctx);
  part.ctx = std::move(ctx);
  part.c = c;
  parts_.push_back(std::move(part));
  return Status::success();
}

Status Job::add(std::shared_ptr<Context> ctx, const void* a, std::span<const ColumnPart> columns) {
  if (columns.empty()) return make_error(-EINVAL, "a matmul's C given as no columns");
  if (auto s = add(std::move(ctx), a, nullptr); !s) return s;
  parts_.back().columns.assign(columns.begin(), columns.end());
  return Status::success();
}

Status Job::submit(const driver::CheckedSubmit* chained) {
  if (parts_.empty() || pending_) return make_error(-EINVAL, "a job submitted without a matmul, or twice");
  if (chained == nullptr && parts_.size() != 1)
    return make_error(-EINVAL, "a job of several matmuls is submitted with their chained descriptor");
  stats_.device_ns = 0;
  const auto t0 = Clock::now();
  const int64_t c0 = ref::detail::work_cpu_ns();
  auto pending = kmd_.submit_async_checked(chained != nullptr ? *chained : parts_[0].ctx->groups[0].submit);
  submit_ns_ = job_ns_since(t0);
  stats_.submit_cpu_ns += ref::detail::work_cpu_ns() - c0;
  if (!pending) return pending.error();
  pending_ = std::move(*pending);
  for (const Part& p : parts_) p.ctx->io->busy = this;
  return Status::success();
}

Status Job::unpack() {
  for (Part& p : parts_) {
    if (auto s = unpack_group(kmd_, *p.ctx, 0, p.c, p.out, stats_, p.columns); !s) return s;
    if (auto s = run_groups(kmd_, *p.ctx, 1, p.c, p.out, stats_, p.columns); !s) return s;
  }
  return Status::success();
}

void Job::settle(Status outcome) {
  done_ = true;
  outcome_ = std::move(outcome);
  for (Part& p : parts_) {
    if (p.ctx->io->busy == this) p.ctx->io->busy = nullptr;
    p.out = {};
  }
}

Status Job::complete(int64_t timeout_ms) {
  if (done_ || !pending_) return done_ ? outcome_ : make_error(-EINVAL, "a job completed before it was submitted");
  const auto t0 = Clock::now();
  const int64_t c0 = ref::detail::work_cpu_ns();
  auto r = kmd_.wait(*pending_, timeout_ms);
  stats_.submit_cpu_ns += ref::detail::work_cpu_ns() - c0;
  if (!r && r.error().code == -EBUSY) return r.error();  // still running: stays in flight
  if (!r) {
    failed_on_device_ = true;
    settle(make_error(r.error().code, fmt::format("the matmul failed on the device: {}", r.error().message)));
    return outcome_;
  }
  account_submit(stats_, *r, submit_ns_ + job_ns_since(t0));
  settle(unpack());
  return outcome_;
}

void Job::drain() {
  if (!in_flight()) return;
  if (!pending_->finished) (void)kmd_.wait(*pending_, -1);
  settle(make_error(-ECANCELED, "the job's result was discarded"));
}

}  // namespace ork::matmul
