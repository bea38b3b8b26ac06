// The emulated NPU's kernel: both kernel uAPIs (vendor rknpu, mainline rocket) behind the
// Os seam, so the real backends (driver/kmd) run on it unchanged. It keeps BOs (host memory
// mapped into a DeviceMemory at IOVAs below 4 GiB), hands out mmap offsets, and on submit
// walks each core's task range with the emulated PC (ork::emu::run_chain, driver/emu/npu).
// How each ioctl is emulated, and what it cannot know about the real kernel:
// docs/kernel-interfaces.md.
#pragma once

#include <array>
#include <cerrno>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "driver/common/npu_cores.h"
#include "driver/common/npu_window.h"
#include "driver/common/result.h"
#include "driver/emu/kernel/fault_spec.h"
#include "driver/emu/npu/memory.h"
#include "driver/emu/npu/pc.h"
#include "driver/emu/npu/prior_state.h"
#include "driver/emu/npu/weight_cache.h"
#include "driver/os/os.h"

namespace ork::emu {

inline constexpr int kMaxCores = hw::kNpuCores;  // driver/common/npu_cores.h

enum class TimingMode {
  fast,   // jobs complete inside the submit ioctl; timeouts are reported, never slept
  timed,  // completion waits for the modelled time (run_chain's modelled_ns) and timeouts
          // really elapse: the hook for the timing model (docs/timing-model.md)
};

// Runs one core's chain; the default is ork::emu::run_chain. Tests of the kernel's own
// mechanics (task ranges, chunking, resets) may inject a stand-in.
using ChainExecutor =
    std::function<ChainResult(const DeviceMemory& mem, int core, uint64_t first_regcmd_iova,
                              uint32_t first_entries, uint32_t max_tasks)>;

struct FakeKernelConfig {
  bool rknpu = true;                          // the vendor driver's DRM device
  std::string rknpu_card = "/dev/dri/card1";  // MTX hard-codes card1
  std::string rknpu_render = "/dev/dri/renderD129";
  // CONFIG_ROCKCHIP_RKNPU_FENCE: SUBMIT with FENCE_OUT returns a sync_file fd (pollable
  // through Os::poll). false: FENCE_OUT is refused with -EINVAL, as the vendor's #else.
  bool rknpu_fences = true;
  bool rocket = true;  // the mainline accel device
  std::string rocket_node = "/dev/accel/accel0";
  // A board's display controller: DRM driver "rockchip" on card0 (which is why the NPU is
  // card1), answering DRM_VERSION and nothing else. "" = none (the default: unit tests list
  // the NPU's nodes alone); the LD_PRELOAD shim's machine has it, so discovery's
  // driver-name check has another driver's card node to skip off the board too.
  std::string display_card;
  int cores = kMaxCores;  // 1..3
  TimingMode timing = TimingMode::fast;
  uint32_t hw_version = 0x46495245;  // GET_HW_VERSION in ORK's trace ("FIRE")
  // ORK (docs/hardware.md section 1, M2.1 of its reverse-engineering notes) saw render-node submits
  // accepted but running 0 tasks on silicon. false reproduces that: a SUBMIT through the render
  // node runs nothing and times out. Default true: the emulator lets both nodes work.
  bool render_node_submits_run = true;
  // Cache model: cached BOs (rknpu CACHEABLE, every rocket BO) get a device copy apart from
  // the CPU's. The NPU sees CPU writes only after MEM_SYNC TO_DEVICE / FINI_BO, the CPU sees
  // NPU writes only after MEM_SYNC FROM_DEVICE / PREP_BO, so a missing sync miscomputes as it
  // can on a board. Off by default: host memory is then coherent.
  bool model_caches = false;
  // With model_caches, the CORE keeps the weights it prepared from a cached BO's device copy
  // until the BO is written (driver/emu/npu/weight_cache.h). false: every task gathers and
  // prepares its weights again - slower, the same results.
  bool keep_prepared_weights = true;
  // The prepared-weight cache's bound in bytes (nullopt: WeightCache::default_capacity_bytes());
  // each kernel has its own cache (driver/emu/npu/weight_cache.h).
  std::optional<size_t> weight_cache_bytes;
  // The CORE's integer multiply (driver/emu/npu/core.h); nullptr: the built-in engine. Must
  // outlive the kernel.
  const Int8Engine* int8_engine = nullptr;
  ChainExecutor executor;  // empty: ork::emu::run_chain
  // What a job finds in a core's registers (driver/emu/npu/prior_state.h): empty = from
  // ORK_EMU_REGS (keep when unset, and when the value is not valid: the library refuses that
  // value before it builds a kernel, lib/api/device.cpp).
  std::optional<RegisterMode> registers;
  // Each IOMMU domain's (rknpu) or each open file's (rocket) address window, bytes: the NPU's
  // 4 GiB (driver/common/npu_window.h) unless a test shrinks it (ORK_EMU_WINDOW,
  // window_bytes_from_env) to cross windows with small models. The same allocator and the
  // same refusals either way: a BO past the window fails with ENOMEM.
  uint64_t window_bytes = hw::kNpuWindowBytes;
};

// The vendor driver's IOMMU domains: ids 0..15 (RKNPU_MAX_IOMMU_DOMAIN_NUM in the vendor
// driver's rknpu_drv.h, hw::kMaxNpuWindows; docs/kernel-interfaces.md "Windows").
inline constexpr int kRknpuDomains = hw::kMaxNpuWindows;

// ORK_EMU_WINDOW=<bytes>[K|M|G]: FakeKernelConfig::window_bytes for the emu devices; unset:
// 4 GiB. Refused (naming the variable): not a size, below 1 MiB, or above 4 GiB.
Result<uint64_t> window_bytes_from_env();

// Fault injection. Counters count down as faults fire; set them between ioctls.
struct Faults {
  int transient_ioctls = 0;       // the next N ioctls fail with transient_errno (a storm)
  int transient_errno = EINTR;    // EINTR or EAGAIN
  int fail_nr = -1;               // ioctl nr (_IOC_NR, e.g. 0x42 = MEM_CREATE) to fail ...
  int fail_errno = 0;             // ... with this errno ...
  int fail_times = 0;             // ... this many times
  int wedge_jobs = 0;             // the next N jobs never complete (timeout, core reset)
  int dma_error_jobs = 0;         // the next N jobs raise DMA_READ_ERROR (bit 12)
  bool refuse_bo_create = false;  // MEM_CREATE / CREATE_BO fail with ENOMEM
  // While set, no asynchronous job completes: an rknpu fence does not signal and rocket's
  // PREP_BO reports the BO busy, whatever the modelled time, so a test sees a job in flight
  // however fast or slow the host is. Clear it before a wait without a timeout (an rknpu
  // fence's poll sees the change within 1 ms; PREP_BO sleeps to its deadline). Blocking
  // submits are not held.
  bool hold_jobs = false;
  // Rules of ORK_EMU_FAULTS (read when an emu device opens) or set by tests: each counts the
  // events at its point and fires on the chosen ones (fault_spec.h, docs/emulator.md).
  std::vector<FaultRule> rules;
  // The node has vanished (a device:gone rule fired, or set directly): every ioctl and mmap
  // fails with ENODEV and open with ENOENT; close still works.
  bool gone = false;
};

// What the kernel did, for tests.
struct KernelStats {
  uint64_t ioctls = 0;                         // every ioctl call, failed or not
  uint64_t submits = 0;                        // SUBMIT ioctls that reached the NPU
  std::array<uint64_t, kMaxCores> pc_kicks{};  // run_chain calls per core
  std::array<uint64_t, kMaxCores> tasks_done{};
  // Host wall ns spent running chains (the emulated NPU's own arithmetic, on this CPU): what
  // a caller subtracts to see the library's host cost when the emulator computes (fast mode).
  uint64_t chain_ns = 0;
  std::array<uint64_t, kMaxCores> resets{};       // soft resets (timeouts, ACT_RESET)
  std::array<uint64_t, kMaxCores> rocket_jobs{};  // rocket jobs run per core
  uint64_t rocket_jobs_dropped = 0;               // bad jobs dropped with ioctl 0 (rocket quirk)
  uint64_t syncs = 0;                             // MEM_SYNC / PREP_BO / FINI_BO
  uint64_t dmabuf_exports = 0;                    // PRIME_HANDLE_TO_FD
  uint64_t dmabuf_imports = 0;                    // PRIME_FD_TO_HANDLE
  uint64_t dmabuf_syncs = 0;                      // DMA_BUF_IOCTL_SYNC
  uint64_t handles_open_at_close = 0;             // GEM handles still open when their fd closed
  uint64_t nonblock_submits = 0;                  // rknpu SUBMITs with NONBLOCK
  uint64_t reaped_jobs = 0;                       // overrun NONBLOCK jobs reaped (timeout_clean)
  uint64_t domain_switches = 0;                   // rknpu: a SUBMIT or SET_IOMMU_DOMAIN_ID moved the NPU to another domain
  uint64_t int4_saturated_cells = 0;              // int4 output cells the NPU clamped to int16 (run_chain)
};

// One IOMMU domain's address window as the kernel sees it (bytes).
struct WindowUsage {
  uint64_t window_bytes = 0;   // the range IOVAs are handed out from
  uint64_t used_bytes = 0;     // page-rounded BOs mapped in it, by every file
  uint64_t largest_free = 0;   // the largest BO that can be created now (fragmentation)
};

struct KernelState;  // fake_kernel_state.h

class FakeKernel final : public driver::Os {
 public:
  explicit FakeKernel(FakeKernelConfig config = {});
  ~FakeKernel() override;
  FakeKernel(const FakeKernel&) = delete;
  FakeKernel& operator=(const FakeKernel&) = delete;

  // Os. Paths the kernel does not emulate: ENOENT. Fds are real descriptors of /dev/null
  // (so they never collide with the process's own), known to this kernel. The dma-buf fds
  // of PRIME_HANDLE_TO_FD are memfds any FakeKernel answers (DMA_BUF_IOCTL_SYNC, mmap,
  // close: dmabuf.cpp).
  int open(const char* path, int flags) override;
  int close(int fd) override;
  int ioctl(int fd, unsigned long request, void* arg) override;
  void* mmap(void* addr, size_t length, int prot, int flags, int fd, off_t offset, int* error) override;
  int munmap(void* addr, size_t length) override;
  // Waits on rknpu fence fds: ready once their job's modelled time has passed. A fence that
  // never signals (its job wedged, or queued behind a wedged one) times out: really slept in
  // timed mode, reported at once in fast mode (like a blocking submit's timeout).
  int poll(struct pollfd* fds, nfds_t nfds, int timeout_ms) override;
  std::vector<std::string> list_nodes(const char* glob_pattern) override;

  // For the LD_PRELOAD shim: which calls belong to this kernel.
  bool emulates(const char* path) const;
  bool owns_fd(int fd) const;
  bool owns_mapping(const void* addr) const;

  const FakeKernelConfig& config() const;
  // Not synchronised with other threads' ioctls: set faults from the thread that drives the
  // kernel, between calls.
  Faults& faults();
  KernelStats stats() const;
  uint64_t chain_ns() const;  // stats().chain_ns without copying the rest (read twice per call)
  size_t live_bo_count() const;  // BOs with a handle or a mapping left
  size_t open_file_count() const;
  // The window a BO created through `node_fd` lands in: the vendor driver's IOMMU domain
  // `domain` (0..15, MEM_CREATE's iommu_domain_id), or that rocket file's own (rocket_gem.c:
  // a domain per open file; `domain` must be 0). nullopt: not our fd, or no such domain.
  std::optional<WindowUsage> window_usage(int node_fd, int domain = 0) const;
  size_t open_fence_count() const;  // rknpu sync_file fds not yet closed
  WeightCache::Stats weight_cache_stats() const;  // this kernel's prepared weights

 private:
  void* map_dmabuf(size_t length, int prot, int flags, int fd, off_t offset, int* error);
  std::unique_ptr<KernelState> state_;
};

}  // namespace ork::emu
