// The per-call path of a matmul, and the contexts that make it cheap: a context (plan,
// feature/output BOs, chained command lists in one regcmd BO, submit descriptors) is built
// once per (weights, M, cores, mc_cap) and reused, so a call only packs A, submits, waits
// and unpacks C. Nothing is patched per call because every address is fixed per context.
#include "lib/matmul/run.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>

#include <fmt/format.h>

#include "lib/matmul/emit.h"
#include "lib/matmul/layout.h"

namespace ork::matmul {
namespace {

using Clock = std::chrono::steady_clock;
int64_t ns_since(Clock::time_point t0) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t0).count();
}

// Bytes of K-slice partial outputs one submit may keep live; wider K runs in several
// submits (slice groups). Keeps the worst case (M=4100, N=16384, 10 slices) inside the
// NPU's 4 GiB window.
constexpr int64_t kPartialBudgetBytes = int64_t{512} << 20;

std::atomic<uint64_t> next_weights_id{1};

// The layout of the weights depends on K, N and dtype only (never on M or cores): the
// plan for M = 1 on one core describes it.
Result<Plan> layout_plan(DType dtype, int64_t k, int64_t n) {
  return make_plan(Shape{1, k, n}, PlanOptions{.dtype = dtype, .cores = 1, .mc_cap = 0});
}

Error device_error(const Error& e, const char* what) {
  return make_error(e.code, fmt::format("{}: {}", what, e.message));
}

}  // namespace

Result<std::unique_ptr<ResidentWeights>> ResidentWeights::create(driver::Kmd& kmd, DType dtype,
                                                                 int64_t k, int64_t n,
                                                                 const void* row_major) {
  if (row_major == nullptr) return make_error(-EINVAL, "weights data is NULL");
  auto plan = layout_plan(dtype, k, n);
  if (!plan) return plan.error();
  auto bo = kmd.bo_create(static_cast<size_t>(plan->b_bytes()), driver::BoUsage::data);
  if (!bo) return device_error(bo.error(), "allocating the weight buffer");
  const auto* w8 = static_cast<const int8_t*>(row_major);
  if (auto s = pack_b_int8({w8, static_cast<size_t>(k * n)}, *plan,
                           {reinterpret_cast<int8_t*>((*bo)->map()), static_cast<size_t>(plan->b_bytes())});
      !s)
    return s.error();
  if (auto s = kmd.bo_sync(**bo, driver::SyncDir::to_device); !s) return s.error();
  std::unique_ptr<ResidentWeights> w(new ResidentWeights());
  w->dtype_ = dtype;
  w->k_ = k;
  w->n_ = n;
  w->bo_ = std::move(*bo);
  w->id_ = next_weights_id++;
  return w;
}

struct SliceGroup {
  int64_t first_slice = 0;
  int64_t count = 0;
  driver::SubmitDesc desc;
};

struct MatmulRunner::Context {
  Plan plan;
  std::unique_ptr<driver::Bo> a;
  std::vector<std::unique_ptr<driver::Bo>> c;  // one per slice slot of a group
  std::unique_ptr<driver::Bo> regcmd;
  std::vector<SliceGroup> groups;
  uint64_t last_used = 0;
};

MatmulRunner::MatmulRunner(driver::Kmd& kmd) : kmd_(kmd) {}
MatmulRunner::~MatmulRunner() = default;

void MatmulRunner::forget(const ResidentWeights& w) {
  std::erase_if(contexts_, [&](const auto& kv) { return std::get<0>(kv.first) == w.id(); });
}

namespace {

// Tasks of one core whose slice lies in [first, first + count).
std::vector<Task> core_tasks(const Plan& plan, int core, int64_t first, int64_t count) {
  std::vector<Task> out;
  for (const Task& t : plan.tasks)
    if (t.core == core && t.slice >= first && t.slice < first + count) out.push_back(t);
  return out;
}

// Emits every group's per-core command lists for a regcmd region at `base`; returns the
// lists in (group, core) order and the bytes they occupy.
Result<std::vector<CoreCommands>> emit_all(const Plan& plan, const std::vector<SliceGroup>& groups,
                                           const std::vector<BufferIovas>& iovas, uint64_t base,
                                           size_t* bytes) {
  std::vector<CoreCommands> all;
  uint64_t offset = 0;
  for (size_t g = 0; g < groups.size(); ++g) {
    for (int core = 0; core < plan.cores_used; ++core) {
      auto tasks = core_tasks(plan, core, groups[g].first_slice, groups[g].count);
      if (tasks.empty()) continue;
      auto cmds = emit_core(plan, tasks, iovas[g], base + offset);
      if (!cmds) return cmds.error();
      cmds->core = core;
      offset += (cmds->entries.size() * 8 + 63) / 64 * 64;
      all.push_back(std::move(*cmds));
    }
  }
  *bytes = offset;
  return all;
}

}  // namespace

Result<MatmulRunner::Context*> MatmulRunner::context_for(const ResidentWeights& w, int64_t m,
                                                          const RunOptions& options, bool* built) {
  Key key{w.id(), m, options.cores, options.mc_cap};
  *built = false;
  if (auto it = contexts_.find(key); it != contexts_.end()) {
    it->second->last_used = ++clock_;
    return it->second.get();
  }
  auto plan = make_plan(Shape{m, w.k(), w.n()},
                        PlanOptions{.dtype = w.dtype(), .cores = options.cores, .mc_cap = options.mc_cap});
  if (!plan) return plan.error();
  auto ctx = std::make_unique<Context>();
  ctx->plan = std::move(*plan);
  const Plan& p = ctx->plan;

  auto a = kmd_.bo_create(static_cast<size_t>(p.a_bytes()), driver::BoUsage::data);
  if (!a) return device_error(a.error(), "allocating the feature buffer");
  ctx->a = std::move(*a);
  const int64_t slots =
      std::clamp<int64_t>(kPartialBudgetBytes / std::max<int64_t>(p.c_bytes_per_slice(), 1), 1, p.slices);
  for (int64_t i = 0; i < slots; ++i) {
    auto c = kmd_.bo_create(static_cast<size_t>(p.c_bytes_per_slice()), driver::BoUsage::data);
    if (!c) return device_error(c.error(), "allocating an output buffer");
    ctx->c.push_back(std::move(*c));
  }
  std::vector<BufferIovas> iovas;
  for (int64_t first = 0; first < p.slices; first += slots) {
    SliceGroup g{.first_slice = first, .count = std::min(slots, p.slices - first)};
    BufferIovas io{.a = ctx->a->iova(), .b = w.bo().iova(), .c = {}, .first_slice = first};
    for (int64_t i = 0; i < g.count; ++i) io.c.push_back(ctx->c[static_cast<size_t>(i)]->iova());
    ctx->groups.push_back(std::move(g));
    iovas.push_back(std::move(io));
  }
  // Two passes: the first learns the size of the command lists, the second emits them
  // for the regcmd BO's real address (the trailers hold absolute addresses).
  size_t bytes = 0;
  if (auto sized = emit_all(p, ctx->groups, iovas, 0, &bytes); !sized) return sized.error();
  auto rc = kmd_.bo_create(bytes, driver::BoUsage::regcmd);
  if (!rc) return device_error(rc.error(), "allocating the command buffer");
  ctx->regcmd = std::move(*rc);
  auto cmds = emit_all(p, ctx->groups, iovas, ctx->regcmd->iova(), &bytes);
  if (!cmds) return cmds.error();

  uint64_t offset = 0;
  size_t next = 0;
  for (SliceGroup& g : ctx->groups) {
    g.desc.in_bos = {ctx->a.get(), &w.bo(), ctx->regcmd.get()};
    for (int64_t i = 0; i < g.count; ++i) g.desc.out_bos.push_back(ctx->c[static_cast<size_t>(i)].get());
    for (int core = 0; core < p.cores_used; ++core) {
      if (core_tasks(p, core, g.first_slice, g.count).empty()) continue;
      const CoreCommands& cc = (*cmds)[next++];
      std::memcpy(ctx->regcmd->map() + offset, cc.entries.data(), cc.entries.size() * 8);
      driver::CoreJob job{.core = core, .tasks = {}};
      for (size_t t = 0; t < cc.task_offsets.size(); ++t)
        job.tasks.push_back({.regcmd_iova = ctx->regcmd->iova() + offset + cc.task_offsets[t] * 8,
                             .regcmd_entries = cc.task_entries[t]});
      g.desc.jobs.push_back(std::move(job));
      offset += (cc.entries.size() * 8 + 63) / 64 * 64;
    }
  }
  if (auto s = kmd_.bo_sync(*ctx->regcmd, driver::SyncDir::to_device); !s) return s.error();

  if (contexts_.size() >= kMaxContexts) {
    auto lru = std::min_element(contexts_.begin(), contexts_.end(), [](const auto& x, const auto& y) {
      return x.second->last_used < y.second->last_used;
    });
    contexts_.erase(lru);
  }
  ctx->last_used = ++clock_;
  *built = true;
  Context* raw = ctx.get();
  contexts_.emplace(key, std::move(ctx));
  return raw;
}

Status MatmulRunner::run(const ResidentWeights& w, const void* a, int64_t m, void* c,
                         const RunOptions& options, RunStats* stats) {
  RunStats local;
  RunStats& st = stats ? *stats : local;
  st = RunStats{};
  if (a == nullptr) return make_error(-EINVAL, "A is NULL");
  if (c == nullptr) return make_error(-EINVAL, "C is NULL");

  auto t0 = Clock::now();
  auto ctx = context_for(w, m, options, &st.built);
  if (!ctx) return ctx.error();
  st.plan_ns = ns_since(t0);
  Context& x = **ctx;

  t0 = Clock::now();
  const Plan& p = x.plan;
  if (auto s = pack_a_int8({static_cast<const int8_t*>(a), static_cast<size_t>(m * p.shape.k)}, p,
                           {reinterpret_cast<int8_t*>(x.a->map()), static_cast<size_t>(p.a_bytes())});
      !s)
    return s.error();
  if (auto s = kmd_.bo_sync(*x.a, driver::SyncDir::to_device); !s) return s.error();
  st.pack_ns = ns_since(t0);

  auto* out = static_cast<int32_t*>(c);
  st.device_ns = 0;
  for (const SliceGroup& g : x.groups) {
    t0 = Clock::now();
    auto r = kmd_.submit(g.desc);
    st.submit_ns += ns_since(t0);
    ++st.submits;
    if (!r) return r.error();
    if (r->hw_elapse_ns < 0) st.device_ns = -1;
    else if (st.device_ns >= 0) st.device_ns += r->hw_elapse_ns;

    t0 = Clock::now();
    for (int64_t i = 0; i < g.count; ++i) {
      const driver::Bo& cb = *x.c[static_cast<size_t>(i)];
      if (auto s = kmd_.bo_sync(cb, driver::SyncDir::from_device); !s) return s.error();
      std::span<const int32_t> native{reinterpret_cast<const int32_t*>(cb.map()),
                                      static_cast<size_t>(c_elements_per_slice(p))};
      std::span<int32_t> dst{out, static_cast<size_t>(m * p.shape.n)};
      auto s = g.first_slice + i == 0 ? unpack_c_int32(native, p, dst) : accumulate_c_int32(native, p, dst);
      if (!s) return s.error();
    }
    st.unpack_ns += ns_since(t0);
  }
  return Status::success();
}

}  // namespace ork::matmul
