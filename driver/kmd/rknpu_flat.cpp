// The rknpu backend's flat job (Kmd::lay_flat; rknpu_kmd.h FlatHead): what a submit reads of
// a job on every call, laid out once, and the task records it writes from it into a task BO
// (facts: docs/hardware.md sections 1 and 8).
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "driver/kmd/rknpu_kmd.h"
#include "uapi/rknpu_ioctl.h"

namespace ork::driver::rknpu {
namespace {

constexpr uint32_t kEnableMask = 0xd;    // CNA|CORE|DPU (MTX); not written to HW
constexpr uint32_t kIntClear = 0x1ffff;  // clear all (docs/hardware.md section 3)
constexpr uint32_t kMaxTasksPerKick = RKNPU_RK3588_MAX_SUBMIT_NUMBER;
static_assert(kMaxTasksPerKick <= UINT16_MAX, "Range::number is 16 bits");

size_t rknpu_tasks_offset(const FlatHead& head) { return sizeof(FlatHead) + head.kicks * sizeof(Kick); }

// The SUBMIT ioctls of `jobs` (cores ascending; `first`: each one's first task in the BO). At
// most 4095 tasks per core per SUBMIT (the PC's 12-bit task counter); longer lists go in
// chunks. Core sets {0,2} and {1,2} (masks 5, 6) are refused by the vendor kernel, so such a
// chunk is submitted one core at a time.
std::vector<Kick> rknpu_kicks(const std::vector<const CoreJob*>& jobs, const std::vector<uint32_t>& first) {
  size_t longest = 0;
  for (const CoreJob* job : jobs) longest = std::max(longest, job->tasks.size());
  std::vector<Kick> kicks;
  for (size_t base = 0; base < longest; base += kMaxTasksPerKick) {
    Kick ranges;
    uint32_t mask = 0;
    for (size_t j = 0; j < jobs.size(); ++j) {
      size_t n = jobs[j]->tasks.size();
      if (base >= n) continue;
      ranges.ranges[ranges.count++] = {.start = static_cast<uint32_t>(first[j] + base),
                                       .number = static_cast<uint16_t>(std::min<size_t>(n - base, kMaxTasksPerKick)),
                                       .core = static_cast<uint8_t>(jobs[j]->core)};
      mask |= 1u << jobs[j]->core;
    }
    if (mask == 5 || mask == 6) {
      for (const Range& r : ranges.view()) kicks.push_back(Kick{.count = 1, .ranges = {r}});
    } else {
      kicks.push_back(ranges);
    }
  }
  return kicks;
}

}  // namespace

FlatHead flat_head(const FlatJob& flat) {
  FlatHead head;
  std::memcpy(&head, flat.data(), sizeof head);
  return head;
}

Kick flat_kick(const FlatJob& flat, uint32_t k) {
  Kick kick;
  std::memcpy(&kick, flat.data() + sizeof(FlatHead) + k * sizeof(Kick), sizeof kick);
  return kick;
}

// `desc` is valid (validate_submit): at most one job per core, so a Kick's ranges suffice.
Result<FlatJob> RknpuKmd::lay_flat(const SubmitDesc& desc) const {
  std::vector<const CoreJob*> jobs;
  for (const CoreJob& job : desc.jobs) jobs.push_back(&job);
  std::sort(jobs.begin(), jobs.end(), [](auto* a, auto* b) { return a->core < b->core; });
  FlatHead head{.tasks = 0, .kicks = 0, .core_mask = 0, .timeout_ms = desc.timeout_ms};
  std::vector<uint32_t> first;
  size_t tasks = 0;  // counted wide: the flat size is checked before any count is narrowed
  for (const CoreJob* job : jobs) {
    first.push_back(static_cast<uint32_t>(tasks));
    tasks += job->tasks.size();
    head.core_mask |= 1u << job->core;
  }
  const std::vector<Kick> kicks = rknpu_kicks(jobs, first);
  auto made = FlatJob::make(sizeof head + kicks.size() * sizeof(Kick) + tasks * sizeof(FlatTask));
  if (!made) return made.error();
  FlatJob& flat = *made;
  head.tasks = static_cast<uint32_t>(tasks);
  head.kicks = static_cast<uint32_t>(kicks.size());
  std::memcpy(flat.data(), &head, sizeof head);
  std::memcpy(flat.data() + sizeof head, kicks.data(), kicks.size() * sizeof(Kick));
  std::byte* at = flat.data() + rknpu_tasks_offset(head);
  for (const CoreJob* job : jobs)
    for (const TaskRef& t : job->tasks) {
      const FlatTask task{static_cast<uint32_t>(t.regcmd_iova), t.regcmd_entries - RKNPU_PC_DATA_EXTRA_AMOUNT,
                          t.int_mask};
      std::memcpy(at, &task, sizeof task);
      at += sizeof task;
    }
  return made;
}

Status RknpuKmd::ensure_task_capacity(std::unique_ptr<Bo>& bo, size_t tasks) {
  size_t bytes = tasks * sizeof(rknpu_task);
  if (bo && bo->size() >= bytes) return Status::success();
  size_t grown = std::max<size_t>(bytes, bo ? bo->size() * 2 : 4096);
  bo.reset();
  auto fresh = bo_create(grown, BoUsage::tasks);
  if (!fresh) return fresh.error();
  bo = std::move(fresh.value());
  return Status::success();
}

Status RknpuKmd::write_tasks(const FlatJob& flat, std::unique_ptr<Bo>& bo) {
  const FlatHead head = flat_head(flat);
  if (Status st = ensure_task_capacity(bo, head.tasks); !st) return st;
  auto* tasks = reinterpret_cast<rknpu_task*>(bo->map());
  const std::byte* from = flat.data() + rknpu_tasks_offset(head);
  for (uint32_t i = 0; i < head.tasks; ++i) {
    FlatTask t;
    std::memcpy(&t, from + i * sizeof t, sizeof t);
    tasks[i] = rknpu_task{0, i, kEnableMask, t.int_mask, kIntClear, 0, t.regcfg_amount, 0, t.regcmd_addr};
  }
  return bo_sync(*bo, SyncDir::to_device);
}

}  // namespace ork::driver::rknpu
