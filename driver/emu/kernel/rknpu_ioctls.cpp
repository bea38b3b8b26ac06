// The vendor rknpu driver's six ioctls, emulated (facts: docs/hardware.md sections 1 and 8).
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <vector>

#include "driver/emu/kernel/fake_kernel_state.h"
#include "driver/os/debug.h"
#include "uapi/rknpu_ioctl.h"

namespace ork::emu {
namespace {

constexpr uint32_t kDriverVersion = 908;       // 0.9.8 = major*10000 + minor*100 + patch
constexpr uint32_t kCoreClockHz = 1000000000;  // 1 GHz (JAS post 1 from the TRM; hardware.md 5)

// One core's share of a submit: which subcore_task entry it reads (VND rknpu_job.c).
struct CoreRange {
  int core;
  uint32_t start;
  uint32_t number;
};

struct CoreOutcome {
  uint32_t done = 0;
  CoreStatus status = CoreStatus::ok;
  timing::CoreWork work;  // what the core ran, for the timing model (driver/emu/npu/timeline.h)
};

// The cores a core_mask names: 0 = AUTO (the kernel picks the least loaded core), 1/2/4 one
// core, 3 = cores 0+1, 7 = all. Other masks (5, 6) hit "Unknown core mask" in VND's commit
// and the job never starts: refused here with -EINVAL.
int mask_cores(KernelState& k, uint32_t mask, std::vector<int>* cores) {
  switch (mask) {
    case 0: {
      auto load = [&](int c) { return k.stats.tasks_done[static_cast<size_t>(c)]; };
      int best = 0;
      for (int c = 1; c < k.config.cores; ++c) best = load(c) < load(best) ? c : best;
      *cores = {best};
      break;
    }
    case 1:
      *cores = {0};
      break;
    case 2:
      *cores = {1};
      break;
    case 4:
      *cores = {2};
      break;
    case 3:
      *cores = {0, 1};
      break;
    case 7:
      *cores = {0, 1, 2};
      break;
    default:
      return -EINVAL;
  }
  for (int c : *cores) {
    if (c >= k.config.cores) return -EINVAL;
  }
  return 0;
}

// 1 or 2 cores read subcore_task[core], 3 cores subcore_task[core + 2] (VND). A single core
// with an empty entry falls back to task_start/task_number (older runtimes fill only those).
int core_ranges(const rknpu_submit& args, const std::vector<int>& cores, const BoObject& task_bo,
                std::vector<CoreRange>* ranges) {
  for (int core : cores) {
    size_t index = cores.size() == 3 ? static_cast<size_t>(core) + 2 : static_cast<size_t>(core);
    CoreRange range{core, args.subcore_task[index].task_start,
                    args.subcore_task[index].task_number};
    if (range.number == 0 && cores.size() == 1) range = {core, args.task_start, args.task_number};
    if (range.number == 0) return -EINVAL;
    // The real kernel does not check this and reads past the task BO; we refuse.
    uint64_t end = (static_cast<uint64_t>(range.start) + range.number) * sizeof(rknpu_task);
    if (end > task_bo.bytes) return -EINVAL;
    ranges->push_back(range);
  }
  return 0;
}

// Walks one core's range, max_submit_number (4095) tasks per PC kick: VND re-commits the
// next chunk from the completion interrupt. The PC gets the first task's regcmd address and
// regcfg_amount + 4 entries; it follows the chain trailers for the rest of the chunk.
CoreOutcome run_core(KernelState& k, const AddressSpace& space, BoObject& task_bo, const CoreRange& range) {
  CoreOutcome outcome;
  outcome.work.core = range.core;
  // The kernel reads the tasks through its own CPU mapping (kv_addr), not through the NPU.
  auto* tasks = reinterpret_cast<rknpu_task*>(task_bo.host) + range.start;
  k.begin_job(range.core);
  for (uint32_t first = 0; first < range.number; first += RKNPU_RK3588_MAX_SUBMIT_NUMBER) {
    uint32_t count = std::min<uint32_t>(range.number - first, RKNPU_RK3588_MAX_SUBMIT_NUMBER);
    const rknpu_task& task = tasks[first];
    ChainResult r = k.run_chain(space.memory, range.core, task.regcmd_addr,
                                task.regcfg_amount + RKNPU_PC_DATA_EXTRA_AMOUNT, count);
    outcome.done += r.tasks_done;
    add_chain(outcome.work, r);
    tasks[first + count - 1].int_status = r.int_status;  // into the chunk's last task
    if (r.status != CoreStatus::ok) {
      driver::debug_log("emu", "rknpu core {}: task {} failed: {}", range.core,
                        range.start + first + r.tasks_done, r.message);
      outcome.status = r.status;
      break;
    }
  }
  return outcome;
}

// Soft reset after an aborted job: VND rknpu_soft_reset asserts srst_a/srst_h of every core.
void soft_reset_all(KernelState& k) {
  for (int c = 0; c < k.config.cores; ++c) k.reset_core(c);
}

std::chrono::steady_clock::time_point after_ns(double ns) {
  return std::chrono::steady_clock::now() + std::chrono::nanoseconds(static_cast<int64_t>(ns));
}

int finish_submit(IoctlContext& ctx, rknpu_submit& args, const std::vector<CoreOutcome>& outs,
                  std::chrono::steady_clock::time_point submitted = {}) {
  KernelState& k = ctx.kernel;
  bool timed = k.config.timing == TimingMode::timed;
  uint32_t done = 0;
  bool wedged = false, failed = false;
  for (const CoreOutcome& o : outs) {
    done += o.done;
    wedged |= o.status == CoreStatus::wedged;
    failed |= o.status != CoreStatus::ok;
  }
  if (failed) {
    // A wedged core never interrupts: the wait expires after `timeout` ms (really slept only
    // in timed mode), task_counter reports what the PC finished, the NPU is soft-reset.
    // A DMA or config error is reported as -EIO (see docs/kernel-interfaces.md: the real
    // kernel's IRQ handler rejects the status and the job times out instead).
    args.task_counter = done;
    soft_reset_all(k);
    if (timed && wedged) ctx.sleep_until = after_ns(args.timeout * 1e6);
    return wedged ? -ETIMEDOUT : -EIO;
  }
  // The cores' timelines and the shared DRAM (timing model, docs/timing-model.md).
  std::vector<timing::CoreWork> work;
  for (const CoreOutcome& o : outs) work.push_back(o.work);
  const NpuTimeline::Slot slot = k.timeline.schedule(work, timed, submitted);
  args.task_counter = args.task_number;
  args.hw_elapse_time = static_cast<int64_t>(slot.elapsed_ns);
  if (timed) ctx.sleep_until = slot.done;
  return 0;
}

// rknpu_job_timeout_clean, at the top of every NONBLOCK submit: a core whose current job is
// older than that job's timeout is soft-reset and the job dropped (with those queued behind
// it). Fast mode: a stuck job's timeout counts as elapsed at once, as for blocking submits.
void timeout_clean(KernelState& k, const std::vector<int>& cores) {
  const auto now = std::chrono::steady_clock::now();
  for (int c : cores) {
    auto& stuck = k.stuck[static_cast<size_t>(c)];
    if (!stuck) continue;
    const bool old = k.config.timing == TimingMode::fast ||
                     now - stuck->since >= std::chrono::milliseconds(stuck->timeout_ms);
    if (!old) continue;
    soft_reset_all(k);
    stuck.reset();
    ++k.stats.reaped_jobs;
  }
}

bool any_stuck(const KernelState& k, const std::vector<int>& cores) {
  for (int c : cores)
    if (k.stuck[static_cast<size_t>(c)]) return true;
  return false;
}

// FENCE_OUT: a sync_file fd (a real descriptor of /dev/null, known to this kernel).
int make_fence(IoctlContext& ctx, rknpu_submit& args, std::shared_ptr<Fence> fence) {
  if (!(args.flags & RKNPU_JOB_FENCE_OUT)) return 0;
  int fd = static_cast<int>(::syscall(SYS_openat, AT_FDCWD, "/dev/null", O_RDWR | O_CLOEXEC));
  if (fd < 0) return -EMFILE;
  ctx.kernel.fences.emplace(fd, std::move(fence));
  args.fence_fd = fd;
  return 0;
}

// A NONBLOCK job: queued and, here, run at once (its results are in device memory when the
// ioctl returns); its fence signals at the modelled completion (timed) or at once (fast).
// A job that wedges or faults never signals (the vendor's IRQ handler rejects a DMA-error
// status, so such a job times out too) and stays its cores' current job until reaped.
int submit_nonblock(IoctlContext& ctx, rknpu_submit& args, const std::vector<int>& cores,
                    BoObject& task_bo, const std::vector<CoreRange>& ranges) {
  KernelState& k = ctx.kernel;
  ++k.stats.nonblock_submits;
  timeout_clean(k, cores);
  auto fence = std::make_shared<Fence>();
  if (any_stuck(k, cores)) {  // queued behind a wedged job: never starts
    fence->signals = false;
    return make_fence(ctx, args, fence);
  }
  const auto submitted = std::chrono::steady_clock::now();
  std::vector<CoreOutcome> outcomes;
  bool failed = false;
  for (const CoreRange& range : ranges) {
    outcomes.push_back(run_core(k, *k.rknpu_space(k.rknpu_domain), task_bo, range));
    failed |= outcomes.back().status != CoreStatus::ok;
  }
  if (failed) {
    fence->signals = false;
    for (int c : cores) k.stuck[static_cast<size_t>(c)] = StuckJob{submitted, args.timeout};
    return make_fence(ctx, args, fence);
  }
  std::vector<timing::CoreWork> work;
  for (const CoreOutcome& o : outcomes) work.push_back(o.work);
  const bool timed = k.config.timing == TimingMode::timed;
  fence->ready_at = k.timeline.schedule(work, timed, submitted).done;
  return make_fence(ctx, args, fence);
}

// Attaches the NPU to IOMMU domain `id` (VND rknpu_iommu.c rknpu_iommu_switch_domain: ids
// 0..RKNPU_MAX_IOMMU_DOMAIN_NUM - 1, else -EINVAL; a domain is made on the first switch to
// it; the whole NPU, every core, changes page table at once). From then on every job reads
// and writes through that domain's mappings only.
int switch_domain(KernelState& k, int64_t id) {
  if (id < 0 || id >= kRknpuDomains) return -EINVAL;
  if (id != k.rknpu_domain) ++k.stats.domain_switches;
  k.rknpu_space(static_cast<int>(id));
  k.rknpu_domain = static_cast<int>(id);
  return 0;
}

}  // namespace

int handle_rknpu_action(IoctlContext& ctx) {
  auto* a = static_cast<rknpu_action*>(ctx.arg);
  KernelState& k = ctx.kernel;
  switch (a->flags) {
    case RKNPU_GET_HW_VERSION:
      a->value = k.config.hw_version;
      return 0;
    case RKNPU_GET_DRV_VERSION:
      a->value = kDriverVersion;
      return 0;
    case RKNPU_GET_FREQ:
      a->value = kCoreClockHz;
      return 0;
    case RKNPU_SET_FREQ:  // a no-op on RK3588 (VND)
    case RKNPU_SET_VOLT:  // a no-op on RK3588 (VND)
    case RKNPU_SET_PROC_NICE:
      return 0;
    case RKNPU_GET_VOLT:
      a->value = 0;
      return 0;  // not modelled
    case RKNPU_ACT_RESET:
      soft_reset_all(k);
      return 0;
    case RKNPU_GET_IOMMU_EN:
      a->value = 1;
      return 0;
    case RKNPU_POWER_ON:
      k.powered = true;
      return 0;
    case RKNPU_POWER_OFF:
      k.powered = false;
      return 0;
    case RKNPU_GET_TOTAL_SRAM_SIZE:
    case RKNPU_GET_FREE_SRAM_SIZE:
      a->value = 0;
      return 0;  // no SRAM configured
    case RKNPU_GET_IOMMU_DOMAIN_ID:
      a->value = static_cast<uint32_t>(k.rknpu_domain);
      return 0;
    case RKNPU_SET_IOMMU_DOMAIN_ID:
      return switch_domain(k, a->value);
    default:
      return -EINVAL;  // BW priority (7-12) and RW amounts (13-17): none on RK3588
  }
}

int handle_rknpu_mem_create(IoctlContext& ctx) {
  auto* args = static_cast<rknpu_mem_create*>(ctx.arg);
  uint32_t handle = args->handle;
  if (handle == 0) {
    // The BO's IOVA comes from domain iommu_domain_id's allocator (VND rknpu_gem.c
    // rknpu_gem_object_create: it switches the NPU to that domain, maps, and records the id;
    // the 40-byte legacy struct is zero-extended: domain 0). An id past 0..15 is -EINVAL.
    const int32_t domain = args->iommu_domain_id;
    if (int rc = switch_domain(ctx.kernel, domain)) return rc;
    bool cached = args->flags & RKNPU_MEM_CACHEABLE;
    int rc = ctx.kernel.create_bo_in(ctx.file, ctx.kernel.rknpu_space(domain), args->size, args->flags, cached,
                                     &handle);
    if (rc) return rc;
  }
  // An existing handle passed in returns that object (VND rknpu_gem.c).
  std::shared_ptr<BoObject> bo = ctx.kernel.lookup(ctx.file, handle);
  if (!bo) return -EINVAL;
  args->handle = handle;
  args->size = bo->bytes;
  args->obj_addr = bo->obj_addr();
  args->dma_addr = bo->iova;
  args->sram_size = 0;
  return 0;
}

int handle_rknpu_mem_map(IoctlContext& ctx) {
  auto* args = static_cast<rknpu_mem_map*>(ctx.arg);
  std::shared_ptr<BoObject> bo = ctx.kernel.lookup(ctx.file, args->handle);
  if (!bo) return -ENOENT;
  args->offset = bo->mmap_offset();
  return 0;
}

int handle_rknpu_mem_destroy(IoctlContext& ctx) {
  auto* args = static_cast<rknpu_mem_destroy*>(ctx.arg);
  std::shared_ptr<BoObject> bo = ctx.kernel.lookup(ctx.file, args->handle);
  if (!bo) return -EINVAL;
  // The real kernel trusts obj_addr; a wrong one could oops it. We check it names the BO.
  if (args->obj_addr && args->obj_addr != bo->obj_addr()) return -EFAULT;
  ctx.file.handles.erase(args->handle);
  return 0;
}

int handle_rknpu_mem_sync(IoctlContext& ctx) {
  auto* args = static_cast<rknpu_mem_sync*>(ctx.arg);
  if (!args->obj_addr) return -EINVAL;
  BoObject* bo = ctx.kernel.find_by_obj_addr(args->obj_addr);
  if (!bo) return -EFAULT;  // the real kernel would dereference the bad pointer
  if (!(bo->flags & RKNPU_MEM_CACHEABLE)) return -EINVAL;
  if (!(args->flags & (RKNPU_MEM_SYNC_TO_DEVICE | RKNPU_MEM_SYNC_FROM_DEVICE))) return -EINVAL;
  if (args->offset > bo->bytes || args->size > bo->bytes - args->offset) return -EINVAL;
  if (args->flags & RKNPU_MEM_SYNC_TO_DEVICE) bo->sync_to_device(args->offset, args->size);
  if (args->flags & RKNPU_MEM_SYNC_FROM_DEVICE) bo->sync_to_cpu(args->offset, args->size);
  ++ctx.kernel.stats.syncs;
  return 0;
}

int handle_rknpu_submit(IoctlContext& ctx) {
  auto* args = static_cast<rknpu_submit*>(ctx.arg);
  KernelState& k = ctx.kernel;
  if (!(args->flags & RKNPU_JOB_PC)) return -EINVAL;  // non-PC mode is refused
  // FENCE_IN is not emulated; FENCE_OUT only where the kernel is built with fences.
  if (args->flags & RKNPU_JOB_FENCE_IN) return -EINVAL;
  if ((args->flags & RKNPU_JOB_FENCE_OUT) && !k.config.rknpu_fences) return -EINVAL;
  if (args->task_number == 0 || !args->task_obj_addr) return -EINVAL;
  // The job runs in domain iommu_domain_id: the submit switches the NPU to it first (VND
  // rknpu_job.c rknpu_submit_ioctl). There a failed switch is ignored and the job runs in
  // whatever domain was attached; the emulator refuses a bad id instead.
  if (int rc = switch_domain(k, args->iommu_domain_id)) return rc;
  BoObject* task_bo = k.find_by_obj_addr(args->task_obj_addr);
  if (!task_bo) return -EFAULT;
  if (!(task_bo->flags & RKNPU_MEM_KERNEL_MAPPING)) return -EINVAL;  // no kv_addr to read
  std::vector<int> cores;
  std::vector<CoreRange> ranges;
  if (int rc = mask_cores(k, args->core_mask, &cores)) return rc;
  if (int rc = core_ranges(*args, cores, *task_bo, &ranges)) return rc;
  ++k.stats.submits;
  if (ctx.file.kind == NodeKind::rknpu_render && !k.config.render_node_submits_run) {
    // ORK's silicon observation: accepted, 0 tasks run, timed out.
    std::vector<CoreOutcome> none(1, CoreOutcome{0, CoreStatus::wedged, {}});
    return finish_submit(ctx, *args, none);
  }
  if (args->flags & RKNPU_JOB_NONBLOCK) return submit_nonblock(ctx, *args, cores, *task_bo, ranges);
  if (any_stuck(k, cores)) {
    // Queued behind a wedged NONBLOCK job: never starts; the wait expires and the NPU is
    // reset, but the wedged job stays (rknpu_job_abort unlinks only the job it aborts).
    std::vector<CoreOutcome> none(1, CoreOutcome{0, CoreStatus::wedged, {}});
    return finish_submit(ctx, *args, none);
  }
  const auto submitted = std::chrono::steady_clock::now();  // the modelled time starts here
  std::vector<CoreOutcome> outcomes;
  for (const CoreRange& range : ranges)
    outcomes.push_back(run_core(k, *k.rknpu_space(k.rknpu_domain), *task_bo, range));
  return finish_submit(ctx, *args, outcomes, submitted);
}

}  // namespace ork::emu
