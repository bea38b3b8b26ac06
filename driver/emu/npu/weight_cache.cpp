// The prepared-weight cache (weight_cache.h): an LRU list under one mutex.
#include "driver/emu/npu/weight_cache.h"

#include <algorithm>

#include "driver/common/env.h"

namespace ork::emu {

std::shared_ptr<const PreparedInt8> WeightCache::find(const WeightKey& key) {
  std::lock_guard lock(mutex_);
  auto it = std::find_if(lru_.begin(), lru_.end(), [&](const Entry& e) { return e.key == key; });
  if (it == lru_.end()) {
    ++misses_;
    return nullptr;
  }
  ++hits_;
  lru_.splice(lru_.begin(), lru_, it);
  return it->prepared;
}

void WeightCache::insert(const WeightKey& key, std::shared_ptr<const PreparedInt8> prepared) {
  std::lock_guard lock(mutex_);
  // Entries of the BO's older generations can never hit again: drop them now.
  std::erase_if(lru_, [&](const Entry& e) {
    const bool stale = e.key.serial == key.serial && e.key.generation != key.generation;
    if (stale) bytes_ -= e.prepared->bytes();
    return stale;
  });
  bytes_ += prepared->bytes();
  lru_.push_front({key, std::move(prepared)});
  evict_locked();
}

void WeightCache::forget(uint64_t serial) {
  std::lock_guard lock(mutex_);
  std::erase_if(lru_, [&](const Entry& e) {
    if (e.key.serial == serial) bytes_ -= e.prepared->bytes();
    return e.key.serial == serial;
  });
}

void WeightCache::set_capacity(size_t bytes) {
  std::lock_guard lock(mutex_);
  capacity_ = bytes;
  evict_locked();
}

WeightCache::Stats WeightCache::stats() const {
  std::lock_guard lock(mutex_);
  return {hits_, misses_, lru_.size(), bytes_};
}

void WeightCache::evict_locked() {
  while (bytes_ > capacity_ && !lru_.empty()) {  // an entry bigger than the cap goes at once
    bytes_ -= lru_.back().prepared->bytes();
    lru_.pop_back();
  }
}

Result<bool> weight_cache_from_env() { return env_choice("ORK_EMU_WEIGHT_CACHE", "off", "on", true); }

WeightCache& weight_cache() {
  // Never destroyed: DeviceMemory destructors at exit may still call forget().
  static auto* cache = new WeightCache;
  return *cache;
}

}  // namespace ork::emu
