// Running a context (execute.h): the per-call path of every matmul, sync or async.
#include "lib/matmul/execute.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstring>

#include <fmt/format.h>

#include "driver/regcmd/regcmd.h"
#include "lib/matmul/job.h"
#include "lib/matmul/layout.h"
#include "lib/matmul/layout_host.h"
#include "lib/ref/workers.h"

namespace ork::matmul {
namespace {

using Clock = std::chrono::steady_clock;
int64_t ns_since(Clock::time_point t0) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t0).count();
}

size_t elems(int64_t v) { return static_cast<size_t>(v); }
constexpr size_t kUnpackStackSlots = 16;
int64_t cpu_since(int64_t c0) { return ref::detail::work_cpu_ns() - c0; }

}  // namespace

Status pack_input(driver::Kmd& kmd, const Context& x, const void* a, RunStats& st) {
  complete_busy(x);  // its A and output BOs, maybe shared, are about to be reused (job.h, the rule)
  const auto t0 = Clock::now();
  const int64_t c0 = ref::detail::work_cpu_ns();
  if (auto s = pack_a_native(x.plan, a, {x.a().map(), elems(x.plan.a_bytes())}); !s) return s;
  if (auto s = kmd.bo_sync(x.a(), driver::SyncDir::to_device); !s) return s;
  st.pack_ns += ns_since(t0);
  st.pack_cpu_ns += cpu_since(c0);
  st.bytes_to_device += static_cast<int64_t>(x.a().size());
  return Status::success();
}

OutputState make_output_state(const Context& x) {
  const Plan& p = x.plan;
  OutputState out;
  if (p.fp16_out && !p.npu_fp16_out()) out.acc.resize(elems(p.shape.m * p.shape.n));
  return out;
}

void account_submit(RunStats& st, const driver::SubmitResult& r, int64_t submit_ns) {
  st.submit_ns += submit_ns;
  ++st.submits;
  st.wait_ns += r.wait_ns;
  if (r.hw_elapse_ns < 0) st.device_ns = -1;
  else if (st.device_ns >= 0) st.device_ns += r.hw_elapse_ns;
}

Status unpack_group(driver::Kmd& kmd, const Context& x, size_t group, void* c, OutputState& out, RunStats& st,
                    std::span<const ColumnPart> columns) {
  const auto t0 = Clock::now();
  const int64_t c0 = ref::detail::work_cpu_ns();
  const SliceGroup& g = x.groups[group];
  // The group's K-slices, unpacked in one pass (layout_host.h): on the stack up to
  // kUnpackStackSlots (a decode shape has 1-5), so a call allocates nothing.
  const auto slots = static_cast<size_t>(output_slots(x.plan, g));
  std::array<const uint8_t*, kUnpackStackSlots> near{};
  std::vector<const uint8_t*> far(slots > near.size() ? slots : 0);
  const std::span<const uint8_t*> slices{slots > near.size() ? far.data() : near.data(), slots};
  for (size_t i = 0; i < slots; ++i) {
    const driver::Bo& cb = x.c(i);
    if (auto s = kmd.bo_sync(cb, driver::SyncDir::from_device); !s) return s;
    st.bytes_from_device += static_cast<int64_t>(cb.size());
    slices[i] = cb.map();
  }
  const Status unpacked = !columns.empty() ? unpack_c_columns(x.plan, slices, g.first_slice, columns)
                          : x.plan.stacked ? unpack_c_stacked(x.plan, slices[0], c, out.acc)
                                           : unpack_c_group(x.plan, slices, g.first_slice, c, out.acc);
  if (!unpacked) return unpacked;
  st.unpack_ns += ns_since(t0);
  st.unpack_cpu_ns += cpu_since(c0);
  return Status::success();
}

Status run_groups(driver::Kmd& kmd, const Context& x, size_t first, void* c, OutputState& out, RunStats& st,
                  std::span<const ColumnPart> columns) {
  for (size_t g = first; g < x.groups.size(); ++g) {
    const auto t0 = Clock::now();
    const int64_t c0 = ref::detail::work_cpu_ns();
    auto r = kmd.submit_checked(x.groups[g].submit);
    const int64_t ns = ns_since(t0);
    st.submit_cpu_ns += cpu_since(c0);
    if (!r) return r.error();
    account_submit(st, *r, ns);
    if (auto s = unpack_group(kmd, x, g, c, out, st, columns); !s) return s;
  }
  if (!out.acc.empty()) {  // an fp16 C from several slices: rounded once (RNE), counted as unpacking
    const auto t0 = Clock::now();
    const int64_t c0 = ref::detail::work_cpu_ns();
    if (auto s = round_c_fp16(x.plan, out.acc, static_cast<uint16_t*>(c)); !s) return s;
    st.unpack_ns += ns_since(t0);
    st.unpack_cpu_ns += cpu_since(c0);
  }
  return Status::success();
}

Status execute_any(driver::Kmd& kmd, const Context& x, const void* a, void* c, RunStats& st,
                   std::span<const ColumnPart> columns) {
  if (auto s = pack_input(kmd, x, a, st); !s) return s;
  OutputState out = make_output_state(x);
  st.device_ns = 0;
  return run_groups(kmd, x, 0, c, out, st, columns);
}

Result<driver::SubmitDesc> chain_contexts(driver::Kmd& kmd, std::span<Context* const> ctxs) {
  driver::SubmitDesc desc;
  // Per physical core: the tasks of every context in order, and where the previous one's
  // list ended (its context, to patch that task's trailer).
  struct Tail {
    Context* ctx = nullptr;
    driver::TaskRef task;
  };
  std::vector<Tail> tails;
  std::vector<Context*> patched;
  for (Context* x : ctxs) {
    if (x->groups.size() != 1)
      return make_error(-ENOTSUP, fmt::format("a {} x {} x {} matmul needs {} kernel submits (its K-slice outputs "
                                              "exceed one submit's budget): it cannot be chained into one job",
                                              x->plan.shape.m, x->plan.shape.k, x->plan.shape.n, x->groups.size()));
    const driver::SubmitDesc& d = x->groups[0].submit.desc();
    for (const driver::CoreJob& job : d.jobs) {
      if (job.tasks.empty()) continue;
      auto it = std::find_if(desc.jobs.begin(), desc.jobs.end(), [&](const driver::CoreJob& j) { return j.core == job.core; });
      if (it == desc.jobs.end()) {
        desc.jobs.push_back(driver::CoreJob{.core = job.core, .tasks = {}});
        tails.push_back({});
        it = desc.jobs.end() - 1;
      }
      Tail& tail = tails[static_cast<size_t>(it - desc.jobs.begin())];
      if (tail.ctx != nullptr) {  // re-chain the previous list's last task to this list
        const uint64_t offset = tail.task.regcmd_iova - tail.ctx->regcmd->iova();
        auto* entries = reinterpret_cast<uint64_t*>(tail.ctx->regcmd->map() + offset);
        regcmd::patch_next({entries, tail.task.regcmd_entries}, job.tasks.front().regcmd_iova,
                           job.tasks.front().regcmd_entries);
        if (std::find(patched.begin(), patched.end(), tail.ctx) == patched.end()) patched.push_back(tail.ctx);
      }
      it->tasks.insert(it->tasks.end(), job.tasks.begin(), job.tasks.end());
      tail = Tail{x, job.tasks.back()};
    }
    for (const driver::Bo* b : d.in_bos)
      if (std::find(desc.in_bos.begin(), desc.in_bos.end(), b) == desc.in_bos.end()) desc.in_bos.push_back(b);
    desc.out_bos.insert(desc.out_bos.end(), d.out_bos.begin(), d.out_bos.end());
    desc.timeout_ms = std::max(desc.timeout_ms, d.timeout_ms);
  }
  for (Context* x : patched)
    if (auto s = kmd.bo_sync(*x->regcmd, driver::SyncDir::to_device); !s) return s.error();
  return desc;
}

Status execute(driver::Kmd& kmd, const Context& x, std::span<const int8_t> a, std::span<int32_t> c, RunStats& st) {
  const Plan& p = x.plan;
  if (p.dtype != DType::int8) return make_error(-EINVAL, "execute: int8 spans given for a non-int8 plan");
  if (static_cast<int64_t>(a.size()) != p.shape.m * p.shape.k || static_cast<int64_t>(c.size()) != p.shape.m * p.shape.n)
    return make_error(-EINVAL, fmt::format("execute: A has {} and C {} elements, the plan needs {} and {}", a.size(),
                                           c.size(), p.shape.m * p.shape.k, p.shape.m * p.shape.n));
  return execute_any(kmd, x, a.data(), c.data(), st);
}


}  // namespace ork::matmul
