// DeviceMemory: the emulated NPU's IOVA space. Every DMA of the model goes through span(),
// which only answers for an access wholly inside one mapped BO (architecture.md section 3:
// "an access outside is a DMA error interrupt, never a host access").
#include "driver/emu/npu/memory.h"

#include <cstring>

namespace ork::emu {

void DeviceMemory::map(uint64_t iova, uint8_t* data, size_t size) {
  ranges_[iova] = Range{data, size};
}

void DeviceMemory::unmap(uint64_t iova) { ranges_.erase(iova); }

uint8_t* DeviceMemory::span(uint64_t iova, size_t n) const {
  auto it = ranges_.upper_bound(iova);  // first BO starting after iova
  if (it == ranges_.begin()) return nullptr;
  --it;                                  // the BO starting at or before iova
  const uint64_t offset = iova - it->first;
  const Range& r = it->second;
  // Written so that no sum can overflow: offset <= size, then n <= size - offset.
  if (offset > r.size || n > r.size - offset) return nullptr;
  if (n == 0 && offset == r.size) return nullptr;  // one past the end is not inside
  return r.data + offset;
}

bool DeviceMemory::read(uint64_t iova, void* dst, size_t n) const {
  const uint8_t* p = span(iova, n);
  if (p == nullptr) return false;
  if (n != 0) std::memcpy(dst, p, n);
  return true;
}

bool DeviceMemory::write(uint64_t iova, const void* src, size_t n) const {
  uint8_t* p = span(iova, n);
  if (p == nullptr) return false;
  if (n != 0) std::memcpy(p, src, n);
  return true;
}

}  // namespace ork::emu
