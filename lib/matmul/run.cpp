// Resident weights and the runner's context cache.
#include "lib/matmul/run.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <vector>

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
  if (auto s = pack_weights(*plan, row_major, {(*bo)->map(), static_cast<size_t>(plan->b_bytes())}); !s)
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

Result<std::unique_ptr<ResidentWeights>> ResidentWeights::create_w4a8(driver::Kmd& kmd, int64_t k, int64_t n,
                                                                      const uint8_t* packed) {
  if (packed == nullptr) return make_error(-EINVAL, "weights data is NULL");
  if (k < 1 || n < 1) return make_error(-EINVAL, fmt::format("w4a8 weights of K = {}, N = {}: must be >= 1", k, n));
  // The widened copy lives only until it is packed into the BO: host memory keeps int4.
  std::vector<int8_t> wide(static_cast<size_t>(k * n));
  if (auto s = widen_int4({packed, static_cast<size_t>(int4_packed_bytes(k * n))}, k * n, wide); !s) return s.error();
  return create(kmd, DType::int8, k, n, wide.data());
}

MatmulRunner::MatmulRunner(driver::Kmd& kmd) : kmd_(kmd) {}
MatmulRunner::~MatmulRunner() = default;

void MatmulRunner::forget(const ResidentWeights& w) {
  std::erase_if(contexts_, [&](const auto& kv) { return std::get<0>(kv.first) == w.id(); });
}

Result<Context*> MatmulRunner::context_for(const ResidentWeights& w, int64_t m, const RunOptions& options,
                                           bool* built) {
  const Key key{w.id(), m, options.cores, options.mc_cap, options.fp16_out};
  *built = false;
  if (auto it = contexts_.find(key); it != contexts_.end()) {
    it->second->last_used = ++clock_;
    return it->second.get();
  }
  auto plan = make_plan(Shape{m, w.k(), w.n()},
                        PlanOptions{.dtype = w.dtype(), .cores = options.cores, .mc_cap = options.mc_cap,
                                    .fp16_out = options.fp16_out});
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
  return execute_any(kmd_, **ctx, a, c, st);
}

}  // namespace ork::matmul
