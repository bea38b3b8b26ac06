// A matmul context: everything one (plan, weights) pair needs on a device, built once —
// the feature and output BOs, the chained per-core command lists in one regcmd BO, and the
// submit descriptors — plus the per-call path that runs it (pack A, submit, wait,
// accumulate K-slices, unpack C). The runner (run.h) caches contexts; tests and experiments
// run hand-built plans through the same code.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "driver/common/result.h"
#include "driver/kmd/kmd.h"
#include "lib/matmul/emit.h"
#include "lib/matmul/plan.h"

namespace ork::matmul {

// One submit: the K-slices [first_slice, first_slice + count) with their output slots; its
// job checked once, when the context is built (driver::CheckedSubmit). 32-bit slice numbers
// (a plan has a few hundred slices at most: K / 480), 8 bytes where 16 cost a three-core
// decode call a fourth line of its context (docs/library.md "Three lines of a context").
struct SliceGroup {
  int32_t first_slice = 0;
  int32_t count = 0;
  driver::CheckedSubmit submit;
};

// A context's slice groups, the first inline: the context itself holds its first group's
// checked job and that job's flat layout (driver::FlatJob), so a call of a one-group context
// (every decode shape) reads one contiguous block of its own, the context, and no pointer
// to another allocation of that weight's (docs/library.md "The job a submit reads, flat").
// Groups past the first (K-slice outputs over one submit's budget) are in a vector.
class SliceGroups {
 public:
  size_t size() const { return size_; }
  SliceGroup& operator[](size_t i) { return i == 0 ? first_ : rest_[i - 1]; }
  const SliceGroup& operator[](size_t i) const { return i == 0 ? first_ : rest_[i - 1]; }
  void push_back(SliceGroup g) {
    if (size_ == 0) first_ = std::move(g);
    else rest_.push_back(std::move(g));
    ++size_;
  }
  template <class Groups, class Group>
  struct Iter {
    Groups* groups;
    size_t i;
    Group& operator*() const { return (*groups)[i]; }
    Iter& operator++() {
      ++i;
      return *this;
    }
    bool operator!=(const Iter& other) const { return i != other.i; }
  };
  Iter<SliceGroups, SliceGroup> begin() { return {this, 0}; }
  Iter<SliceGroups, SliceGroup> end() { return {this, size_}; }
  Iter<const SliceGroups, const SliceGroup> begin() const { return {this, 0}; }
  Iter<const SliceGroups, const SliceGroup> end() const { return {this, size_}; }

 private:
  size_t size_ = 0;
  SliceGroup first_;
  std::vector<SliceGroup> rest_;
};

// The output BOs a group writes: one per slice, or the one C' of a stacked plan (plan.h).
inline int64_t output_slots(const Plan& plan, const SliceGroup& g) { return plan.stacked ? 1 : g.count; }

class Job;

// The feature (A) BO and the output slots a context's command lists point at. A context
// owns its set, or shares it with the other contexts of its geometry (IoGeometry): the
// runner's blocking calls do, so a model's same-shaped weights touch one set between them
// (docs/library.md "What grows with the model's size"). The job's rule (job.h) is kept
// per set, not per context: `busy` is the job in flight on these BOs, whichever context
// it came through, and every use of any context on the set completes it first.
struct IoBuffers {
  std::unique_ptr<driver::Bo> a;
  std::vector<std::unique_ptr<driver::Bo>> c;  // output slots of one slice group
  // The job in flight on these BOs (job.h), null when none. Not part of the set's value.
  mutable Job* busy = nullptr;
  size_t bytes() const;
};

// What decides whether two contexts can share one IoBuffers: bytes of A, bytes of an
// output slot, and slots per group (the plan's, context.cpp). Equal geometry, equal BOs.
struct IoGeometry {
  int64_t a_bytes = 0, slot_bytes = 0, slots = 0;
  bool operator==(const IoGeometry&) const = default;
};
IoGeometry io_geometry(const Plan& plan);
// A new set of BOs of `geometry`, owned by whoever holds it.
Result<std::shared_ptr<IoBuffers>> allocate_io(driver::Kmd& kmd, const IoGeometry& geometry);

// One block per context, aligned to a cache line, and what a cached call reads of it in one
// run from the start of its second line: the plan's per-call fields (plan.h: its last 72
// bytes), the buffers' address, the first slice group with its flat job. A decode call (one
// group, a job of 1-3 tasks on 1-3 cores) reads three consecutive lines of its own context
// (188 bytes at three tasks), and nothing else of that weight's but its handle and the
// cache's slot (docs/library.md "What grows with the model's size", "Three lines of a
// context"). Before the run: 16 bytes only a build reads, then the plan's planning fields
// (48 bytes), so that its per-call fields begin the second line; after it, what keeps the
// buffers alive.
struct alignas(64) Context {
  const driver::Bo* weights = nullptr;            // packed by the plan's slice layout
  uint32_t core_mask = 0;  // the physical cores: plan core i runs on the i-th set bit
  bool shared_io = false;                         // io was handed in (build_context's `io`)
  Plan plan;
  IoBuffers* io = nullptr;                        // A and the output slots, maybe shared
  SliceGroups groups;
  std::unique_ptr<driver::Bo> regcmd;
  // Owns `io` (with the other contexts of its set): a call reads the plain pointer above, 8
  // bytes of the run where the shared_ptr took 16.
  std::shared_ptr<IoBuffers> io_owner;

  const driver::Bo& a() const { return *io->a; }
  const driver::Bo& c(size_t slot) const { return *io->c[slot]; }
  // Bytes of the BOs this context owns (the command lists, and A and the output slots
  // unless shared; not the weights): what the runner's cache bound counts per context.
  size_t device_bytes() const;
};

// Host-side time of one call, split the way mc_prof reports it (ns).
struct RunStats {
  int64_t plan_ns = 0;      // context lookup (or plan + build on a miss)
  int64_t pack_ns = 0;      // A into the native layout + cache sync
  int64_t submit_ns = 0;    // submit + wait, wall time
  int64_t wait_ns = 0;      // of submit_ns, the wait after the submit ioctl (rocket PREP_BO)
  int64_t device_ns = 0;    // time the kernel reports (rknpu hw_elapse_time), -1 if none
  int64_t unpack_ns = 0;    // accumulate K-slices + unpack C
  int64_t bytes_to_device = 0;    // bytes synced for the NPU (the feature BO)
  int64_t bytes_from_device = 0;  // bytes synced back (the output slots read)
  int submits = 0;
  bool built = false;       // true when this call planned and built the command lists
  bool recalled = false;    // its context was the holder's remembered one (run.h ContextMemo)
  int cpu_threads = 0;      // lib/quant's cpu backend: the most host threads a multiply ran on
  // The same steps as the host's CPU time (every thread that did the step's work), measured
  // only while the calling thread holds a ref::detail::CpuAccounting (lib/ref/workers.h;
  // else 0): the board projection's host part (docs/execution.md "Host and device
  // overlapped"). submit_cpu_ns: the submit and wait ioctls' CPU time on the calling thread.
  int64_t plan_cpu_ns = 0, pack_cpu_ns = 0, submit_cpu_ns = 0, unpack_cpu_ns = 0;
};

// One matmul's C being assembled: fp16 C from several K-slices keeps fp32 partials here,
// rounded once at the end (docs/dtypes.md).
struct OutputState {
  std::vector<float> acc;
};

// Adds one kernel submit's figures (a blocking submit, or an asynchronous one and its wait)
// to `stats`: submits, submit_ns, wait_ns, device_ns (-1 once any submit reports none).
void account_submit(RunStats& stats, const driver::SubmitResult& result, int64_t submit_ns);

// Builds the context of `plan` over resident `weights` (packed for this plan's slices).
// `core_mask`: the physical cores the plan's cores 0..cores_used-1 map to, in order (the
// i-th set bit); 0 = cores 0..cores_used-1. It must have at least plan.cores_used bits, all
// below the device's core count. The command lists do not depend on the core they run on.
// `io`: A and the output slots to point the command lists at, of io_geometry(plan) (shared
// with other contexts); null = a set of the context's own.
Result<std::unique_ptr<Context>> build_context(driver::Kmd& kmd, Plan plan,
                                               const driver::Bo& weights,
                                               const EmitOptions& emit = {}, uint32_t core_mask = 0,
                                               std::shared_ptr<IoBuffers> io = nullptr);

// C (M x N row-major int32) = A (M x K row-major int8) x W, with the context's plan.
Status execute(driver::Kmd& kmd, const Context& ctx, std::span<const int8_t> a,
               std::span<int32_t> c, RunStats& stats);

// Any dtype: A and C by the plan (docs/dtypes.md "Host formats"):
//   int8: A int8_t[M*K], C int32_t[M*N];  int4: A packed nibbles ceil(M*K/2) bytes, C int32_t;
//   fp16: A uint16_t[M*K] (binary16), C float[M*N], or uint16_t[M*N] when plan.fp16_out.
// With `columns` (plan.h ColumnPart) C goes to each part's own output instead (c unused).
Status execute_any(driver::Kmd& kmd, const Context& ctx, const void* a, void* c, RunStats& stats,
                   std::span<const ColumnPart> columns = {});

// Packs `w` (K x N row-major) for `plan`'s slice layout into a new BO, builds the context
// and runs it once. For hand-built plans (tests of the hardware limits, experiments).
Status run_plan_once(driver::Kmd& kmd, const Plan& plan, std::span<const int8_t> a,
                     std::span<const int8_t> w, std::span<int32_t> c, const EmitOptions& emit = {});
// The same for any dtype: W int8_t[K*N], uint16_t[K*N] (fp16) or packed int4 bytes.
Status run_plan_once_any(driver::Kmd& kmd, const Plan& plan, const void* a, const void* w, void* c,
                         const EmitOptions& emit = {});
// Packs row-major weights of plan.dtype (formats as run_plan_once_any) into `out`
// (plan.b_bytes() bytes).
Status pack_weights(const Plan& plan, const void* w, std::span<uint8_t> out);

}  // namespace ork::matmul
