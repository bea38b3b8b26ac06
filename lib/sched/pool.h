// The buffer pool: places buffers at real offsets in one contiguous memory (LRAM in
// Torq; in libork, the NPU memory streamed weights land in). Two-ended first fit: buffers
// under `small_limit_bytes` (8 KiB) go bottom-up, larger ones top-down, so small buffers
// do not fragment the space the large ones need (Torq's Pool, docs/sched.md). Sizes round up to
// `alignment_bytes` (8-byte words, as Torq's Pool); `reserve_bytes` at
// the top are never handed out (Torq keeps 1,280 B; our default is 0, the stream's
// "memory" line is taken as usable bytes).
//
// Pure bookkeeping, no device: a later NPU-memory user maps [0, capacity) onto a BO.
// Holes and blocks are sorted vectors, not std::map: first fit scans the holes anyway, a
// scheduler's pool holds tens of blocks, and a tree node per block made malloc and
// rebalancing a fifth of a 1M-op schedule (docs/sched.md "Speed at 1M ops").
#pragma once

#include <cstdint>
#include <vector>

#include "driver/common/result.h"

namespace ork::sched {

struct PoolConfig {
  int64_t capacity_bytes = 0;
  int64_t alignment_bytes = 8;        // a power of two
  int64_t small_limit_bytes = 8192;   // below: bottom-up; at or above: top-down
  int64_t reserve_bytes = 0;          // kept free at the top of the space
};

class Pool {
 public:
  // Checks the configuration (alignment a power of two, reserve < capacity, ...).
  static Result<Pool> create(const PoolConfig& config);

  // Places `bytes` (rounded up to the alignment); the offset, or -ENOMEM naming the size
  // and the largest hole when no hole holds it.
  Result<int64_t> allocate(int64_t bytes);
  // The same placement, -1 when no hole holds it (or bytes < 1): for callers that try often
  // and expect refusals (listSchedule's attempts), with no error message built.
  int64_t try_allocate(int64_t bytes);
  // Returns the block at `offset` to the free space, merging neighbouring holes.
  Status release(int64_t offset);

  int64_t usable_bytes() const { return usable_; }
  int64_t used_bytes() const { return used_; }
  int64_t free_bytes() const { return usable_ - used_; }
  int64_t largest_hole() const;
  size_t block_count() const { return blocks_.size(); }
  int64_t block_bytes(int64_t offset) const;  // 0 when no block starts there
  int64_t rounded(int64_t bytes) const;        // the size a request really takes
  const PoolConfig& config() const { return config_; }

 private:
  explicit Pool(const PoolConfig& config);
  struct Range {
    int64_t offset, size;
  };
  int64_t take_bottom_up(int64_t size);
  int64_t take_top_down(int64_t size);
  std::vector<Range>::const_iterator find_block(int64_t offset) const;

  PoolConfig config_;
  int64_t usable_ = 0;
  int64_t used_ = 0;
  std::vector<Range> holes_;   // by offset, never adjacent
  std::vector<Range> blocks_;  // by offset
};

}  // namespace ork::sched
