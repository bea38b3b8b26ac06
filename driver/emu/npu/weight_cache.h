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
#include <functional>
#include <memory>
#include <mutex>

#include "driver/common/byte_lru.h"
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

struct WeightKeyHash {
  size_t operator()(const WeightKey& k) const noexcept {
    uint64_t h = k.serial * 0x9e3779b97f4a7c15ull;
    for (uint64_t v : {k.generation, k.offset, uint64_t{k.kt} << 32 | k.cols, uint64_t(k.type),
                       reinterpret_cast<uint64_t>(k.engine)})
      h = (h ^ v) * 0x100000001b3ull + (h >> 29);
    return static_cast<size_t>(h);
  }
};

// Lookup, insert and eviction are O(1) (driver/common/byte_lru.h); forget() and the drop of
// a BO's older generations touch only that BO's entries.
class WeightCache {
 public:
  // A quarter of physical memory (6 GiB on a 24 GiB machine): a whole model's prepared
  // weights stay (a 1.5B int8 model prepares ~1.4 GB), and the emulator's host never
  // swaps. 256 MiB when physical memory is unknown. ORK_EMU_WEIGHT_CACHE_BYTES overrides.
  static size_t default_capacity_bytes();
  explicit WeightCache(size_t capacity_bytes = default_capacity_bytes());

  std::shared_ptr<const PreparedInt8> find(const WeightKey& key);
  void insert(const WeightKey& key, std::shared_ptr<const PreparedInt8> prepared);
  void forget(uint64_t serial);  // the BO is gone: its entries can never hit again
  void set_capacity(size_t bytes);

  struct Stats {
    uint64_t hits = 0, misses = 0, evictions = 0;
    size_t entries = 0, bytes = 0, capacity = 0;
  };
  Stats stats() const;

 private:
  mutable std::mutex mutex_;
  ByteLru<WeightKey, std::shared_ptr<const PreparedInt8>, WeightKeyHash> lru_;  // grouped by BO serial
  uint64_t hits_ = 0, misses_ = 0;
};

// Each emulated device owns one (the fake kernel's KernelState): its DeviceMemory forgets a
// BO's entries when the BO goes, and lib/api reads its statistics per device.

// ORK_EMU_WEIGHT_CACHE: unset, "" or "on" -> true; "off" -> false (every task gathers and
// prepares its weights again: the emulator's speed without the cache, same results).
// Anything else: -EINVAL naming the value. lib/api reads it where it creates the kernel.
Result<bool> weight_cache_from_env();
// ORK_EMU_WEIGHT_CACHE_BYTES: the cache's bound (bytes, K/M/G suffixes; env.h env_bytes),
// unset -> WeightCache::default_capacity_bytes(). lib/api applies it when it opens an emulator.
Result<uint64_t> weight_cache_bytes_from_env();

}  // namespace ork::emu
