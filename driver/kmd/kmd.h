// The kernel-mode-driver interface: one C++ interface, two kernel uAPIs.
//   rknpu  - the vendor driver boards ship today (include/uapi/rknpu_ioctl.h)
//   rocket - the mainline accel driver, Linux 6.18+ (include/uapi/rocket_accel.h)
// Both run unchanged over the real kernel or the emulated NPU: the difference is only the
// Os they are handed (driver/os/os.h).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "driver/common/npu_irq.h"
#include "driver/common/result.h"
#include "driver/os/os.h"

namespace ork::driver {

enum class KmdKind { rknpu, rocket };
const char* kmd_kind_name(KmdKind kind);  // "rknpu" / "rocket"

struct DeviceInfo {
  KmdKind kind = KmdKind::rknpu;
  std::string node;            // e.g. /dev/dri/card1, /dev/accel/accel0
  std::string driver_name;     // from DRM_IOCTL_VERSION: "rknpu" or "rocket"
  std::string driver_version;  // "0.9.8" (rknpu GET_DRV_VERSION) or DRM major.minor.patch
  uint32_t hw_version = 0;     // rknpu GET_HW_VERSION; 0 where the uAPI has no query
  int cores = 3;               // RK3588: 3 (VND rknpu_drv.c)
  bool emulated = false;       // true when the Os is the emulated NPU
};

enum class BoUsage {
  data,     // A, B, C buffers: cacheable, synced explicitly
  regcmd,   // register command buffers
  tasks,    // the rknpu task array (needs KERNEL_MAPPING: the kernel reads it)
};

class Kmd;

// A buffer object: owned through std::unique_ptr<Bo>; its destructor unmaps and destroys
// it. The Kmd that made it must outlive it.
class Bo {
 public:
  Bo(Kmd& kmd, uint32_t handle, uint64_t iova, size_t size, uint8_t* map, uint64_t obj_addr);
  ~Bo();
  Bo(const Bo&) = delete;
  Bo& operator=(const Bo&) = delete;

  uint32_t handle() const { return handle_; }
  uint64_t iova() const { return iova_; }      // NPU address; always < 4 GiB
  size_t size() const { return size_; }        // bytes, page-rounded
  uint8_t* map() const { return map_; }        // CPU mapping of the whole BO
  uint64_t obj_addr() const { return obj_addr_; }  // rknpu kernel object cookie; 0 on rocket
  const Kmd& owner() const { return kmd_; }        // its window's Kmd (Kmd::window)
  // dma-buf sharing (bo_export / bo_import): the BO's own dma-buf fd once it is shared
  // (-1 before), closed with the BO; imported BOs have no IOVA (0) and no obj_addr.
  int dmabuf_fd() const { return dmabuf_fd_; }
  bool imported() const { return imported_; }
  void set_dmabuf(int fd, bool imported) {
    dmabuf_fd_ = fd;
    imported_ = imported;
  }

 private:
  Kmd& kmd_;
  uint32_t handle_;
  uint64_t iova_;
  size_t size_;
  uint8_t* map_;
  uint64_t obj_addr_;
  int dmabuf_fd_ = -1;
  bool imported_ = false;
};

// One task: a regcmd buffer in a BO (64-byte aligned), entries counted with the 4-entry
// PC trailer (docs/regcmd-contract.md section 5).
struct TaskRef {
  uint64_t regcmd_iova = 0;
  uint32_t regcmd_entries = 0;
  uint32_t int_mask = hw::kIntTaskDone;  // DPU_0|DPU_1, a whole pair (driver/common/npu_irq.h)
};

// The tasks one core runs, in order, chained through their PC trailers.
struct CoreJob {
  int core = 0;  // 0..cores-1
  std::vector<TaskRef> tasks;
};

struct SubmitDesc {
  std::vector<CoreJob> jobs;         // at most one per core
  std::vector<const Bo*> in_bos;     // read by the NPU (rocket implicit fences)
  std::vector<const Bo*> out_bos;    // written by the NPU
  uint32_t timeout_ms = 6000;        // MTX tests and librknnrt use 6000 ms
};

class Kmd;

// What a Kmd's submit reads of a checked job on every call, in the backend's own layout (the
// task records or their fields, the per-core ranges of each ioctl, the BOs' handles): laid out
// once, when the job is checked (Kmd::check). Up to kInlineBytes the bytes live inside the
// FlatJob itself, so a job checked into a matmul context is read where the context keeps it,
// a few consecutive lines, with no pointer to another allocation of that job's (a decode
// loop's jobs are 3-15 tasks: 60-240 bytes). Larger jobs (prefill, batches) go to the heap.
// docs/library.md "The job a submit reads, flat".
class FlatJob {
 public:
  static constexpr size_t kInlineBytes = 256;
  FlatJob() = default;
  // A job of `bytes` flat bytes, zeroed; refused past UINT32_MAX (the size is 32-bit, below),
  // before anything is allocated, rather than truncated.
  static Result<FlatJob> make(size_t bytes);  // kmd_common.cpp
  FlatJob(const FlatJob& other) : FlatJob(other.size_) { std::memcpy(data(), other.data(), size_); }
  FlatJob& operator=(const FlatJob& other) {
    if (this != &other) *this = FlatJob(other);
    return *this;
  }
  // A moved-from job is empty: its size must not claim the heap bytes it gave away.
  FlatJob(FlatJob&& other) noexcept : size_(std::exchange(other.size_, 0)), heap_(std::move(other.heap_)) {
    std::memcpy(inline_, other.inline_, kInlineBytes);
  }
  FlatJob& operator=(FlatJob&& other) noexcept {
    if (this == &other) return *this;
    size_ = std::exchange(other.size_, 0);
    heap_ = std::move(other.heap_);
    std::memcpy(inline_, other.inline_, kInlineBytes);
    return *this;
  }
  size_t size() const { return size_; }
  // Decided by the size, so an inline job's call reads its size and bytes, not the heap
  // pointer after them.
  std::byte* data() { return size_ > kInlineBytes ? reinterpret_cast<std::byte*>(heap_.get()) : inline_; }
  const std::byte* data() const {
    return size_ > kInlineBytes ? reinterpret_cast<const std::byte*>(heap_.get()) : inline_;
  }

 private:
  // Sized from the 32-bit size alone, so a size and its bytes always agree (make() checks).
  explicit FlatJob(uint32_t bytes)
      : size_(bytes), heap_(bytes > kInlineBytes ? std::make_unique<uint64_t[]>((size_t{bytes} + 7) / 8) : nullptr) {}
  // 4 bytes of size (12 bytes a task: a job's tasks, whose command lists all sit in the 4 GiB
  // window, stay far below 4 GiB of flat bytes), then the inline bytes
  // (4-aligned: the backends read them as 32-bit words or copy them out), then the heap
  // pointer only a job past kInlineBytes reads: what a call reads starts 4 bytes in
  // (docs/library.md "Three lines of a context").
  uint32_t size_ = 0;
  alignas(4) std::byte inline_[kInlineBytes]{};
  std::unique_ptr<uint64_t[]> heap_;  // past kInlineBytes; null otherwise
};

// A SubmitDesc one Kmd has validated (Kmd::check), immutable from then on, so that submitting
// it again needs no checks (Kmd::submit_checked). A matmul context builds its jobs once and
// submits them on every call: checking each call read the weights' and command lists' BO
// objects and every task, lines of that weight's own (docs/library.md "What grows with the
// model's size"), and so did laying the descriptor's job list and task lists out for the
// kernel, which the Kmd now does once, into the FlatJob. Only a Kmd makes a checked one; a
// default one is checked by none.
class CheckedSubmit {
 public:
  CheckedSubmit() = default;
  const SubmitDesc& desc() const { return desc_; }
  const FlatJob& flat() const { return flat_; }  // what a submit of it reads (layout tests)

 private:
  friend class Kmd;
  CheckedSubmit(SubmitDesc desc, uint64_t by, FlatJob flat)
      : by_(by), flat_(std::move(flat)), desc_(std::move(desc)) {}
  // What a call reads comes first: who checked the job, then its flat layout. The
  // descriptor itself (job and task lists, BO lists) is read only off the per-call path.
  // by_ is the serial of the Kmd that checked desc_ (for its window, BOs and cores), not its
  // address: a Kmd opened where a closed one was must not take the closed one's jobs.
  uint64_t by_ = 0;
  FlatJob flat_;
  SubmitDesc desc_;
};

struct SubmitResult {
  uint32_t tasks_completed = 0;  // rknpu task_counter; rocket: tasks of jobs that finished
  int64_t hw_elapse_ns = -1;     // rknpu hw_elapse_time; -1 where the uAPI has none
  int64_t wall_ns = 0;           // submit + wait, measured on the host
  int64_t wait_ns = 0;           // of wall_ns, the wait after the submit ioctl returned
                                 // (rocket PREP_BO; 0 for rknpu's blocking SUBMIT, which
                                 // returns when the job is done)
};

// The NPU's 32-bit address window as this process can know it (bytes).
struct WindowInfo {
  uint64_t window_bytes = 0;       // 4 GiB (address registers are 32-bit)
  uint64_t resident_bytes = 0;     // page-rounded BOs this Kmd holds now
  uint64_t free_bytes = 0;         // window minus what is mapped in it
  uint64_t largest_free_bytes = 0; // the largest BO that may be created
  bool exact = false;              // true: the kernel's own figures (the emulator);
                                   // false: estimated from this process's BOs
};

enum class SyncDir { to_device, from_device };

// A job submit_async() handed to the kernel and wait() has not yet seen finish. What it
// holds is the backend's (rknpu: the job's task array and its fences; rocket: the out BOs'
// handles). Destroying one that was not waited is safe for the kernel (rknpu keeps its own
// reference to the task array), but the job's data BOs must outlive the job on the NPU:
// the caller waits before freeing them.
class PendingJob {
 public:
  virtual ~PendingJob() = default;
  bool finished = false;  // wait() saw it end (ok or failed); a second wait is refused
};

// How a backend observes the completion of an asynchronous job (docs/kernel-interfaces.md,
// "Asynchronous submission").
enum class AsyncMode {
  fence,     // rknpu NONBLOCK | FENCE_OUT: poll the sync_file fd
  blocking,  // rknpu kernel without CONFIG_ROCKCHIP_RKNPU_FENCE: FENCE_OUT is refused, so
             // submit_async makes a blocking SUBMIT and the job is done when it returns
  prep_bo,   // rocket: SUBMIT never waits; PREP_BO with a timeout on each out BO
};
const char* async_mode_name(AsyncMode mode);  // "fence", "blocking", "prep_bo"

class Kmd {
 public:
  virtual ~Kmd() = default;
  virtual const DeviceInfo& info() const = 0;
  virtual Result<std::unique_ptr<Bo>> bo_create(size_t bytes, BoUsage usage) = 0;
  // Cache maintenance around CPU access (rknpu MEM_SYNC; rocket FINI_BO / PREP_BO).
  virtual Status bo_sync(const Bo& bo, SyncDir dir) = 0;
  // Submits the per-core task lists and waits for completion or desc.timeout_ms.
  // -ETIMEDOUT: a core did not finish (the kernel has reset it; the device stays usable).
  // -EIO: the job failed (DMA error). Other -errno: the ioctl was refused.
  virtual Result<SubmitResult> submit(const SubmitDesc& desc) = 0;
  // The checks submit() makes, once: a job submitted many times is checked here and then
  // submitted with submit_checked, which does what submit() does without checking again.
  // submit_checked refuses a job this Kmd did not check.
  Result<CheckedSubmit> check(SubmitDesc desc) const;
  Result<SubmitResult> submit_checked(const CheckedSubmit& job);
  // The same job, handed to the kernel without waiting for it. Jobs run in submission order
  // on each core. Several may be in flight; each must use its own out BOs (and A BOs the
  // host rewrites meanwhile).
  virtual Result<std::unique_ptr<PendingJob>> submit_async(const SubmitDesc& desc) = 0;
  // submit_async of a job this Kmd checked (check()): no checks and no layout per call, as
  // submit_checked (docs/library.md "Asynchronous jobs and batches"). Refuses a job this Kmd
  // did not check.
  Result<std::unique_ptr<PendingJob>> submit_async_checked(const CheckedSubmit& job);
  // Waits for `job` at most `timeout_ms` (-1: up to the job's own desc.timeout_ms deadline).
  // -EBUSY: not finished within timeout_ms; still in flight, wait again. -ETIMEDOUT: the job
  // overran desc.timeout_ms; its cores were reset and the device stays usable. -EIO: it
  // faulted. -EALREADY: `job` was already waited. Results of a failed job are undefined.
  virtual Result<SubmitResult> wait(PendingJob& job, int64_t timeout_ms) = 0;
  virtual AsyncMode async_mode() const = 0;
  // Resets every core (rknpu ACTION ACT_RESET). rocket has no reset ioctl: its kernel
  // resets a core on job timeout; reset() there is a documented no-op.
  virtual Status reset() = 0;
  // The device node's descriptor (for the emulator's window query, lib/api/stats.cpp).
  virtual int node_fd() const = 0;
  // The NPU address window this Kmd's BOs and jobs live in (docs/kernel-interfaces.md
  // "Windows"): rknpu's IOMMU domain id (MEM_CREATE's and SUBMIT's iommu_domain_id, 0..15),
  // rocket's open file (each has its own IOMMU domain; 0 the first). A job may name only
  // BOs of its own Kmd (submit refuses the others, naming both windows).
  int window() const { return window_; }
  // Another window on the same device, 1..hw::kMaxNpuWindows - 1: rknpu, the same node again
  // with IOMMU domain `window`; rocket, the node opened again (a file is a window).
  virtual Result<std::unique_ptr<Kmd>> open_window(int window) const = 0;

  // Bytes of the live BOs made by this Kmd (counted by Bo's constructor and destructor).
  uint64_t resident_bytes() const { return resident_bytes_.load(std::memory_order_relaxed); }
  // Neither uAPI has a query for the IOMMU window: an estimate from this process's BOs,
  // exact=false. rknpu: one IOMMU domain shared by every process (others' BOs unseen, so
  // free is an upper bound); rocket: a domain per open file, so only fragmentation is
  // unseen. docs/library.md "Device memory".
  WindowInfo estimate_window() const;

  // dma-buf sharing through the DRM core's PRIME ioctls (both uAPIs answer them:
  // docs/kernel-interfaces.md "dma-buf"). bo_export: a new dma-buf fd of `bo` (close-on-exec,
  // read-write), the caller's to close; the BO keeps one of its own for dmabuf_sync.
  virtual Result<int> bo_export(Bo& bo) = 0;
  // bo_import: a BO over the dma-buf `fd` (PRIME_FD_TO_HANDLE), mapped for the CPU through
  // the dma-buf itself, `bytes` long (refused when the dma-buf is smaller). The caller keeps
  // `fd`. The BO has no NPU address (the vendor uAPI does not report one for imports).
  virtual Result<std::unique_ptr<Bo>> bo_import(int fd, size_t bytes) = 0;
  // Brackets CPU access to a shared BO (DMA_BUF_IOCTL_SYNC on its dma-buf fd): `start`
  // true before the access, false after; `write` true when the CPU writes it. No-op for a BO
  // that is not shared.
  virtual Status dmabuf_sync(const Bo& bo, bool start, bool write) = 0;

 protected:
  friend class Bo;
  virtual void bo_release(Bo& bo) noexcept = 0;
  // The flat layout of a valid `desc` (FlatJob): what submit_flat reads. check() keeps it in
  // the CheckedSubmit; submit() lays it out for its one call.
  // Refused (never truncated) when its bytes pass a FlatJob's 32-bit size.
  virtual Result<FlatJob> lay_flat(const SubmitDesc& desc) const = 0;
  // submit() after its checks, and submit_checked(): `desc` is valid for this Kmd and `flat`
  // is lay_flat(desc). The common path reads only `flat`.
  virtual Result<SubmitResult> submit_flat(const SubmitDesc& desc, const FlatJob& flat) = 0;
  // submit_async() after its checks, and submit_async_checked(), likewise.
  virtual Result<std::unique_ptr<PendingJob>> submit_async_flat(const SubmitDesc& desc, const FlatJob& flat) = 0;
  // The GEM handles of this file's live BOs: PRIME_FD_TO_HANDLE of a dma-buf this file
  // already holds returns the handle it has (the DRM core's prime lookup), which a second
  // Bo must not own; bo_import refuses it.
  void note_handle(uint32_t handle);
  void drop_handle(uint32_t handle);
  bool has_handle(uint32_t handle) const;
  // bo_import for either uAPI (both answer the DRM core's PRIME ioctls on `drm_fd`):
  // PRIME_FD_TO_HANDLE, the refusal of a handle this file already holds, then a BO over the
  // handle mapped through the dma-buf (kmd_common.cpp).
  Result<std::unique_ptr<Bo>> import_dmabuf(Os& os, int drm_fd, int fd, size_t bytes);
  int window_ = 0;  // set by open_window

 private:
  static uint64_t next_serial();
  const uint64_t serial_ = next_serial();  // unique in the process, never 0 (CheckedSubmit)
  std::atomic<uint64_t> resident_bytes_{0};
  mutable std::mutex handles_mutex_;
  std::set<uint32_t> handles_;
};

// Open a node with a given kernel interface. The node's DRM driver name is checked.
Result<std::unique_ptr<Kmd>> open_rknpu(Os& os, const std::string& node);
Result<std::unique_ptr<Kmd>> open_rocket(Os& os, const std::string& node);

// Finds a device: rknpu through libdrm's device list (by driver name "rknpu"; card nodes
// first, since ORK saw render-node submits not execute), rocket through /dev/accel/accel*.
// `node` overrides the search. kind = nullopt: the first that opens, rknpu before rocket.
Result<std::unique_ptr<Kmd>> discover(Os& os, std::optional<KmdKind> kind,
                                      const std::string& node = {});

}  // namespace ork::driver
