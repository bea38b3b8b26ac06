#include "lib/io/slot_buffer.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <utility>

#include <fmt/format.h>

#include "driver/common/errno_text.h"

namespace ork::io {

Result<SlotBuffer> SlotBuffer::allocate(size_t size_bytes) {
  if (size_bytes == 0) return make_error(-EINVAL, "slot size is 0 bytes: must be >= 1");
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  const size_t size = (size_bytes + page - 1) / page * page;
  const size_t map_bytes = size + kAlignBytes;
  void* map = ::mmap(nullptr, map_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                     -1, 0);
  if (map == MAP_FAILED) {
    const int err = errno;
    return make_error(-ENOMEM, fmt::format("slot of {} bytes: mmap failed: {}", size_bytes, errno_text(err)));
  }
  const uintptr_t base = reinterpret_cast<uintptr_t>(map);
  const uintptr_t aligned = (base + kAlignBytes - 1) & ~(uintptr_t{kAlignBytes} - 1);
  auto* data = reinterpret_cast<std::byte*>(aligned);
  ::madvise(data, size, MADV_HUGEPAGE);  // a hint: failure only costs TLB misses
  // Touch every page once now, so no read into the slot ever faults.
  for (size_t i = 0; i < size; i += page) data[i] = std::byte{0};
  SlotBuffer slot;
  slot.map_ = map;
  slot.map_bytes_ = map_bytes;
  slot.data_ = data;
  slot.size_ = size;
  return slot;
}

SlotBuffer::SlotBuffer(SlotBuffer&& other) noexcept { *this = std::move(other); }

SlotBuffer& SlotBuffer::operator=(SlotBuffer&& other) noexcept {
  if (this != &other) {
    release();
    map_ = std::exchange(other.map_, nullptr);
    map_bytes_ = std::exchange(other.map_bytes_, 0);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

SlotBuffer::~SlotBuffer() { release(); }

void SlotBuffer::release() {
  if (map_ != nullptr) ::munmap(map_, map_bytes_);
  map_ = nullptr;
  data_ = nullptr;
  size_ = 0;
}

}  // namespace ork::io
