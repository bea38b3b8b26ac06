// The prepared-weight cache (weight_cache.h): a byte-bounded LRU under one mutex.
#include "driver/emu/npu/weight_cache.h"

#include <algorithm>

#include "driver/common/env.h"

namespace ork::emu {

size_t WeightCache::default_capacity_bytes() {
  const uint64_t phys = physical_memory_bytes();
  return phys ? static_cast<size_t>(phys / 4) : size_t{256} << 20;
}

WeightCache::WeightCache(size_t capacity_bytes) : lru_(capacity_bytes) {}

std::shared_ptr<const PreparedInt8> WeightCache::find(const WeightKey& key) {
  std::lock_guard lock(mutex_);
  auto* hit = lru_.find(key);
  if (hit == nullptr) {
    ++misses_;
    return nullptr;
  }
  ++hits_;
  return *hit;
}

void WeightCache::insert(const WeightKey& key, std::shared_ptr<const PreparedInt8> prepared) {
  std::lock_guard lock(mutex_);
  // Entries of the BO's older generations can never hit again: drop them now.
  lru_.erase_group_if(key.serial, [&](const WeightKey& k, const auto&) { return k.generation != key.generation; });
  const size_t bytes = prepared->bytes();
  lru_.insert(key, key.serial, std::move(prepared), bytes, /*keep_new=*/false);  // bigger than the bound: not kept
}

void WeightCache::forget(uint64_t serial) {
  std::lock_guard lock(mutex_);
  lru_.erase_group(serial);
}

void WeightCache::set_capacity(size_t bytes) {
  std::lock_guard lock(mutex_);
  lru_.set_capacity(bytes);
}

WeightCache::Stats WeightCache::stats() const {
  std::lock_guard lock(mutex_);
  return {hits_, misses_, lru_.evictions(), lru_.size(), lru_.bytes(), lru_.capacity()};
}

Result<bool> weight_cache_from_env() { return env_choice("ORK_EMU_WEIGHT_CACHE", "off", "on", true); }

Result<uint64_t> weight_cache_bytes_from_env() {
  return env_bytes("ORK_EMU_WEIGHT_CACHE_BYTES", WeightCache::default_capacity_bytes());
}

}  // namespace ork::emu
