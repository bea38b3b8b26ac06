// BO objects and the shared state of the fake kernel.
#include "driver/emu/kernel/fake_kernel_state.h"

#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "driver/regcmd/regcmd.h"

namespace ork::emu {
namespace {

// rknpu's obj_addr is a raw kernel pointer (rknpu_gem.c). Ours are cookies in the arm64
// kernel's linear-map range so that they look the part, and are validated on use (the real
// kernel only NULL-checks them and oopses on a wrong one).
constexpr uint64_t kObjAddrBase = 0xffffff8000000000ull;
constexpr uint64_t kObjAddrStride = 0x400;
// mmap offsets: one 4 GiB window per BO id (DRM's fake offsets start at 4 GiB as well).
constexpr int kOffsetShift = 32;

// A transparent huge page backs only a 2 MiB range aligned to 2 MiB and wholly inside the
// mapping (the PMD size with 4 KiB base pages, x86-64 and arm64 alike; the kernel's
// Documentation/admin-guide/mm/transhuge.rst).
constexpr uint64_t kHugePageBytes = 2u << 20;

// Anonymous pages. Raw syscalls, not ::mmap: under the LD_PRELOAD shim ::mmap is the shim's
// own interposer, which would re-enter this kernel.
uint8_t* map_anonymous(uint64_t bytes) {
  long addr = ::syscall(SYS_mmap, nullptr, bytes, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  return addr == -1 ? nullptr : reinterpret_cast<uint8_t*>(addr);
}

// Host pages for a BO: exactly `bytes`, and from 2 MiB up starting on a 2 MiB boundary with
// transparent huge pages advised (madvise mode is Debian's default): the NPU layouts stride
// through a BO in 8 KiB steps (one K-surface or output surface per step), which with 4 KiB
// pages is a TLB miss per atom, and each 4 KiB page is a fault of its own when first
// touched (about 12 us of CPU each under a VM's nested paging, against one fault per 2 MiB:
// docs/reliability.md "CI time", lever 44). mmap's address is only 4 KiB-aligned, which left
// the head and tail of each unaligned 2 MiB range on 4 KiB pages, so the mapping is made one
// huge page longer and trimmed to the aligned part. Advice only: failure is fine.
uint8_t* alloc_host_pages(uint64_t bytes) {
  if (bytes < kHugePageBytes) return map_anonymous(bytes);
  uint8_t* raw = map_anonymous(bytes + kHugePageBytes);
  if (!raw) return nullptr;
  const uint64_t head = (kHugePageBytes - reinterpret_cast<uintptr_t>(raw) % kHugePageBytes) % kHugePageBytes;
  uint8_t* start = raw + head;
  if (head > 0) ::syscall(SYS_munmap, raw, head);
  ::syscall(SYS_munmap, start + bytes, kHugePageBytes - head);  // never empty: head < 2 MiB
  ::syscall(SYS_madvise, start, bytes, MADV_HUGEPAGE);
  return start;
}

// Whether rule `r` sees an event at `point`, and whether it fires on it (counting it down).
bool fires(FaultRule& r, FaultPoint point) {
  // An open is counted only by "open" rules: ioctl and device rules count the calls on an
  // open file, and a spec written before opens could fail keeps its meaning.
  const bool call = point != FaultPoint::mmap && point != FaultPoint::job && point != FaultPoint::open;
  const bool match = r.point == point ||
                     (call && (r.point == FaultPoint::ioctl || r.point == FaultPoint::device));
  if (!match || r.count == 0) return false;
  if (r.skip > 0) {
    --r.skip;
    return false;
  }
  if (r.count > 0) --r.count;
  return true;
}

// A job whose first task's DPU output address (DST_BASE_ADDR) points at IOVA 0, a page
// neither address space ever hands out (both allocators start at kPageBytes): the DPU's
// write is then a DMA outside every BO, faulted by DeviceMemory's bounds check as the
// IOMMU would. The entry is put back afterwards, so the caller's regcmd BO is unchanged.
template <class Run>
ChainResult run_with_stray_output(const DeviceMemory& mem, uint64_t iova, uint32_t entries, Run run) {
  uint8_t* bytes = mem.span(iova, uint64_t{entries} * 8);
  uint64_t* slot = nullptr;
  uint64_t saved = 0;
  for (uint32_t i = 0; bytes && i < entries; ++i) {
    uint64_t raw;
    std::memcpy(&raw, bytes + 8ull * i, 8);
    const regcmd::Entry e = regcmd::decode(raw);
    if (e.target == regs::target_of(regs::Block::dpu) && e.reg == regs::DPU_DST_BASE_ADDR) {
      slot = reinterpret_cast<uint64_t*>(bytes + 8ull * i);
      saved = raw;
      const uint64_t stray = regcmd::encode(e.target, 0, e.reg);
      std::memcpy(slot, &stray, 8);
      break;
    }
  }
  ChainResult result = run();
  if (slot) std::memcpy(slot, &saved, 8);
  return result;
}

}  // namespace

int fire_call_rules(Faults& faults, FaultPoint point) {
  int err = 0;
  for (FaultRule& r : faults.rules) {
    if (r.point == FaultPoint::job || !fires(r, point) || err) continue;
    err = r.gone ? ENODEV : r.err;
    if (r.gone) faults.gone = true;
  }
  return err;
}

JobFault fire_job_rules(Faults& faults) {
  JobFault out = JobFault::none;
  for (FaultRule& r : faults.rules) {
    if (r.point == FaultPoint::job && fires(r, FaultPoint::job) && out == JobFault::none) out = r.job;
  }
  return out;
}

BoObject::BoObject(KernelState& k, std::shared_ptr<AddressSpace> s, uint64_t i, uint64_t b,
                   uint8_t* h, uint8_t* d, uint64_t va, uint32_t f, bool imp)
    : kernel(k), space(std::move(s)), id(i), bytes(b), host(h), device(d), iova(va), flags(f), imported(imp) {
  kernel.objects.emplace(id, this);
  if (imported) return;
  // The NPU-side copy of a modelled cache changes only by sync and NPU writes: tracked, so
  // the CORE may keep weights it prepared from it (driver/emu/npu/weight_cache.h).
  space->memory.map(iova, device, bytes, /*tracked=*/device != host && k.config.keep_prepared_weights);
}

BoObject::~BoObject() {
  if (!imported) {
    space->memory.unmap(iova);
    space->iova.free(iova);
  }
  if (device != host) ::syscall(SYS_munmap, device, bytes);
  ::syscall(SYS_munmap, host, bytes);
  if (memfd >= 0) ::syscall(SYS_close, memfd);
  kernel.objects.erase(id);
}

void BoObject::sync_to_device(uint64_t offset, uint64_t size) const {
  if (device == host || size == 0) return;
  // Unchanged bytes leave the BO's generation alone, so weights the CORE prepared from it
  // stay valid across syncs that copy nothing new (rocket syncs whole BOs every job).
  if (std::memcmp(device + offset, host + offset, size) == 0) return;
  std::memcpy(device + offset, host + offset, size);
  space->memory.note_write(iova + offset);
}

void BoObject::sync_to_cpu(uint64_t offset, uint64_t size) const {
  if (device != host) std::memcpy(host + offset, device + offset, size);
}

uint64_t BoObject::obj_addr() const { return kObjAddrBase + id * kObjAddrStride; }

uint64_t BoObject::mmap_offset() const { return id << kOffsetShift; }

KernelState::KernelState(FakeKernelConfig cfg)
    : config(std::move(cfg)),
      weights(config.weight_cache_bytes.value_or(WeightCache::default_capacity_bytes())) {
  rknpu_space(0);  // domain 0: the one the NPU is attached to at probe (rknpu_iommu_init_domain)
  for (auto& regs : core_regs) regs = std::make_unique<RegisterFile>();  // zero: after reset
  if (config.registers) {
    register_mode = *config.registers;
  } else if (auto mode = register_mode_from_env()) {
    register_mode = *mode;
  }
}

std::shared_ptr<AddressSpace> KernelState::rknpu_space(int domain) {
  auto& space = rknpu_domains[static_cast<size_t>(domain)];
  // The vendor IOMMU hands out IOVAs top-down below 4 GiB: the first one-page BO lands at
  // 0xffffe000 (ORK trace), i.e. the top of the range is 0xfffff000. The bottom is not
  // public; page 0 is kept out so that no BO has IOVA 0. A shrunk window (tests) ends lower.
  if (!space)
    space = std::make_shared<AddressSpace>(IovaAllocator::Direction::top_down, kPageBytes,
                                           std::min<uint64_t>(0xfffff000ull, config.window_bytes), &weights,
                                           config.int8_engine);
  return space;
}

BoObject* KernelState::find_by_obj_addr(uint64_t obj_addr) const {
  if (obj_addr < kObjAddrBase || (obj_addr - kObjAddrBase) % kObjAddrStride != 0) return nullptr;
  auto it = objects.find((obj_addr - kObjAddrBase) / kObjAddrStride);
  return it == objects.end() ? nullptr : it->second;
}

BoObject* KernelState::find_by_offset(uint64_t offset) const {
  if (offset & ((1ull << kOffsetShift) - 1)) return nullptr;
  auto it = objects.find(offset >> kOffsetShift);
  return it == objects.end() ? nullptr : it->second;
}

int KernelState::create_bo(File& file, uint64_t bytes, uint32_t flags, bool cached,
                           uint32_t* handle) {
  return create_bo_in(file, file.space, bytes, flags, cached, handle);
}

int KernelState::create_bo_in(File& file, const std::shared_ptr<AddressSpace>& space, uint64_t bytes,
                              uint32_t flags, bool cached, uint32_t* handle) {
  if (faults.refuse_bo_create) return -ENOMEM;
  if (bytes == 0) return -EINVAL;
  if (bytes > hw::kNpuWindowBytes) return -ENOMEM;  // cannot fit the 32-bit NPU address space
  bytes = (bytes + kPageBytes - 1) & ~(kPageBytes - 1);
  std::optional<uint64_t> iova = space->iova.alloc(bytes);
  if (!iova) return -ENOMEM;
  uint8_t* host = alloc_host_pages(bytes);
  uint8_t* device = cached && config.model_caches ? alloc_host_pages(bytes) : host;
  if (!host || !device) {
    if (host) ::syscall(SYS_munmap, host, bytes);
    if (device && device != host) ::syscall(SYS_munmap, device, bytes);
    space->iova.free(*iova);
    return -ENOMEM;
  }
  uint64_t id = next_bo_id++;
  auto bo = std::make_shared<BoObject>(*this, space, id, bytes, host, device, *iova, flags);
  *handle = file.next_handle++;
  file.handles.emplace(*handle, std::move(bo));
  return 0;
}

std::shared_ptr<BoObject> KernelState::lookup(File& file, uint32_t handle) const {
  auto it = file.handles.find(handle);
  return it == file.handles.end() ? nullptr : it->second;
}

std::shared_ptr<BoObject> KernelState::lookup_any(File& file, const BoObject* bo) const {
  for (const auto& [handle, object] : file.handles) {
    if (object.get() == bo) return object;
  }
  return nullptr;
}

ChainResult KernelState::run_chain(const DeviceMemory& mem, int core, uint64_t iova,
                                   uint32_t entries, uint32_t max_tasks) {
  ++stats.pc_kicks[static_cast<size_t>(core)];
  ChainResult result;
  const JobFault rule = fire_job_rules(faults);
  auto execute = [&] {
    return config.executor ? config.executor(mem, core, iova, entries, max_tasks)
                           : ork::emu::run_chain(mem, *core_regs[static_cast<size_t>(core)], core, iova, entries, max_tasks);
  };
  if (rule == JobFault::wedge || faults.wedge_jobs > 0) {
    if (rule != JobFault::wedge) --faults.wedge_jobs;
    result.status = CoreStatus::wedged;
    result.message = "fault injection: wedged job";
  } else if (rule == JobFault::dma || faults.dma_error_jobs > 0) {
    if (rule != JobFault::dma) --faults.dma_error_jobs;
    result.status = CoreStatus::dma_read_error;
    result.int_status = 1u << 12;  // DMA_READ_ERROR (docs/hardware.md section 3)
    result.message = "fault injection: DMA read error";
  } else if (rule == JobFault::stray) {
    result = run_with_stray_output(mem, iova, entries, execute);
  } else {
    const auto t0 = std::chrono::steady_clock::now();
    result = execute();
    stats.chain_ns += static_cast<uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count());
  }
  stats.tasks_done[static_cast<size_t>(core)] += result.tasks_done;
  stats.int4_saturated_cells += result.saturated_cells;
  return result;
}

void KernelState::begin_job(int core) {
  const auto c = static_cast<size_t>(core);
  const uint64_t job = jobs_begun[c]++;
  if (register_mode == RegisterMode::adversarial) adversarial_state(*core_regs[c], core, job);
}

}  // namespace ork::emu
