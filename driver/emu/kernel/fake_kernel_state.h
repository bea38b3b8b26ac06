// The fake kernel's internals, shared by its .cpp files (not a public header).
#pragma once

#include <array>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

#include "driver/common/npu_window.h"
#include "driver/emu/kernel/fake_kernel.h"
#include "driver/emu/kernel/iova_allocator.h"
#include "driver/emu/npu/prior_state.h"
#include "driver/emu/npu/regfile.h"
#include "driver/emu/npu/timeline.h"
#include "driver/emu/npu/weight_cache.h"

namespace ork::emu {

inline constexpr uint64_t kPageBytes = 4096;

enum class NodeKind { rknpu_card, rknpu_render, rocket, display };  // display: FakeKernelConfig::display_card

// One IOMMU domain: an IOVA allocator and the device's view of the BOs in it. The vendor
// driver has up to 16 per device, the NPU attached to one at a time (rknpu_domains below);
// rocket one per open file (rocket_gem.c, per-fd domain).
struct AddressSpace {
  // `weights` and `engine`: the device's (KernelState's), for the memory's tasks.
  AddressSpace(IovaAllocator::Direction dir, uint64_t low, uint64_t high, WeightCache* weights,
               const Int8Engine* engine)
      : iova(low, high, dir), memory(weights, engine) {}
  IovaAllocator iova;
  DeviceMemory memory;
};

struct KernelState;

// A GEM object. Owned (shared) by the handles and the CPU mappings that refer to it; when
// the last goes, its IOVA range and host pages are released.
struct BoObject {
  BoObject(KernelState& kernel, std::shared_ptr<AddressSpace> space, uint64_t id, uint64_t bytes,
           uint8_t* host, uint8_t* device, uint64_t iova, uint32_t flags, bool imported = false);
  ~BoObject();
  BoObject(const BoObject&) = delete;
  BoObject& operator=(const BoObject&) = delete;

  KernelState& kernel;
  std::shared_ptr<AddressSpace> space;
  uint64_t id;
  uint64_t bytes;   // page-rounded
  uint8_t* host;    // the CPU's pages: page-aligned, zeroed at create
  uint8_t* device;  // what the NPU reads and writes: == host unless caches are modelled
  uint64_t iova;
  uint32_t flags;  // RKNPU_MEM_* (rknpu); 0 on rocket
  // dma-buf (dmabuf.cpp): the memfd named kDmabufName that holds the host pages once the BO
  // is exported, or that an import maps; its inode names the dma-buf across fds and kernels.
  // An import has no IOVA and is not in the DeviceMemory (the vendor uAPI reports none).
  int memfd = -1;
  uint64_t dmabuf_ino = 0;
  bool imported = false;
  // rocket: how the last job that wrote this BO ended (0, -EIO, -ETIMEDOUT) and when, in
  // timed mode, its result is ready.
  int job_status = 0;
  std::chrono::steady_clock::time_point ready_at{};

  // Cache maintenance of the modelled caches (no-ops when device == host).
  void sync_to_device(uint64_t offset, uint64_t size) const;
  void sync_to_cpu(uint64_t offset, uint64_t size) const;
  uint64_t obj_addr() const;     // rknpu's opaque kernel "pointer"
  uint64_t mmap_offset() const;  // fake offset for mmap(fd, offset)
};

struct File {
  NodeKind kind;
  std::map<uint32_t, std::shared_ptr<BoObject>> handles;
  uint32_t next_handle = 1;
  std::shared_ptr<AddressSpace> space;
};

struct Mapping {
  std::shared_ptr<BoObject> bo;
  int count = 0;  // mmap calls not yet undone (each returns the same address)
};

// An rknpu job's sync_file fence (FENCE_OUT). `signals` false: its job never completes.
struct Fence {
  bool signals = true;
  std::chrono::steady_clock::time_point ready_at{};
};

// A NONBLOCK job that wedged: the vendor kernel keeps it as its cores' current job, and jobs
// queued behind it never start, until a NONBLOCK submit to that core finds it older than its
// timeout (rknpu_job_timeout_clean) and soft-resets.
struct StuckJob {
  std::chrono::steady_clock::time_point since{};
  uint32_t timeout_ms = 0;
};

struct KernelState {
  explicit KernelState(FakeKernelConfig cfg);

  FakeKernelConfig config;
  // The device's prepared weights (driver/emu/npu/weight_cache.h): declared before every
  // address space, so it outlives their DeviceMemory (which forgets BOs into it).
  WeightCache weights;
  mutable std::mutex mutex;
  Faults faults;
  KernelStats stats;
  std::unordered_map<int, File> files;
  std::map<const uint8_t*, Mapping> mappings;
  std::map<const uint8_t*, size_t> dmabuf_mappings;  // mmap of a dma-buf fd: address -> bytes
  std::unordered_map<uint64_t, BoObject*> objects;  // live BOs by id (non-owning)
  uint64_t next_bo_id = 1;
  // The vendor driver's IOMMU domains (kRknpuDomains), each made on first use as the driver
  // makes one on its first switch to it (VND rknpu_iommu.c rknpu_iommu_switch_domain), and
  // the one the NPU is attached to now: a job reads and writes through that one's page table
  // only, so a BO of another domain is unmapped for it (docs/kernel-interfaces.md "Windows").
  std::array<std::shared_ptr<AddressSpace>, kRknpuDomains> rknpu_domains;
  int rknpu_domain = 0;
  std::shared_ptr<AddressSpace> rknpu_space(int domain);  // made when first named
  bool powered = false;                       // rknpu POWER_ON / POWER_OFF
  NpuTimeline timeline;                       // the cores' busy-until, the timing model
  std::unordered_map<int, std::shared_ptr<Fence>> fences;  // rknpu sync_file fds
  std::array<std::optional<StuckJob>, kMaxCores> stuck;    // per core

  BoObject* find_by_obj_addr(uint64_t obj_addr) const;
  BoObject* find_by_offset(uint64_t offset) const;
  // Creates a BO in `file`: host pages, IOVA, DeviceMemory mapping, handle. -errno on failure.
  // `cached`: the BO gets a separate device copy when config.model_caches is set.
  int create_bo(File& file, uint64_t bytes, uint32_t flags, bool cached, uint32_t* handle);
  // The same in `space` (rknpu: MEM_CREATE's domain) instead of the file's.
  int create_bo_in(File& file, const std::shared_ptr<AddressSpace>& space, uint64_t bytes, uint32_t flags,
                   bool cached, uint32_t* handle);
  std::shared_ptr<BoObject> lookup(File& file, uint32_t handle) const;
  // The file's reference to `bo`, if it holds a handle to it.
  std::shared_ptr<BoObject> lookup_any(File& file, const BoObject* bo) const;
  ChainResult run_chain(const DeviceMemory& mem, int core, uint64_t iova, uint32_t entries,
                        uint32_t max_tasks);
  // Each core's registers: kept across jobs and files as the silicon keeps them, cleared by
  // a soft reset (prior_state.h). begin_job: a job is about to run on `core` (adversarial
  // mode replaces the state it finds).
  std::array<std::unique_ptr<RegisterFile>, kMaxCores> core_regs;
  std::array<uint64_t, kMaxCores> jobs_begun{};
  RegisterMode register_mode = RegisterMode::keep;
  void begin_job(int core);
  void reset_core(int core) {
    ++stats.resets[static_cast<size_t>(core)];
    core_regs[static_cast<size_t>(core)]->clear();
  }
};

// The fault rules (fault_spec.h) at one event: every rule at `point` counts it (call points
// also count for "ioctl" and "device" rules, mmap only for "mmap"); the first that fires
// gives the errno (ENODEV for device:gone, which also sets faults.gone), else 0.
int fire_call_rules(Faults& faults, FaultPoint point);
// The same for a core's chain: the job fault of the first job rule that fires, else none.
JobFault fire_job_rules(Faults& faults);

// Per-driver ioctl handlers: 0 or -errno, called with the mutex held on a zero-extended
// kernel copy of the argument (like the DRM core). `sleep_until` is set by handlers whose
// completion must really wait in timed mode (slept after the mutex is released).
struct IoctlContext {
  KernelState& kernel;
  File& file;
  void* arg;
  std::chrono::steady_clock::time_point sleep_until{};
};

int handle_drm_version(IoctlContext& ctx);
int handle_drm_gem_close(IoctlContext& ctx);
int handle_prime_handle_to_fd(IoctlContext& ctx);
int handle_prime_fd_to_handle(IoctlContext& ctx);

// The emulated dma-bufs (dmabuf.cpp): memfds of this name, so that a dma-buf exported by one
// FakeKernel is recognised by any other in the process (and through the shim).
inline constexpr const char* kDmabufName = "ork-emu-dmabuf";
// True when `fd` is an emulated dma-buf; its inode and size. *err: EBADF for a closed fd,
// EINVAL for a file that is not an emulated dma-buf.
bool fake_dmabuf(int fd, uint64_t* ino, uint64_t* size, int* err);
// DMA_BUF_IOCTL_SYNC on an emulated dma-buf: 0 or -errno.
int dmabuf_ioctl(KernelState& kernel, unsigned long request, void* arg);

int handle_rknpu_action(IoctlContext& ctx);
int handle_rknpu_submit(IoctlContext& ctx);
int handle_rknpu_mem_create(IoctlContext& ctx);
int handle_rknpu_mem_map(IoctlContext& ctx);
int handle_rknpu_mem_destroy(IoctlContext& ctx);
int handle_rknpu_mem_sync(IoctlContext& ctx);

int handle_rocket_create_bo(IoctlContext& ctx);
int handle_rocket_submit(IoctlContext& ctx);
int handle_rocket_prep_bo(IoctlContext& ctx);
int handle_rocket_fini_bo(IoctlContext& ctx);

}  // namespace ork::emu
