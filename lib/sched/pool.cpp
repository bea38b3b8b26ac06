#include "lib/sched/pool.h"

#include <algorithm>
#include <iterator>
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
  if (usable_ > 0) holes_.push_back({0, usable_});
}

int64_t Pool::rounded(int64_t bytes) const {
  const int64_t align = config_.alignment_bytes;
  return (bytes + align - 1) & ~(align - 1);
}

int64_t Pool::largest_hole() const {
  int64_t best = 0;
  for (const Range& h : holes_) best = std::max(best, h.size);
  return best;
}

std::vector<Pool::Range>::const_iterator Pool::find_block(int64_t offset) const {
  auto it = std::lower_bound(blocks_.begin(), blocks_.end(), offset,
                             [](const Range& r, int64_t at) { return r.offset < at; });
  return it != blocks_.end() && it->offset == offset ? it : blocks_.end();
}

int64_t Pool::block_bytes(int64_t offset) const {
  auto it = find_block(offset);
  return it == blocks_.end() ? 0 : it->size;
}

// Lowest hole that holds `size`; the block takes the hole's low end.
int64_t Pool::take_bottom_up(int64_t size) {
  for (auto it = holes_.begin(); it != holes_.end(); ++it) {
    if (it->size < size) continue;
    const int64_t offset = it->offset;
    it->offset += size;  // the rest keeps its place in the offset order
    it->size -= size;
    if (it->size == 0) holes_.erase(it);
    return offset;
  }
  return -1;
}

// Highest hole that holds `size`; the block takes the hole's high end.
int64_t Pool::take_top_down(int64_t size) {
  for (auto it = holes_.rbegin(); it != holes_.rend(); ++it) {
    if (it->size < size) continue;
    it->size -= size;
    const int64_t offset = it->offset + it->size;
    if (it->size == 0) holes_.erase(std::next(it).base());
    return offset;
  }
  return -1;
}

int64_t Pool::try_allocate(int64_t bytes) {
  if (bytes <= 0) return -1;  // allocate() names it
  const int64_t size = rounded(bytes);
  const int64_t offset =
      bytes < config_.small_limit_bytes ? take_bottom_up(size) : take_top_down(size);
  if (offset < 0) return -1;
  auto at = std::lower_bound(blocks_.begin(), blocks_.end(), offset,
                             [](const Range& r, int64_t o) { return r.offset < o; });
  blocks_.insert(at, {offset, size});
  used_ += size;
  return offset;
}

Result<int64_t> Pool::allocate(int64_t bytes) {
  if (bytes <= 0) return make_error(-EINVAL, "pool allocation of " + std::to_string(bytes) + " bytes");
  const int64_t offset = try_allocate(bytes);
  if (offset < 0)
    return make_error(-ENOMEM, "no hole holds " + std::to_string(rounded(bytes)) + " bytes (free " +
                                   std::to_string(free_bytes()) + ", largest hole " +
                                   std::to_string(largest_hole()) + ")");
  return offset;
}

Status Pool::release(int64_t offset) {
  auto block = find_block(offset);
  if (block == blocks_.end())
    return make_error(-EINVAL, "pool release of offset " + std::to_string(offset) + ": no block there");
  int64_t begin = offset;
  int64_t end = offset + block->size;
  used_ -= block->size;
  blocks_.erase(block);
  auto next = std::lower_bound(holes_.begin(), holes_.end(), begin,
                               [](const Range& r, int64_t at) { return r.offset < at; });
  const bool above = next != holes_.end() && next->offset == end;
  const bool below = next != holes_.begin() && std::prev(next)->offset + std::prev(next)->size == begin;
  if (above && below) {  // the block closes the gap between two holes: one hole
    std::prev(next)->size += (end - begin) + next->size;
    holes_.erase(next);
  } else if (below) {
    std::prev(next)->size += end - begin;
  } else if (above) {
    next->offset = begin;
    next->size += end - begin;
  } else {
    holes_.insert(next, {begin, end - begin});
  }
  return {};
}

}  // namespace ork::sched
