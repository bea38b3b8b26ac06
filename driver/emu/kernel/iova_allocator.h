// IOVA ranges for BOs: first fit, top-down like the vendor driver (IOVAs handed out downward
// from 0xffffe000, ORK trace) or bottom-up like rocket's drm_mm over the IOMMU aperture.
#pragma once

#include <cstdint>
#include <map>
#include <optional>

namespace ork::emu {

class IovaAllocator {
 public:
  enum class Direction { top_down, bottom_up };
  // Hands out page-aligned ranges inside [low, high).
  IovaAllocator(uint64_t low, uint64_t high, Direction direction);
  // `bytes` must be a positive multiple of the 4 KiB page; nullopt when no gap fits.
  std::optional<uint64_t> alloc(uint64_t bytes);
  void free(uint64_t iova);
  size_t ranges() const { return used_.size(); }
  uint64_t window_bytes() const { return high_ - low_; }
  uint64_t used_bytes() const;
  uint64_t largest_gap() const;  // the biggest alloc() that can succeed now (bytes)

 private:
  std::optional<uint64_t> alloc_top_down(uint64_t bytes);
  std::optional<uint64_t> alloc_bottom_up(uint64_t bytes);

  uint64_t low_;
  uint64_t high_;
  Direction direction_;
  std::map<uint64_t, uint64_t> used_;  // start -> bytes
};

}  // namespace ork::emu
