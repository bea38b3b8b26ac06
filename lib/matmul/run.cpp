// Resident weights and the runner's context cache.
#include "lib/matmul/run.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <chrono>
#include <vector>

#include <fmt/format.h>

#include "driver/common/env.h"
#include "lib/matmul/int4_bound.h"
#include "lib/matmul/layout.h"
#include "lib/ref/workers.h"

namespace ork::matmul {
namespace {

std::atomic<uint64_t> next_weights_id{1};

// The plan for M = 1 on one core describes the weights' layout (slices, padding).
Result<Plan> layout_plan(DType dtype, int64_t k, int64_t n, int64_t slice_k = 0) {
  return make_plan(Shape{1, k, n}, PlanOptions{.dtype = dtype, .cores = 1, .mc_cap = 0, .slice_k = slice_k});
}

}  // namespace

Result<Plan> ResidentWeights::layout(DType dtype, int64_t k, int64_t n, int64_t slice_k) {
  return layout_plan(dtype, k, n, slice_k);
}

Result<std::unique_ptr<ResidentWeights>> ResidentWeights::create(driver::Kmd& kmd, DType dtype, int64_t k,
                                                                 int64_t n, const void* row_major) {
  if (row_major == nullptr) return make_error(-EINVAL, "weights data is NULL");
  int64_t slice_k = 0;
  if (dtype == DType::int4) {  // the widest slices the weights' own bound allows (int4_bound.h)
    const std::span<const uint8_t> packed{static_cast<const uint8_t*>(row_major),
                                          static_cast<size_t>(int4_packed_bytes(k * n))};
    auto width = int4_safe_slice_k(packed, k, n);
    if (!width) return width.error();
    slice_k = *width;
  }
  return create_with(
      kmd, dtype, k, n, [&](const Plan& plan, std::span<uint8_t> out) { return pack_weights(plan, row_major, out); },
      slice_k);
}

Result<std::unique_ptr<ResidentWeights>> ResidentWeights::create_with(driver::Kmd& kmd, DType dtype, int64_t k,
                                                                      int64_t n, const Fill& fill, int64_t slice_k) {
  auto plan = layout_plan(dtype, k, n, slice_k);
  if (!plan) return plan.error();
  const auto bytes = static_cast<size_t>(plan->b_bytes());
  auto bo = kmd.bo_create(bytes, driver::BoUsage::data);
  if (!bo) return make_error(bo.error().code, fmt::format("allocating the weight buffer: {}", bo.error().message));
  if (auto s = fill(*plan, {(*bo)->map(), bytes}); !s) return s.error();
  if (auto s = kmd.bo_sync(**bo, driver::SyncDir::to_device); !s) return s.error();
  std::unique_ptr<ResidentWeights> rw(new ResidentWeights());
  rw->dtype_ = dtype;
  rw->k_ = k;
  rw->n_ = n;
  rw->slice_k_ = slice_k;
  rw->native_bytes_ = bytes;
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

Result<int64_t> ResidentWeights::packed_bytes(DType dtype, int64_t k, int64_t n) {
  auto plan = layout_plan(dtype, k, n);
  if (!plan) return plan.error();
  return plan->b_bytes();
}

Result<std::unique_ptr<ResidentWeights>> ResidentWeights::view(const driver::Bo& bo, DType dtype, int64_t k, int64_t n,
                                                               int64_t slice_k) {
  auto plan = layout_plan(dtype, k, n, slice_k);  // checks the width too
  if (!plan) return plan.error();
  const int64_t bytes = plan->b_bytes();
  if (static_cast<int64_t>(bo.size()) < bytes)
    return make_error(-EINVAL, fmt::format("weight buffer of {} bytes: {} x {} {} needs {}", bo.size(), k, n,
                                           dtype_name(dtype), bytes));
  std::unique_ptr<ResidentWeights> rw(new ResidentWeights());
  rw->dtype_ = dtype;
  rw->k_ = k;
  rw->n_ = n;
  rw->slice_k_ = slice_k;
  rw->view_ = &bo;
  rw->native_bytes_ = static_cast<size_t>(bytes);
  rw->id_ = next_weights_id++;
  return rw;
}

uint32_t effective_core_mask(const RunOptions& options) {
  if (options.core_mask != 0) return options.core_mask;
  return options.cores >= 32 ? ~0u : (1u << std::max(options.cores, 1)) - 1;
}

Result<Plan> plan_call(const ResidentWeights& w, int64_t m, const RunOptions& options) {
  return make_plan(Shape{m, w.k(), w.n()},
                   PlanOptions{.dtype = w.dtype(), .cores = std::popcount(effective_core_mask(options)),
                               .mc_cap = options.mc_cap, .fp16_out = options.fp16_out, .slice_k = w.slice_k()});
}

Result<std::unique_ptr<Context>> build_call_context(driver::Kmd& kmd, const ResidentWeights& w, int64_t m,
                                                    const RunOptions& options, const PlanChooser& chooser) {
  auto plan = chooser ? chooser(w, m, options) : plan_call(w, m, options);
  if (!plan) return plan.error();
  return build_context(kmd, std::move(*plan), w.bo(), {}, effective_core_mask(options));
}

size_t MatmulRunner::default_context_bytes() {
  const uint64_t quarter_window = static_cast<uint64_t>(kNpuWindowBytes) / 4;
  const uint64_t phys = physical_memory_bytes();
  return static_cast<size_t>(phys ? std::min(quarter_window, phys / 16) : quarter_window);
}

size_t MatmulRunner::KeyHash::operator()(const Key& k) const noexcept {
  uint64_t h = k.weights * 0x9e3779b97f4a7c15ull;
  for (uint64_t v : {static_cast<uint64_t>(k.m), uint64_t{k.core_mask}, static_cast<uint64_t>(k.mc_cap),
                     uint64_t{k.fp16_out} | uint64_t{k.shared} << 1})
    h = (h ^ v) * 0x100000001b3ull + (h >> 29);
  return static_cast<size_t>(h);
}

MatmulRunner::MatmulRunner(driver::Kmd& kmd, size_t context_bytes)
    : kmd_(kmd), contexts_(context_bytes), capacity_(context_bytes) {}
MatmulRunner::~MatmulRunner() = default;

void MatmulRunner::forget(const ResidentWeights& w) { contexts_.erase_group(w.id()); }

size_t MatmulRunner::shared_bytes() const {
  size_t bytes = 0;
  for (const auto& [geometry, io] : shared_io_)
    if (auto live = io.lock()) bytes += live->bytes();
  return bytes;
}

void MatmulRunner::rebound() {
  const size_t shared = shared_bytes();
  contexts_.set_capacity(capacity_ > shared ? capacity_ - shared : 0);
}

MatmulRunner::CacheStats MatmulRunner::cache_stats() const {
  return {contexts_.size(), contexts_.bytes() + shared_bytes(), capacity_, contexts_.evictions()};
}

Result<std::shared_ptr<IoBuffers>> MatmulRunner::shared_io(const IoGeometry& geometry) {
  std::erase_if(shared_io_, [](const auto& e) { return e.second.expired(); });
  for (const auto& [g, io] : shared_io_)
    if (g == geometry) return io.lock();
  auto io = allocate_io(kmd_, geometry);
  if (!io) return io.error();
  shared_io_.emplace_back(geometry, *io);
  rebound();  // may evict contexts, never this set: the caller holds it
  return io;
}

Result<std::shared_ptr<Context>*> MatmulRunner::context_for(WeightsRef w, int64_t m,
                                                            const RunOptions& options, bool shared, bool* built) {
  const uint32_t mask = effective_core_mask(options);
  const Key key{.weights = w.id(), .m = m, .mc_cap = options.mc_cap, .core_mask = mask, .fp16_out = options.fp16_out,
                .shared = shared};
  *built = false;
  if (auto* hit = contexts_.find(key)) return hit;
  // A miss: only now is the weights object read (its shape, dtype, BO).
  const ResidentWeights& rw = w.weights();
  auto plan = chooser_ ? chooser_(rw, m, options) : plan_call(rw, m, options);
  if (!plan) return plan.error();
  std::shared_ptr<IoBuffers> io;
  if (shared) {
    auto set = shared_io(io_geometry(*plan));
    if (!set) return set.error();
    io = std::move(*set);
  }
  auto ctx = build_context(kmd_, std::move(*plan), rw.bo(), {}, mask, std::move(io));
  if (!ctx) return ctx.error();
  *built = true;
  const size_t bytes = (*ctx)->device_bytes();
  return contexts_.insert(key, w.id(), std::shared_ptr<Context>(std::move(*ctx)), bytes, /*keep_new=*/true);
}

namespace {
// A memo's call bits sit below the context's address: 3 of the core mask, 1 of the C type, 1
// set in every memo. Context is aligned to a cache line, so its low 6 bits are 0.
constexpr uintptr_t kMemoMaskBits = 0x7, kMemoFp16 = 1u << 3, kMemoSet = 1u << 4, kMemoBits = 0x1f;
static_assert(alignof(Context) > kMemoBits, "the memo's bits need the context's low address bits free");
}  // namespace

uintptr_t MatmulRunner::memo_bits(const RunOptions& options) {
  const uint32_t mask = effective_core_mask(options);
  if (options.mc_cap != 0 || mask > kMemoMaskBits) return 0;
  return mask | (options.fp16_out ? kMemoFp16 : 0) | kMemoSet;
}

// The stamp first: only while it is the cache's current one is the address a context this
// cache still holds (a freed one's is never read). Then the key: the bits, and M from the
// context's plan, a line the call reads next anyway (Plan::a_bytes).
const Context* MatmulRunner::recall(const ContextMemo& memo, int64_t m, const RunOptions& options) const {
  if (memo.stamp_.load(std::memory_order_relaxed) != contexts_.generation()) return nullptr;
  const uintptr_t tagged = memo.tagged_.load(std::memory_order_relaxed);
  const uintptr_t bits = memo_bits(options);
  if (bits == 0 || (tagged & kMemoBits) != bits) return nullptr;
  const auto* ctx = reinterpret_cast<const Context*>(tagged & ~kMemoBits);
  return ctx->plan.shape.m == m ? ctx : nullptr;
}

// `ctx` is the cache's context of run()'s key for (the holder's weights, m, options), just found
// or built: nothing is dropped between that and this stamp.
void MatmulRunner::remember(ContextMemo& memo, const Context& ctx, int64_t m, const RunOptions& options) const {
  const uintptr_t bits = memo_bits(options);
  if (bits == 0 || ctx.plan.shape.m != m) return;  // a key the memo cannot hold whole
  memo.tagged_.store(reinterpret_cast<uintptr_t>(&ctx) | bits, std::memory_order_relaxed);
  memo.stamp_.store(contexts_.generation(), std::memory_order_relaxed);
}

Result<std::shared_ptr<Context>> MatmulRunner::acquire(WeightsRef w, int64_t m, const RunOptions& options,
                                                       RunStats& st) {
  const auto t0 = std::chrono::steady_clock::now();
  const int64_t c0 = ref::detail::work_cpu_ns();
  auto ctx = context_for(w, m, options, /*shared=*/false, &st.built);
  st.plan_ns += std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count();
  st.plan_cpu_ns += ref::detail::work_cpu_ns() - c0;
  if (!ctx) return ctx.error();
  return **ctx;
}

Status MatmulRunner::run(WeightsRef w, const void* a, int64_t m, void* c, const RunOptions& options,
                         RunStats* stats, std::span<const ColumnPart> columns) {
  RunStats local;
  RunStats& st = stats ? *stats : local;
  st = RunStats{};
  if (a == nullptr) return make_error(-EINVAL, "A is NULL");
  if (c == nullptr && columns.empty()) return make_error(-EINVAL, "C is NULL");
  const auto t0 = std::chrono::steady_clock::now();
  const int64_t c0 = ref::detail::work_cpu_ns();
  // The cache's entry is used in place, not copied: a blocking call builds and evicts nothing
  // more until it returns, and a copy would write the count in the context's own control
  // block, one more line of that weight's on every call (docs/library.md "What grows with the
  // model's size"). The holder's memo, when it proves its context, spares the lookup.
  ContextMemo* memo = w.memo();
  const Context* ctx = memo ? recall(*memo, m, options) : nullptr;
  st.recalled = ctx != nullptr;
  if (ctx == nullptr) {
    auto slot = context_for(w, m, options, /*shared=*/true, &st.built);
    if (!slot) return slot.error();
    ctx = (*slot)->get();
    if (memo) remember(*memo, *ctx, m, options);
  }
  st.plan_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count();
  st.plan_cpu_ns = ref::detail::work_cpu_ns() - c0;
  return execute_any(kmd_, *ctx, a, c, st, columns);
}

}  // namespace ork::matmul
