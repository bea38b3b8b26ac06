// The predictive-prefetch layer loader (docs/io.md, "Facts and sources") with io_uring as its
// engine. A ring of slots holds layers; load(L) returns layer L's bytes and waits only when
// L is not ready yet (a miss); prefetch(L) fills a free slot in the background. Four
// sources, one interface, chosen at run time, all returning identical bytes:
//
//   source   slots  engine                        thread
//   kSync    1      pread                         the caller's (strict minimum memory)
//   kWorker  N      pread                         one worker (the design's default)
//   kUring   N      io_uring, chunks in flight    one I/O thread owning the ring
//   kMmap    1      memcpy out of a mapping       the caller's (the design's third backend)
//
// Fallbacks (each logged and listed in stats().fallbacks): io_uring refused (EPERM,
// ENOSYS) -> pread worker; O_DIRECT refused (EINVAL) -> buffered; buffer registration
// refused (ENOMEM, EFAULT) -> plain reads. The environment can force each:
// ORK_IO_NO_URING=1, ORK_IO_NO_DIRECT=1, ORK_IO_NO_REGISTER=1.
//
// The reads are the tensor reader's (tensor_reader.h, the one reader the product runs): its
// I/O thread fills the slots (kWorker, kUring), or without a thread its reads run on the
// caller's (kSync, kMmap). What the loader adds is the ring: which slot holds which layer, a
// miss jumping the reader's queue, prefetches into free slots only, LRU victims.
//
// Threading: load() and prefetch() are called from one thread (the compute thread).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "driver/common/result.h"
#include "lib/io/engine.h"
#include "lib/io/file_os.h"
#include "lib/io/read_plan.h"
#include "lib/io/slot_buffer.h"
#include "lib/io/stream_file.h"
#include "lib/io/tensor_reader.h"

namespace ork::io {

enum class SourceKind { kSync, kWorker, kUring, kMmap };
const char* source_name(SourceKind kind);
Result<SourceKind> parse_source(const std::string& name);  // "sync", "worker", "uring", "mmap"

enum class DirectMode { kAuto, kOn, kOff };  // kAuto: O_DIRECT for kUring only

struct LoaderOptions {
  SourceKind source = SourceKind::kUring;
  size_t n_slots = 2;           // kWorker/kUring ring size; kSync/kMmap always use 1
  size_t prefetch_depth = 1;    // layers loaded ahead after each load(); <= n_slots - 1
  bool auto_prefetch = true;    // load(L) prefetches L+1 .. L+prefetch_depth
  bool wrap = true;             // after the last layer comes the first (the next token)
  uint64_t chunk_bytes = uint64_t{2} << 20;  // 1-4 MiB per read (docs/io.md facts)
  unsigned queue_depth = 8;     // io_uring reads in flight
  DirectMode direct = DirectMode::kAuto;
  bool register_buffers = true;
  uint64_t max_iovec_bytes = uint64_t{1} << 30;  // per registered iovec; the kernel's limit
  bool use_env = true;          // honour the ORK_IO_NO_* knobs
};

struct LoaderStats {
  uint64_t loads = 0;
  uint64_t hits = 0;             // load() found the layer ready: no wait
  uint64_t misses = 0;           // load() waited for I/O
  uint64_t layers_read = 0;      // slot fills completed
  uint64_t bytes_read = 0;       // layer bytes delivered into slots
  uint64_t prefetch_dropped = 0; // prefetch() found no free slot
  uint64_t io_ns = 0;            // time engines spent reading
  uint64_t wait_ns = 0;          // time load() blocked
  EngineCounters engine_counters;
  SourceKind source = SourceKind::kUring;
  EngineKind engine = EngineKind::kUring;  // what actually runs, after fallbacks
  bool async = false;            // a background thread fills slots
  bool direct = false;           // O_DIRECT in use
  bool registered_buffers = false;
  uint32_t align_bytes = 1;
  size_t n_slots = 0;
  size_t prefetch_depth = 0;
  std::vector<std::string> fallbacks;

  double hit_rate() const { return loads == 0 ? 0.0 : double(hits) / double(loads); }
};

class LayerLoader {
  struct Key {  // passkey: only open() can construct, and it can still use make_unique
    explicit Key() = default;
  };

 public:
  // layers: each layer's byte range in the file (see safetensors.h, layer_extents()).
  static Result<std::unique_ptr<LayerLoader>> open(const std::string& path,
                                                   std::vector<Extent> layers,
                                                   const LoaderOptions& options,
                                                   FileOs& os = real_file_os());
  LayerLoader(Key, FileOs& os, std::vector<Extent> layers, const LoaderOptions& options);
  ~LayerLoader();  // cancels reads in flight, drains them, joins the thread
  LayerLoader(const LayerLoader&) = delete;
  LayerLoader& operator=(const LayerLoader&) = delete;

  // Layer `layer`'s bytes, valid until the next load(). Waits only on a miss.
  Result<std::span<const std::byte>> load(size_t layer);
  // Starts filling a free slot with `layer` (no-op when it is already in a slot, or counted
  // in prefetch_dropped when no slot is free). Synchronous sources ignore it.
  Status prefetch(size_t layer);
  // The stream reorderer may change how far ahead to load; clamped to n_slots - 1.
  void set_prefetch_depth(size_t depth);

  LoaderStats stats() const;
  size_t layer_count() const { return layers_.size(); }

 private:
  // kQueued: handed to the reader, which may have started it; kLoading: the reader is
  // reading it (seen by refresh() or by a withdraw() that came too late).
  enum class SlotState { kEmpty, kQueued, kLoading, kReady, kFailed };
  struct Slot {
    SlotBuffer buffer;
    SlotState state = SlotState::kEmpty;
    size_t layer = 0;
    uint64_t tick = 0;  // last load or prefetch: LRU victim choice
    bool consumed = false;  // load() has returned it since it was filled: free to reuse
    Error error;
  };

  Status setup(const std::string& path);
  bool resolve_modes();  // env overrides applied; true: open with O_DIRECT
  Status plan_slots(const std::string& path, const StreamFile& file);
  Status start_reader(StreamFile file);
  Result<std::span<const std::byte>> load_sync(size_t layer);
  Result<std::span<const std::byte>> load_async(size_t layer, std::unique_lock<std::mutex>& lk);
  Result<int> claim_for_load(size_t layer);
  void prefetch_locked(size_t layer);
  void refresh();  // the slots handed to the reader: their state as the reader sees it
  int find_slot(size_t layer) const;
  int pick_victim(bool for_load) const;
  void queue_job(size_t slot_index, size_t layer, bool urgent);
  std::span<const std::byte> layer_bytes(size_t slot_index) const;

  FileOs& os_;
  std::vector<Extent> layers_;
  LoaderOptions options_;
  std::vector<ReadPlan> plans_;  // per layer
  std::vector<Slot> slots_;
  int current_ = -1;             // the slot load() returned last
  uint64_t tick_ = 0;
  mutable std::mutex mutex_;     // slot states and stats_ (stats() may be asked from anywhere)
  LoaderStats stats_;
  std::unique_ptr<TensorReader> reader_;  // after slots_: it goes (cancelled, joined) first
};

}  // namespace ork::io
