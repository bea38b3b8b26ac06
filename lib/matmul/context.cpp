// Building a context (BOs, command lists, submit descriptors: once) and running it (per
// call: pack A, submit, wait, accumulate K-slices, unpack C). Every address is fixed per
// context, so nothing in the command lists is patched per call.
#include "lib/matmul/context.h"

#include <atomic>
#include <algorithm>
#include <bit>
#include <chrono>
#include <cstring>

#include <fmt/format.h>

#include "lib/matmul/layout.h"
#include "driver/common/fp16.h"
#include "lib/ref/workers.h"

namespace ork::matmul {
namespace {

using Clock = std::chrono::steady_clock;
int64_t ns_since(Clock::time_point t0) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t0).count();
}

// Bytes of K-slice partial outputs one submit may keep live; wider K runs in several
// submits (slice groups). Keeps the worst case of the sweep (M=4100, N=16384, 10 slices)
// well inside the NPU's 4 GiB address window.
constexpr int64_t kPartialBudgetBytes = int64_t{512} << 20;

Error device_error(const Error& e, const char* what) {
  return make_error(e.code, fmt::format("{}: {}", what, e.message));
}

uint64_t aligned64(size_t bytes) { return (bytes + 63) / 64 * 64; }

// Tasks of one core whose slice lies in the group.
std::vector<Task> core_tasks(const Plan& plan, int core, const SliceGroup& g) {
  std::vector<Task> out;
  for (const Task& t : plan.tasks)
    if (t.core == core && t.slice >= g.first_slice && t.slice < g.first_slice + g.count) out.push_back(t);
  return out;
}

// Every group's per-core command lists for a regcmd region at `base`, in (group, core)
// order, and the bytes they occupy.
Result<std::vector<CoreCommands>> emit_all(const Context& ctx, const std::vector<BufferIovas>& iovas,
                                           uint64_t base, const EmitOptions& emit, size_t* bytes) {
  std::vector<CoreCommands> all;
  uint64_t offset = 0;
  for (size_t g = 0; g < ctx.groups.size(); ++g) {
    for (int core = 0; core < ctx.plan.cores_used; ++core) {
      auto tasks = core_tasks(ctx.plan, core, ctx.groups[g]);
      if (tasks.empty()) continue;
      auto cmds = emit_core(ctx.plan, tasks, iovas[g], base + offset, emit);
      if (!cmds) return cmds.error();
      cmds->core = core;
      offset += aligned64(cmds->entries.size() * 8);
      all.push_back(std::move(*cmds));
    }
  }
  *bytes = offset;
  return all;
}

Status allocate_buffers(driver::Kmd& kmd, Context& ctx, std::vector<BufferIovas>& iovas) {
  const Plan& p = ctx.plan;
  auto a = kmd.bo_create(static_cast<size_t>(p.a_bytes()), driver::BoUsage::data);
  if (!a) return device_error(a.error(), "allocating the feature buffer");
  ctx.a = std::move(*a);
  const int64_t slots =
      std::clamp<int64_t>(kPartialBudgetBytes / std::max<int64_t>(p.c_bytes_per_slice(), 1), 1, p.slices);
  for (int64_t i = 0; i < slots; ++i) {
    auto c = kmd.bo_create(static_cast<size_t>(p.c_bytes_per_slice()), driver::BoUsage::data);
    if (!c) return device_error(c.error(), "allocating an output buffer");
    ctx.c.push_back(std::move(*c));
  }
  for (int64_t first = 0; first < p.slices; first += slots) {
    SliceGroup g{.first_slice = first, .count = std::min(slots, p.slices - first), .desc = {}};
    BufferIovas io{.a = ctx.a->iova(), .b = ctx.weights->iova(), .c = {}, .first_slice = first};
    for (int64_t i = 0; i < g.count; ++i) io.c.push_back(ctx.c[static_cast<size_t>(i)]->iova());
    ctx.groups.push_back(std::move(g));
    iovas.push_back(std::move(io));
  }
  return Status::success();
}

// The physical core of plan core `core`: the core-th set bit of the context's mask.
int physical_core(uint32_t mask, int core) {
  for (int i = 0; i < core; ++i) mask &= mask - 1;  // clear the lowest set bit `core` times
  return std::countr_zero(mask);
}

// Copies the command lists into the regcmd BO and fills each group's submit descriptor.
void lay_out(Context& ctx, const std::vector<CoreCommands>& cmds) {
  uint64_t offset = 0;
  size_t next = 0;
  for (SliceGroup& g : ctx.groups) {
    g.desc.in_bos = {ctx.a.get(), ctx.weights, ctx.regcmd.get()};
    for (int64_t i = 0; i < g.count; ++i) g.desc.out_bos.push_back(ctx.c[static_cast<size_t>(i)].get());
    for (int core = 0; core < ctx.plan.cores_used; ++core) {
      if (core_tasks(ctx.plan, core, g).empty()) continue;
      const CoreCommands& cc = cmds[next++];
      std::memcpy(ctx.regcmd->map() + offset, cc.entries.data(), cc.entries.size() * 8);
      driver::CoreJob job{.core = physical_core(ctx.core_mask, core), .tasks = {}};
      for (size_t t = 0; t < cc.task_offsets.size(); ++t)
        job.tasks.push_back({.regcmd_iova = ctx.regcmd->iova() + offset + cc.task_offsets[t] * 8,
                             .regcmd_entries = cc.task_entries[t]});
      g.desc.jobs.push_back(std::move(job));
      offset += aligned64(cc.entries.size() * 8);
    }
  }
}

}  // namespace

size_t Context::device_bytes() const {
  size_t bytes = (a ? a->size() : 0) + (regcmd ? regcmd->size() : 0);
  for (const auto& bo : c) bytes += bo->size();
  return bytes;
}

Result<std::unique_ptr<Context>> build_context(driver::Kmd& kmd, Plan plan, const driver::Bo& weights,
                                               const EmitOptions& emit, uint32_t core_mask) {
  auto ctx = std::make_unique<Context>();
  ctx->plan = std::move(plan);
  ctx->weights = &weights;
  if (static_cast<int64_t>(weights.size()) < ctx->plan.b_bytes())
    return make_error(-EINVAL, "the weight buffer is smaller than the plan's weights");
  const int cores = kmd.info().cores;
  ctx->core_mask = core_mask != 0 ? core_mask : (1u << ctx->plan.cores_used) - 1;
  if (std::popcount(ctx->core_mask) < ctx->plan.cores_used || (cores < 32 && (ctx->core_mask >> cores) != 0))
    return make_error(-EINVAL, fmt::format("core mask 0x{:x}: the plan needs {} cores of the device's {} (mask bits 0..{})",
                                           ctx->core_mask, ctx->plan.cores_used, cores, cores - 1));
  std::vector<BufferIovas> iovas;
  if (auto s = allocate_buffers(kmd, *ctx, iovas); !s) return s.error();
  // Two passes: the first learns the size of the command lists, the second emits them for
  // the regcmd BO's real address (the trailers hold absolute addresses).
  size_t bytes = 0;
  if (auto sized = emit_all(*ctx, iovas, 0, emit, &bytes); !sized) return sized.error();
  auto rc = kmd.bo_create(bytes, driver::BoUsage::regcmd);
  if (!rc) return device_error(rc.error(), "allocating the command buffer");
  ctx->regcmd = std::move(*rc);
  auto cmds = emit_all(*ctx, iovas, ctx->regcmd->iova(), emit, &bytes);
  if (!cmds) return cmds.error();
  lay_out(*ctx, *cmds);
  if (auto s = kmd.bo_sync(*ctx->regcmd, driver::SyncDir::to_device); !s) return s.error();
  return ctx;
}

namespace {

size_t elems(int64_t v) { return static_cast<size_t>(v); }

// A big A or C is packed / unpacked by two threads, a half of the rows each (lib/ref's kept
// workers): it is pure memory traffic (C: 4 MiB at M = 512, N = 2048) and the NPU is idle
// meanwhile. Below 1 Mi elements one thread is quicker than the hand-off.
template <class Fn>
Status on_row_halves(int64_t m, int64_t n, Fn fn) {
  constexpr int64_t kMinElements = int64_t{1} << 20;
  if (m * n < kMinElements || m < 16) return fn(RowRange{});
  const int64_t half = m / 2 / 8 * 8;  // whole 8-row blocks (layout.cpp) for the first half
  Status results[2];
  std::atomic<int> next{0};
  ref::detail::run_on_threads(2, [&] {
    for (int i; (i = next.fetch_add(1)) < 2;) results[i] = fn(i == 0 ? RowRange{0, half} : RowRange{half, m});
  });
  return results[0] ? results[1] : results[0];
}

// A of the call into the feature BO, in the plan's native layout.
Status pack_a_any(const Plan& p, const void* a, const driver::Bo& bo) {
  const size_t count = elems(p.shape.m * p.shape.k);
  switch (p.dtype) {
    case DType::int8:
      return on_row_halves(p.shape.m, p.shape.k, [&](RowRange r) {
        return pack_a_int8({static_cast<const int8_t*>(a), count}, p, {reinterpret_cast<int8_t*>(bo.map()), elems(p.a_bytes())}, r);
      });
    case DType::fp16:
      return pack_a_fp16({static_cast<const uint16_t*>(a), count}, p,
                         {reinterpret_cast<uint16_t*>(bo.map()), elems(p.a_bytes() / 2)});
    case DType::int4:
      return pack_a_int4({static_cast<const uint8_t*>(a), elems(int4_packed_bytes(p.shape.m * p.shape.k))}, p,
                         {bo.map(), elems(p.a_bytes())});
  }
  return make_error(-EINVAL, "unknown dtype");
}

// Slice `slice`'s NPU output into C (fp16 with several slices: into the fp32 scratch `acc`).
Status unpack_any(const Plan& p, const driver::Bo& bo, int64_t slice, void* c, std::vector<float>& acc) {
  const size_t n = elems(c_elements_per_slice(p)), mn = elems(p.shape.m * p.shape.n);
  const bool first = slice == 0;
  switch (p.dtype) {
    case DType::int8: {
      std::span<const int32_t> nat{reinterpret_cast<const int32_t*>(bo.map()), n};
      std::span<int32_t> out{static_cast<int32_t*>(c), mn};
      const auto rows = [&](RowRange r) { return first ? unpack_c_int32(nat, p, out, r) : accumulate_c_int32(nat, p, out, r); };
      return on_row_halves(p.shape.m, p.shape.n, rows);
    }
    case DType::int4:
      return unpack_c_int16({reinterpret_cast<const int16_t*>(bo.map()), n}, p, {static_cast<int32_t*>(c), mn}, first);
    case DType::fp16:
      if (p.npu_fp16_out())
        return unpack_c_fp16({reinterpret_cast<const uint16_t*>(bo.map()), n}, p, {static_cast<uint16_t*>(c), mn});
      std::span<float> out = p.fp16_out ? std::span<float>(acc) : std::span<float>(static_cast<float*>(c), mn);
      return unpack_c_fp32({reinterpret_cast<const float*>(bo.map()), n}, p, out, first);
  }
  return make_error(-EINVAL, "unknown dtype");
}

}  // namespace

Status execute_any(driver::Kmd& kmd, const Context& x, const void* a, void* c, RunStats& st) {
  const Plan& p = x.plan;
  auto t0 = Clock::now();
  if (auto s = pack_a_any(p, a, *x.a); !s) return s;
  if (auto s = kmd.bo_sync(*x.a, driver::SyncDir::to_device); !s) return s;
  st.pack_ns = ns_since(t0);
  st.bytes_to_device += static_cast<int64_t>(x.a->size());

  // fp16 C from several slices: fp32 partials summed here, rounded once at the end.
  std::vector<float> acc(p.fp16_out && !p.npu_fp16_out() ? elems(p.shape.m * p.shape.n) : 0);
  st.device_ns = 0;
  for (const SliceGroup& g : x.groups) {
    t0 = Clock::now();
    auto r = kmd.submit(g.desc);
    st.submit_ns += ns_since(t0);
    ++st.submits;
    if (!r) return r.error();
    st.wait_ns += r->wait_ns;
    if (r->hw_elapse_ns < 0) st.device_ns = -1;
    else if (st.device_ns >= 0) st.device_ns += r->hw_elapse_ns;

    t0 = Clock::now();
    for (int64_t i = 0; i < g.count; ++i) {
      const driver::Bo& cb = *x.c[static_cast<size_t>(i)];
      if (auto s = kmd.bo_sync(cb, driver::SyncDir::from_device); !s) return s;
      st.bytes_from_device += static_cast<int64_t>(cb.size());
      if (auto s = unpack_any(p, cb, g.first_slice + i, c, acc); !s) return s;
    }
    st.unpack_ns += ns_since(t0);
  }
  if (!acc.empty()) {
    auto* out = static_cast<uint16_t*>(c);
    for (size_t i = 0; i < acc.size(); ++i) out[i] = ork::float_to_half(acc[i]);  // RNE, once
  }
  return Status::success();
}

Status execute(driver::Kmd& kmd, const Context& x, std::span<const int8_t> a, std::span<int32_t> c, RunStats& st) {
  const Plan& p = x.plan;
  if (p.dtype != DType::int8) return make_error(-EINVAL, "execute: int8 spans given for a non-int8 plan");
  if (static_cast<int64_t>(a.size()) != p.shape.m * p.shape.k || static_cast<int64_t>(c.size()) != p.shape.m * p.shape.n)
    return make_error(-EINVAL, fmt::format("execute: A has {} and C {} elements, the plan needs {} and {}", a.size(),
                                           c.size(), p.shape.m * p.shape.k, p.shape.m * p.shape.n));
  return execute_any(kmd, x, a.data(), c.data(), st);
}

Status pack_weights(const Plan& plan, const void* w, std::span<uint8_t> out) {
  const size_t count = elems(plan.shape.k * plan.shape.n);
  switch (plan.dtype) {
    case DType::int8:
      return pack_b_int8({static_cast<const int8_t*>(w), count}, plan, {reinterpret_cast<int8_t*>(out.data()), out.size()});
    case DType::fp16:
      return pack_b_fp16({static_cast<const uint16_t*>(w), count}, plan,
                         {reinterpret_cast<uint16_t*>(out.data()), out.size() / 2});
    case DType::int4:
      return pack_b_int4({static_cast<const uint8_t*>(w), elems(int4_packed_bytes(plan.shape.k * plan.shape.n))}, plan, out);
  }
  return make_error(-EINVAL, "unknown dtype");
}

Status run_plan_once_any(driver::Kmd& kmd, const Plan& plan, const void* a, const void* w, void* c,
                         const EmitOptions& emit) {
  auto bo = kmd.bo_create(static_cast<size_t>(plan.b_bytes()), driver::BoUsage::data);
  if (!bo) return device_error(bo.error(), "allocating the weight buffer");
  if (auto s = pack_weights(plan, w, {(*bo)->map(), static_cast<size_t>(plan.b_bytes())}); !s) return s;
  if (auto s = kmd.bo_sync(**bo, driver::SyncDir::to_device); !s) return s;
  auto ctx = build_context(kmd, plan, **bo, emit);
  if (!ctx) return ctx.error();
  RunStats st;
  return execute_any(kmd, **ctx, a, c, st);
}

Status run_plan_once(driver::Kmd& kmd, const Plan& plan, std::span<const int8_t> a, std::span<const int8_t> w,
                     std::span<int32_t> c, const EmitOptions& emit) {
  if (plan.dtype != DType::int8) return make_error(-EINVAL, "run_plan_once: int8 spans given for a non-int8 plan");
  if (static_cast<int64_t>(w.size()) != plan.shape.k * plan.shape.n)
    return make_error(-EINVAL, fmt::format("run_plan_once: W has {} elements, the plan needs {}", w.size(),
                                           plan.shape.k * plan.shape.n));
  auto bo = kmd.bo_create(static_cast<size_t>(plan.b_bytes()), driver::BoUsage::data);
  if (!bo) return device_error(bo.error(), "allocating the weight buffer");
  if (auto s = pack_b_int8(w, plan, {reinterpret_cast<int8_t*>((*bo)->map()), static_cast<size_t>(plan.b_bytes())}); !s)
    return s;
  if (auto s = kmd.bo_sync(**bo, driver::SyncDir::to_device); !s) return s;
  auto ctx = build_context(kmd, plan, **bo, emit);
  if (!ctx) return ctx.error();
  RunStats st;
  return execute(kmd, **ctx, a, c, st);
}

}  // namespace ork::matmul
