// The emulated NPU's view of memory: BOs mapped at IOVAs below 4 GiB. Every access the
// model makes goes through here and is bounds-checked against one BO; an access that is
// not wholly inside a BO fails (the hardware's DMA error), never touching host memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>

namespace ork::emu {

class DeviceMemory {
 public:
  // Registers [iova, iova+size) backed by host storage `data` (owned by the caller).
  void map(uint64_t iova, uint8_t* data, size_t size);
  void unmap(uint64_t iova);
  // Host pointer to [iova, iova+n) when wholly inside one mapped BO, else nullptr.
  uint8_t* span(uint64_t iova, size_t n) const;
  bool read(uint64_t iova, void* dst, size_t n) const;
  bool write(uint64_t iova, const void* src, size_t n) const;

 private:
  struct Range {
    uint8_t* data;
    size_t size;
  };
  std::map<uint64_t, Range> ranges_;  // keyed by start IOVA
};

}  // namespace ork::emu
