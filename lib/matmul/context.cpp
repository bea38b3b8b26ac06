// Building a context (BOs, command lists, submit descriptors: once). Running it per call
// (pack A, submit, wait, accumulate K-slices, unpack C) is execute.cpp. Every address is
// fixed per context, so nothing in the command lists is patched per call.
#include "lib/matmul/context.h"

#include <algorithm>
#include <bit>
#include <climits>
#include <cstring>

#include <fmt/format.h>

#include "lib/matmul/dump.h"
#include "lib/matmul/layout.h"

namespace ork::matmul {
namespace {

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

// Each slice group's addresses over the context's A and output slots.
void plan_groups(Context& ctx, std::vector<BufferIovas>& iovas) {
  const Plan& p = ctx.plan;
  const auto slots = static_cast<int64_t>(ctx.io->c.size());
  // A stacked plan: every slice in one group, written to its one output C' (plan.h).
  const int64_t per_group = p.stacked ? p.slices : slots;
  for (int64_t first = 0; first < p.slices; first += per_group) {
    SliceGroup g{.first_slice = static_cast<int32_t>(first),
                 .count = static_cast<int32_t>(std::min(per_group, p.slices - first)), .submit = {}};
    BufferIovas io{.a = ctx.a().iova(), .b = ctx.weights->iova(), .c = {}, .first_slice = first};
    for (int64_t i = 0; i < output_slots(p, g); ++i) io.c.push_back(ctx.c(static_cast<size_t>(i)).iova());
    ctx.groups.push_back(std::move(g));
    iovas.push_back(std::move(io));
  }
}

// The physical core of plan core `core`: the core-th set bit of the context's mask.
int physical_core(uint32_t mask, int core) {
  for (int i = 0; i < core; ++i) mask &= mask - 1;  // clear the lowest set bit `core` times
  return std::countr_zero(mask);
}

// Copies the command lists into the regcmd BO and fills each group's submit descriptor,
// checked by `kmd` once.
Status lay_out(driver::Kmd& kmd, Context& ctx, const std::vector<CoreCommands>& cmds) {
  uint64_t offset = 0;
  size_t next = 0;
  int64_t group = 0;
  for (SliceGroup& g : ctx.groups) {
    driver::SubmitDesc desc;
    desc.in_bos = {&ctx.a(), ctx.weights, ctx.regcmd.get()};
    for (int64_t i = 0; i < output_slots(ctx.plan, g); ++i) desc.out_bos.push_back(&ctx.c(static_cast<size_t>(i)));
    for (int core = 0; core < ctx.plan.cores_used; ++core) {
      if (core_tasks(ctx.plan, core, g).empty()) continue;
      const CoreCommands& cc = cmds[next++];
      std::memcpy(ctx.regcmd->map() + offset, cc.entries.data(), cc.entries.size() * 8);
      dump_commands(ctx.plan, group, core, cc.entries);
      driver::CoreJob job{.core = physical_core(ctx.core_mask, core), .tasks = {}};
      for (size_t t = 0; t < cc.task_offsets.size(); ++t)
        job.tasks.push_back({.regcmd_iova = ctx.regcmd->iova() + offset + cc.task_offsets[t] * 8,
                             .regcmd_entries = cc.task_entries[t]});
      desc.jobs.push_back(std::move(job));
      offset += aligned64(cc.entries.size() * 8);
    }
    auto checked = kmd.check(std::move(desc));
    if (!checked) return checked.error();
    g.submit = std::move(*checked);
    ++group;
  }
  return Status::success();
}

}  // namespace

IoGeometry io_geometry(const Plan& p) {
  const int64_t slots = p.stacked ? 1
                                  : std::clamp<int64_t>(kPartialBudgetBytes / std::max<int64_t>(p.c_bytes_per_slice(), 1),
                                                        1, p.slices);
  return {.a_bytes = p.a_bytes(), .slot_bytes = p.c_bytes_per_slice(), .slots = slots};
}

Result<std::shared_ptr<IoBuffers>> allocate_io(driver::Kmd& kmd, const IoGeometry& geometry) {
  auto io = std::make_shared<IoBuffers>();
  auto a = kmd.bo_create(static_cast<size_t>(geometry.a_bytes), driver::BoUsage::data);
  if (!a) return device_error(a.error(), "allocating the feature buffer");
  io->a = std::move(*a);
  for (int64_t i = 0; i < geometry.slots; ++i) {
    auto c = kmd.bo_create(static_cast<size_t>(geometry.slot_bytes), driver::BoUsage::data);
    if (!c) return device_error(c.error(), "allocating an output buffer");
    io->c.push_back(std::move(*c));
  }
  return io;
}

size_t IoBuffers::bytes() const {
  size_t n = a ? a->size() : 0;
  for (const auto& bo : c) n += bo->size();
  return n;
}

size_t Context::device_bytes() const {
  return (regcmd ? regcmd->size() : 0) + (io && !shared_io ? io->bytes() : 0);
}

Result<std::unique_ptr<Context>> build_context(driver::Kmd& kmd, Plan plan, const driver::Bo& weights,
                                               const EmitOptions& emit, uint32_t core_mask,
                                               std::shared_ptr<IoBuffers> io) {
  auto ctx = std::make_unique<Context>();
  ctx->plan = std::move(plan);
  ctx->weights = &weights;
  if (static_cast<int64_t>(weights.size()) < ctx->plan.b_bytes())
    return make_error(-EINVAL, "the weight buffer is smaller than the plan's weights");
  if (ctx->plan.slices > INT32_MAX)  // SliceGroup's slice numbers
    return make_error(-EINVAL, fmt::format("{} K-slices: a context numbers at most 2^31 - 1", ctx->plan.slices));
  const int cores = kmd.info().cores;
  ctx->core_mask = core_mask != 0 ? core_mask : (1u << ctx->plan.cores_used) - 1;
  if (std::popcount(ctx->core_mask) < ctx->plan.cores_used || (cores < 32 && (ctx->core_mask >> cores) != 0))
    return make_error(-EINVAL, fmt::format("core mask 0x{:x}: the plan needs {} cores of the device's {} (mask bits 0..{})",
                                           ctx->core_mask, ctx->plan.cores_used, cores, cores - 1));
  const IoGeometry geometry = io_geometry(ctx->plan);
  if (io != nullptr && (io->a == nullptr || static_cast<int64_t>(io->a->size()) < geometry.a_bytes ||
                        static_cast<int64_t>(io->c.size()) != geometry.slots ||
                        static_cast<int64_t>(io->c[0]->size()) < geometry.slot_bytes))
    return make_error(-EINVAL, "the shared feature and output buffers do not fit the plan's geometry");
  ctx->shared_io = io != nullptr;
  if (io == nullptr) {
    auto own = allocate_io(kmd, geometry);
    if (!own) return own.error();
    io = std::move(*own);
  }
  ctx->io = io.get();
  ctx->io_owner = std::move(io);
  std::vector<BufferIovas> iovas;
  plan_groups(*ctx, iovas);
  // Two passes: the first learns the size of the command lists, the second emits them for
  // the regcmd BO's real address (the trailers hold absolute addresses).
  size_t bytes = 0;
  if (auto sized = emit_all(*ctx, iovas, 0, emit, &bytes); !sized) return sized.error();
  auto rc = kmd.bo_create(bytes, driver::BoUsage::regcmd);
  if (!rc) return device_error(rc.error(), "allocating the command buffer");
  ctx->regcmd = std::move(*rc);
  auto cmds = emit_all(*ctx, iovas, ctx->regcmd->iova(), emit, &bytes);
  if (!cmds) return cmds.error();
  if (auto s = lay_out(kmd, *ctx, *cmds); !s) return s.error();
  if (auto s = kmd.bo_sync(*ctx->regcmd, driver::SyncDir::to_device); !s) return s.error();
  return ctx;
}

Status pack_weights(const Plan& plan, const void* w, std::span<uint8_t> out) {
  return dtype_info(plan.dtype).pack_b(plan, w, out);
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
