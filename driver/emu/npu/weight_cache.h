// Prepared weights kept across tasks and submits. The CORE multiplies one weight block by
// many feature tiles (every M-tile of a chain, every call of a resident-weight matmul);
// gathering the block out of the NPU layout and preparing it for the multiply engine cost
// as much as the multiply itself (docs/emulator.md "The integer engine and prepared weights"). An entry is keyed
// by what the block was made from - the BO's serial and write generation (memory.h
// Origin), the offset, the task's K and columns, the type and the engine - so a write to
// the BO (a sync, an NPU output) or a new BO at the same IOVA can never hit a stale entry.
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>

#include "driver/common/result.h"
#include "driver/emu/npu/core.h"
#include "driver/emu/npu/task_config.h"

namespace ork::emu {

struct WeightKey {
  uint64_t serial = 0, generation = 0, offset = 0;
  uint32_t kt = 0, cols = 0;
  NpuType type = NpuType::int8;
  const Int8Engine* engine = nullptr;
  bool operator==(const WeightKey&) const = default;
};

class WeightCache {
 public:
  // 256 MiB: the prepared weights of a 7B layer's largest matmul (4096 x 11008 int8, 43 MiB)
  // several times over, small next to this machine's 24 GiB.
  static constexpr size_t kDefaultCapacityBytes = size_t{256} << 20;

  std::shared_ptr<const PreparedInt8> find(const WeightKey& key);
  void insert(const WeightKey& key, std::shared_ptr<const PreparedInt8> prepared);
  void forget(uint64_t serial);  // the BO is gone: its entries can never hit again
  void set_capacity(size_t bytes);

  struct Stats {
    uint64_t hits = 0, misses = 0;
    size_t entries = 0, bytes = 0;
  };
  Stats stats() const;

 private:
  struct Entry {
    WeightKey key;
    std::shared_ptr<const PreparedInt8> prepared;
  };
  void evict_locked();
  mutable std::mutex mutex_;
  std::list<Entry> lru_;  // most recently used first; tens of entries, so a scan is cheap
  size_t bytes_ = 0, capacity_ = kDefaultCapacityBytes;
  uint64_t hits_ = 0, misses_ = 0;
};

WeightCache& weight_cache();  // process-wide: every fake kernel's DeviceMemory shares it

// ORK_EMU_WEIGHT_CACHE: unset, "" or "on" -> true; "off" -> false (every task gathers and
// prepares its weights again: the emulator's speed without the cache, same results).
// Anything else: -EINVAL naming the value. lib/api reads it where it creates the kernel.
Result<bool> weight_cache_from_env();

}  // namespace ork::emu
