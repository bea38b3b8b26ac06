#include "lib/sched/pool.h"

#include <algorithm>
#include <string>

namespace ork::sched {

Result<Pool> Pool::create(const PoolConfig& config) {
  const int64_t align = config.alignment_bytes;
  if (align <= 0 || (align & (align - 1)) != 0)
    return make_error(-EINVAL, "pool alignment " + std::to_string(align) + " is not a power of two");
  if (config.capacity_bytes <= 0) return make_error(-EINVAL, "pool capacity must be >= 1 byte");
  if (config.reserve_bytes < 0 || config.reserve_bytes >= config.capacity_bytes)
    return make_error(-EINVAL, "pool reserve " + std::to_string(config.reserve_bytes) +
                                   " must be >= 0 and below the capacity");
  if (config.small_limit_bytes < 0) return make_error(-EINVAL, "pool small limit must be >= 0");
  return Pool(config);
}

Pool::Pool(const PoolConfig& config) : config_(config) {
  // Usable space ends on an alignment boundary so every hole edge stays aligned.
  usable_ = (config.capacity_bytes - config.reserve_bytes) & ~(config.alignment_bytes - 1);
  if (usable_ > 0) holes_.emplace(0, usable_);
}

int64_t Pool::rounded(int64_t bytes) const {
  const int64_t align = config_.alignment_bytes;
  return (bytes + align - 1) & ~(align - 1);
}

int64_t Pool::largest_hole() const {
  int64_t best = 0;
  for (const auto& [offset, size] : holes_) best = std::max(best, size);
  return best;
}

int64_t Pool::block_bytes(int64_t offset) const {
  auto it = blocks_.find(offset);
  return it == blocks_.end() ? 0 : it->second;
}

// Lowest hole that holds `size`; the block takes the hole's low end.
int64_t Pool::take_bottom_up(int64_t size) {
  for (auto it = holes_.begin(); it != holes_.end(); ++it) {
    if (it->second < size) continue;
    const int64_t offset = it->first;
    const int64_t rest = it->second - size;
    holes_.erase(it);
    if (rest > 0) holes_.emplace(offset + size, rest);
    return offset;
  }
  return -1;
}

// Highest hole that holds `size`; the block takes the hole's high end.
int64_t Pool::take_top_down(int64_t size) {
  for (auto it = holes_.rbegin(); it != holes_.rend(); ++it) {
    if (it->second < size) continue;
    const int64_t hole = it->first;
    const int64_t rest = it->second - size;
    if (rest > 0) {
      it->second = rest;
    } else {
      holes_.erase(hole);
    }
    return hole + rest;
  }
  return -1;
}

Result<int64_t> Pool::allocate(int64_t bytes) {
  if (bytes <= 0) return make_error(-EINVAL, "pool allocation of " + std::to_string(bytes) + " bytes");
  const int64_t size = rounded(bytes);
  const int64_t offset =
      bytes < config_.small_limit_bytes ? take_bottom_up(size) : take_top_down(size);
  if (offset < 0)
    return make_error(-ENOMEM, "no hole holds " + std::to_string(size) + " bytes (free " +
                                   std::to_string(free_bytes()) + ", largest hole " +
                                   std::to_string(largest_hole()) + ")");
  blocks_.emplace(offset, size);
  used_ += size;
  return offset;
}

Status Pool::release(int64_t offset) {
  auto block = blocks_.find(offset);
  if (block == blocks_.end())
    return make_error(-EINVAL, "pool release of offset " + std::to_string(offset) + ": no block there");
  int64_t begin = offset;
  int64_t end = offset + block->second;
  used_ -= block->second;
  blocks_.erase(block);
  auto next = holes_.lower_bound(begin);
  if (next != holes_.end() && next->first == end) {  // merge with the hole above
    end += next->second;
    next = holes_.erase(next);
  }
  if (next != holes_.begin()) {  // merge with the hole below
    auto prev = std::prev(next);
    if (prev->first + prev->second == begin) {
      begin = prev->first;
      holes_.erase(prev);
    }
  }
  holes_.emplace(begin, end - begin);
  return {};
}

}  // namespace ork::sched
