// Resident weights and the runner's context cache.
#include "lib/matmul/run.h"

#include <algorithm>
#include <atomic>
#include <chrono>

#include <fmt/format.h>

#include "lib/matmul/layout.h"

namespace ork::matmul {
namespace {

std::atomic<uint64_t> next_weights_id{1};

// The plan for M = 1 on one core describes the weights' layout (slices, padding).
Result<Plan> layout_plan(DType dtype, int64_t k, int64_t n) {
  return make_plan(Shape{1, k, n}, PlanOptions{.dtype = dtype, .cores = 1, .mc_cap = 0});
}

}  // namespace

Result<std::unique_ptr<ResidentWeights>> ResidentWeights::create(driver::Kmd& kmd, DType dtype, int64_t k,
                                                                 int64_t n, const void* row_major) {
  if (row_major == nullptr) return make_error(-EINVAL, "weights data is NULL");
  auto plan = layout_plan(dtype, k, n);
  if (!plan) return plan.error();
  auto bo = kmd.bo_create(static_cast<size_t>(plan->b_bytes()), driver::BoUsage::data);
  if (!bo) return make_error(bo.error().code, fmt::format("allocating the weight buffer: {}", bo.error().message));
  const std::span<const int8_t> w{static_cast<const int8_t*>(row_major), static_cast<size_t>(k * n)};
  if (auto s = pack_b_int8(w, *plan, {reinterpret_cast<int8_t*>((*bo)->map()), static_cast<size_t>(plan->b_bytes())});
      !s)
    return s.error();
  if (auto s = kmd.bo_sync(**bo, driver::SyncDir::to_device); !s) return s.error();
  std::unique_ptr<ResidentWeights> rw(new ResidentWeights());
  rw->dtype_ = dtype;
  rw->k_ = k;
  rw->n_ = n;
  rw->bo_ = std::move(*bo);
  rw->id_ = next_weights_id++;
  return rw;
}

MatmulRunner::MatmulRunner(driver::Kmd& kmd) : kmd_(kmd) {}
MatmulRunner::~MatmulRunner() = default;

void MatmulRunner::forget(const ResidentWeights& w) {
  std::erase_if(contexts_, [&](const auto& kv) { return std::get<0>(kv.first) == w.id(); });
}

Result<Context*> MatmulRunner::context_for(const ResidentWeights& w, int64_t m, const RunOptions& options,
                                           bool* built) {
  const Key key{w.id(), m, options.cores, options.mc_cap};
  *built = false;
  if (auto it = contexts_.find(key); it != contexts_.end()) {
    it->second->last_used = ++clock_;
    return it->second.get();
  }
  auto plan = make_plan(Shape{m, w.k(), w.n()},
                        PlanOptions{.dtype = w.dtype(), .cores = options.cores, .mc_cap = options.mc_cap});
  if (!plan) return plan.error();
  auto ctx = build_context(kmd_, std::move(*plan), w.bo());
  if (!ctx) return ctx.error();
  if (contexts_.size() >= kMaxContexts) {
    auto lru = std::min_element(contexts_.begin(), contexts_.end(), [](const auto& x, const auto& y) {
      return x.second->last_used < y.second->last_used;
    });
    contexts_.erase(lru);
  }
  (*ctx)->last_used = ++clock_;
  *built = true;
  Context* raw = ctx->get();
  contexts_.emplace(key, std::move(*ctx));
  return raw;
}

Status MatmulRunner::run(const ResidentWeights& w, const void* a, int64_t m, void* c, const RunOptions& options,
                         RunStats* stats) {
  RunStats local;
  RunStats& st = stats ? *stats : local;
  st = RunStats{};
  if (a == nullptr) return make_error(-EINVAL, "A is NULL");
  if (c == nullptr) return make_error(-EINVAL, "C is NULL");
  const auto t0 = std::chrono::steady_clock::now();
  auto ctx = context_for(w, m, options, &st.built);
  if (!ctx) return ctx.error();
  st.plan_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count();
  return execute(kmd_, **ctx, {static_cast<const int8_t*>(a), static_cast<size_t>(m * w.k())},
                 {static_cast<int32_t*>(c), static_cast<size_t>(m * w.n())}, st);
}

}  // namespace ork::matmul
