// The runner: resident weights, and a cache of contexts (context.h) keyed by (weights, M,
// core mask, mc_cap, fp16 C, shared buffers), so a repeated call only packs A, submits,
// waits and unpacks C. The cache is bounded by the bytes of the BOs its contexts hold, not by
// a count, so a whole model's weights keep their contexts (docs/library.md "Contexts and
// their bound"). The contexts of blocking calls share their A and output BOs by geometry
// (one set per shape in a decode loop: docs/library.md "What grows with the model's size").
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <span>
#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "driver/common/byte_lru.h"
#include "driver/common/result.h"
#include "driver/kmd/kmd.h"
#include "lib/matmul/context.h"
#include "lib/matmul/plan.h"

namespace ork::matmul {

// K x N weights packed once into the native layout of their K-slices, in one BO. The
// layout depends on K, N and dtype only, never on M or the core count.
class ResidentWeights {
 public:
  // `row_major`: int8_t[K*N], uint16_t[K*N] (fp16 bit patterns) or, for int4, the packed
  // nibble stream of K x N (ceil(K*N/2) bytes, element k*N+n low nibble first). int4 weights
  // are sliced as wide as their own bound allows (int4_bound.h), kept as slice_k().
  static Result<std::unique_ptr<ResidentWeights>> create(driver::Kmd& kmd, DType dtype, int64_t k,
                                                         int64_t n, const void* row_major);
  // w4a8: packed int4 K x N widened to int8 as they are written to the NPU buffer (an int8
  // resident; the NPU has no int8 x int4 mode, docs/hardware.md section 9).
  static Result<std::unique_ptr<ResidentWeights>> create_w4a8(driver::Kmd& kmd, int64_t k, int64_t n,
                                                              const uint8_t* packed);
  // Weights already in the native layout in `bo` (read there from a packed model file,
  // lib/exec): a view, no copy. `bo` must hold the layout's b_bytes() and outlive the view;
  // its contents may change between calls (sync it to the device after each change).
  // `slice_k`: the int4 K-slice width they were packed with (0 = the dtype's).
  static Result<std::unique_ptr<ResidentWeights>> view(const driver::Bo& bo, DType dtype, int64_t k, int64_t n,
                                                       int64_t slice_k = 0);
  // Bytes of K x N weights of `dtype` in the native layout.
  static Result<int64_t> packed_bytes(DType dtype, int64_t k, int64_t n);
  // The one place a resident buffer is allocated, filled and synced: `fill` gets the layout
  // plan (M = 1, one core: the layout depends on K, N and dtype only) and the BO's
  // plan.b_bytes() bytes. create() packs K x N; engines' layouts and packed-weight import
  // (docs/library.md) fill it their way.
  using Fill = std::function<Status(const Plan& layout, std::span<uint8_t> native)>;
  // `slice_k`: int4's K-slice width (PlanOptions::slice_k; 0 = the dtype's).
  static Result<std::unique_ptr<ResidentWeights>> create_with(driver::Kmd& kmd, DType dtype, int64_t k,
                                                              int64_t n, const Fill& fill, int64_t slice_k = 0);
  // The layout plan of (dtype, K, N) at int4 slice width `slice_k` (0 = the dtype's).
  static Result<Plan> layout(DType dtype, int64_t k, int64_t n, int64_t slice_k = 0);
  // The native bytes, as packed (what packed-weight export writes).
  std::span<const uint8_t> native() const { return {bo().map(), native_bytes_}; }
  DType dtype() const { return dtype_; }
  int64_t k() const { return k_; }
  int64_t n() const { return n_; }
  // int4: the K-slice width the weights were packed with, every plan of them takes it
  // (PlanOptions::slice_k); 0 = the dtype's.
  int64_t slice_k() const { return slice_k_; }
  const driver::Bo& bo() const { return view_ != nullptr ? *view_ : *bo_; }
  uint64_t id() const { return id_; }  // unique per process: keys the runner's cache

 private:
  ResidentWeights() = default;
  DType dtype_ = DType::int8;
  int64_t k_ = 0, n_ = 0;
  int64_t slice_k_ = 0;
  size_t native_bytes_ = 0;
  std::unique_ptr<driver::Bo> bo_;
  const driver::Bo* view_ = nullptr;  // set by view(): not owned
  uint64_t id_ = 0;
};

// The context a holder's resident weights last ran with in a blocking call (MatmulRunner::run),
// remembered so that the next call of the same key skips the cache's lookup and its slot, a
// line of that weight's (docs/library.md "The handle remembers its context"). 16 bytes: the
// context's address with the call's core mask and C type in its low bits (a context is
// aligned to a cache line), and the cache's stamp when it was found (ByteLru::generation).
// It is used only when the stamp is the runner's cache's current one (no context dropped
// since, by any runner: stamps are process-wide), its bits are the call's, and the context's
// own plan has the call's M, so the key is the call's whole key: the weights (the holder's,
// forgotten when they are replaced), M, mask, C type, no row cap (calls with one never
// remember), a shared set (run() only), and the device (the runner whose stamp it is).
//
// Threads: a holder (ork_weights) may be called from several threads. Its memo is read and
// written only inside MatmulRunner::run, which every caller serialises per runner, as the
// cache it stands for (the device's mutex, lib/api/device.h); the lock orders one call's
// writes before the next call's reads, so a call always reads the pair one call wrote.
// The fields are atomics (relaxed: plain moves on x86-64 and AArch64) so that the holder's
// bytes stay free of a data race in any case: a thread that ever read them unlocked would
// get a stale pair, which the stamp check refuses, never a torn word.
class ContextMemo {
 public:
  ContextMemo() = default;
  ContextMemo(const ContextMemo&) = delete;
  ContextMemo& operator=(const ContextMemo&) = delete;

 private:
  friend class MatmulRunner;
  friend class OwnedWeights;
  void forget() {
    tagged_.store(0, std::memory_order_relaxed);
    stamp_.store(0, std::memory_order_relaxed);
  }
  std::atomic<uintptr_t> tagged_{0};  // Context* | call bits (MatmulRunner::memo_bits); 0: none
  std::atomic<uint64_t> stamp_{0};    // the cache's generation it was found under; 0: none
};

// Resident weights as the runner takes them: the object, and its id read when the holder took
// them. The runner's cache is keyed by the id alone, so a call whose context is cached reads
// nothing of the object: a holder that keeps the id beside what every call reads anyway (the C
// API's weights handle, OwnedWeights) spares a decode loop a line of each weight's per call
// (docs/library.md "The key on the handle"). Implicit from a ResidentWeights, which then reads
// its id.
class WeightsRef {
 public:
  WeightsRef(const ResidentWeights& w) : w_(&w), id_(w.id()) {}  // NOLINT: implicit by design
  const ResidentWeights& weights() const { return *w_; }
  uint64_t id() const { return id_; }
  ContextMemo* memo() const { return memo_; }  // the holder's (OwnedWeights), or null

 private:
  friend class OwnedWeights;
  WeightsRef(const ResidentWeights* w, uint64_t id, ContextMemo* memo) : w_(w), id_(id), memo_(memo) {}
  const ResidentWeights* w_;
  uint64_t id_;
  ContextMemo* memo_ = nullptr;
};

// Resident weights owned with their id and the context they last ran with beside them, 32
// bytes: whatever replaces the object replaces the id and forgets the context, so a
// WeightsRef of it always names the object it points to (ids are never reused in a process: a
// destroyed object's contexts, if not forgotten, are never found) and never recalls another's.
class OwnedWeights {
 public:
  OwnedWeights() = default;
  OwnedWeights& operator=(std::unique_ptr<ResidentWeights> w) {
    memo_.forget();
    w_ = std::move(w);
    id_ = w_ ? w_->id() : 0;
    return *this;
  }
  explicit operator bool() const { return w_ != nullptr; }
  const ResidentWeights* get() const { return w_.get(); }
  const ResidentWeights* operator->() const { return w_.get(); }
  const ResidentWeights& operator*() const { return *w_; }
  // Only while it holds weights.
  WeightsRef ref() const { return {w_.get(), id_, &memo_}; }
  uint64_t id() const { return id_; }  // 0 when empty

 private:
  std::unique_ptr<ResidentWeights> w_;
  uint64_t id_ = 0;
  mutable ContextMemo memo_;  // written by calls through a const holder: not part of its value
};

struct RunOptions {
  int cores = kMaxCores;   // used when core_mask is 0: cores 0..cores-1
  uint32_t core_mask = 0;  // bit i = core i may run (validated by the caller: ork_matmul)
  int64_t mc_cap = 0;
  bool fp16_out = false;  // fp16 weights only: C as binary16
};

// The core mask a call runs on: `options.core_mask`, or cores 0..cores-1 when it is 0.
uint32_t effective_core_mask(const RunOptions& options);

// The plan of a call: make_plan of (weights, M) with the weights' dtype and int4 width and
// the call's cores, row cap and C type; what the runner builds when its owner set no chooser.
Result<Plan> plan_call(const ResidentWeights& w, int64_t m, const RunOptions& options);
// Another plan of a call, given by the runner's owner (lib/api: the board plan's for int4,
// lib/exec/board_plan.h, so the executor and the C API choose alike); called when a context
// is built, i.e. once per cached call. Its cores are the mask's (plan core c = its c-th bit).
using PlanChooser = std::function<Result<Plan>(const ResidentWeights&, int64_t, const RunOptions&)>;

// Plans (weights, M, options) with `chooser` (empty: plan_call) and builds its context: what
// the runner caches per key, and what a batch (lib/api/batch.*) owns for each of its matmuls.
Result<std::unique_ptr<Context>> build_call_context(driver::Kmd& kmd, const ResidentWeights& w, int64_t m,
                                                    const RunOptions& options, const PlanChooser& chooser = {});

class MatmulRunner {
 public:
  // Default bound of the context cache: a quarter of the NPU's 4 GiB window, and at most
  // 1/16 of physical memory (1 GiB on a 24 GiB machine; a decode context at M = 1 holds
  // ~8-50 KiB, so ~20000 contexts). ORK_CONTEXT_CACHE_BYTES overrides (lib/api).
  static size_t default_context_bytes();
  explicit MatmulRunner(driver::Kmd& kmd, size_t context_bytes = default_context_bytes());
  ~MatmulRunner();
  MatmulRunner(const MatmulRunner&) = delete;
  MatmulRunner& operator=(const MatmulRunner&) = delete;

  // C (m x n row-major) = A (m x k row-major) x W; element types by the weights' dtype
  // (execute_any in context.h): int8 -> int32, int4 (packed A) -> int32, fp16 -> fp32/fp16.
  // Blocking: nothing is in flight on its context when it returns, so the contexts of run()
  // share one set of A and output BOs per geometry (shared_io); a job still in flight on
  // that set would be completed first all the same (job.h, the rule).
  // A cached call reads nothing of `w` but the reference itself (WeightsRef). With `columns`
  // C's columns go each to its part's own output instead (plan.h ColumnPart; c unused).
  Status run(WeightsRef w, const void* a, int64_t m, void* c,
             const RunOptions& options, RunStats* stats = nullptr, std::span<const ColumnPart> columns = {});
  // The cached context of a call (built on a miss), shared: an asynchronous job holds it
  // until it completes, so an eviction meanwhile only drops the cache's reference. Unlike
  // run()'s, these contexts own their A and output BOs, so jobs of one shape can be in flight
  // together without completing each other (job.h, the rule).
  Result<std::shared_ptr<Context>> acquire(WeightsRef w, int64_t m, const RunOptions& options,
                                           RunStats& stats);
  // Drops the cached contexts that reference `w` (call before destroying it).
  void forget(const ResidentWeights& w);
  // Plans the contexts built from now on with `chooser` (empty: plan_call).
  void set_plan_chooser(PlanChooser chooser) { chooser_ = std::move(chooser); }

  // The bound: the clock drops contexts not found since it last passed them while the BOs of
  // all exceed it (the context a call is about to use is kept, even alone over the bound). The
  // shared sets count against it: the contexts get what they leave (rebound).
  void set_context_capacity(size_t bytes) {
    capacity_ = bytes;
    rebound();
  }
  struct CacheStats {
    size_t contexts = 0, bytes = 0, capacity = 0;
    uint64_t evictions = 0;
  };
  // bytes: the contexts' own BOs and the shared sets alive.
  CacheStats cache_stats() const;

 private:
  // What a cached context is for: 32 bytes, so that the cache's slot (the key, the context's
  // shared_ptr, its reference bit) is one cache line and a hit reads nothing else
  // (driver/common/byte_lru.h; docs/library.md "What grows with the model's size").
  struct Key {
    uint64_t weights = 0;  // ResidentWeights::id
    int64_t m = 0;
    int64_t mc_cap = 0;
    uint32_t core_mask = 0;
    bool fp16_out = false;
    bool shared = false;  // A and output BOs shared by geometry (run()) or the context's own
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    size_t operator()(const Key& k) const noexcept;
  };
  // The cache's own entry: run() uses it in place (nothing is built or evicted until it returns),
  // acquire() copies it. No copy on run()'s path: a copy writes the count of the context's
  // own control block, one more line per weight and call.
  Result<std::shared_ptr<Context>*> context_for(WeightsRef w, int64_t m, const RunOptions& options,
                                                bool shared, bool* built);
  // run()'s context from the holder's memo (ContextMemo), or null when it does not prove it.
  const Context* recall(const ContextMemo& memo, int64_t m, const RunOptions& options) const;
  void remember(ContextMemo& memo, const Context& ctx, int64_t m, const RunOptions& options) const;
  // The call's bits of a memo (core mask, C type, a flag so never 0), or 0 when its key has
  // more than they hold (a row cap, a mask past the bits): such a call never remembers.
  static uintptr_t memo_bits(const RunOptions& options);
  // The set of A and output BOs the blocking calls' contexts of `geometry` share (made when
  // none is alive): it lives while a context holds it.
  Result<std::shared_ptr<IoBuffers>> shared_io(const IoGeometry& geometry);
  size_t shared_bytes() const;  // of the shared sets alive
  void rebound();               // the contexts' bound: capacity_ less shared_bytes()

  driver::Kmd& kmd_;
  using ContextCache = ByteLru<Key, std::shared_ptr<Context>, KeyHash>;
  static_assert(ContextCache::slot_bytes() == 64, "a context's cache slot is one line");
  ContextCache contexts_;  // grouped by weights id
  std::vector<std::pair<IoGeometry, std::weak_ptr<IoBuffers>>> shared_io_;  // a few shapes: a list
  size_t capacity_;  // the bound of the contexts and the shared sets together
  PlanChooser chooser_;
};

}  // namespace ork::matmul
