// A slot: one layer's resident buffer. Allocated once, aligned, touched once, then reused
// for every layer that passes through it. A fresh buffer per layer would cost a page fault
// per 4 KiB, and first-touch faults run at 0.27 GB/s on the reference VM against ~1.2 GB/s
// of disk (docs/io.md, measured on the reference VM), so they would dwarf the I/O.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "driver/common/result.h"

namespace ork::io {

class SlotBuffer {
 public:
  // 2 MiB alignment: every O_DIRECT memory alignment divides it, and it lets the kernel
  // back the slot with transparent huge pages (MADV_HUGEPAGE; THP is `madvise` here).
  static constexpr size_t kAlignBytes = size_t{2} << 20;

  static Result<SlotBuffer> allocate(size_t size_bytes);

  SlotBuffer() = default;
  SlotBuffer(SlotBuffer&& other) noexcept;
  SlotBuffer& operator=(SlotBuffer&& other) noexcept;
  SlotBuffer(const SlotBuffer&) = delete;
  SlotBuffer& operator=(const SlotBuffer&) = delete;
  ~SlotBuffer();

  std::span<std::byte> bytes() { return {data_, size_}; }
  std::span<const std::byte> bytes() const { return {data_, size_}; }
  std::byte* data() { return data_; }
  size_t size() const { return size_; }

 private:
  void release();
  void* map_ = nullptr;     // the whole anonymous mapping (over-allocated for alignment)
  size_t map_bytes_ = 0;
  std::byte* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace ork::io
