#include "driver/emu/kernel/iova_allocator.h"

#include <algorithm>

namespace ork::emu {

IovaAllocator::IovaAllocator(uint64_t low, uint64_t high, Direction direction)
    : low_(low), high_(high), direction_(direction) {}

std::optional<uint64_t> IovaAllocator::alloc(uint64_t bytes) {
  if (bytes == 0 || bytes > high_ - low_) return std::nullopt;
  auto iova = direction_ == Direction::top_down ? alloc_top_down(bytes) : alloc_bottom_up(bytes);
  if (iova) used_.emplace(*iova, bytes);
  return iova;
}

void IovaAllocator::free(uint64_t iova) { used_.erase(iova); }

uint64_t IovaAllocator::used_bytes() const {
  uint64_t n = 0;
  for (const auto& [start, size] : used_) n += size;
  return n;
}

uint64_t IovaAllocator::largest_gap() const {
  uint64_t best = 0, gap_start = low_;
  for (const auto& [start, size] : used_) {
    best = std::max(best, start - gap_start);
    gap_start = start + size;
  }
  return std::max(best, high_ - gap_start);
}

// The highest gap that fits: walk the used ranges from the top.
std::optional<uint64_t> IovaAllocator::alloc_top_down(uint64_t bytes) {
  uint64_t gap_end = high_;
  for (auto it = used_.rbegin(); it != used_.rend(); ++it) {
    uint64_t gap_start = it->first + it->second;
    if (gap_end - gap_start >= bytes) return gap_end - bytes;
    gap_end = it->first;
  }
  if (gap_end - low_ >= bytes) return gap_end - bytes;
  return std::nullopt;
}

// The lowest gap that fits.
std::optional<uint64_t> IovaAllocator::alloc_bottom_up(uint64_t bytes) {
  uint64_t gap_start = low_;
  for (const auto& [start, size] : used_) {
    if (start - gap_start >= bytes) return gap_start;
    gap_start = start + size;
  }
  if (high_ - gap_start >= bytes) return gap_start;
  return std::nullopt;
}

}  // namespace ork::emu
