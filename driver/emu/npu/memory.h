// The emulated NPU's view of memory: BOs mapped at IOVAs below 4 GiB. Every access the
// model makes goes through here and is bounds-checked against one BO; an access that is
// not wholly inside a BO fails (the hardware's DMA error), never touching host memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>

namespace ork::emu {

class Int8Engine;   // core.h
class WeightCache;  // weight_cache.h

class DeviceMemory {
 public:
  // `weights`: the device's cache of weights prepared from this memory (nullptr: none, every
  // task prepares its own); `engine`: the device's integer multiply (nullptr: the built-in
  // one). Both belong to the device that owns this memory (the fake kernel), never to the
  // process, so two devices share no hidden state; both must outlive this object.
  explicit DeviceMemory(WeightCache* weights = nullptr, const Int8Engine* engine = nullptr);
  DeviceMemory(const DeviceMemory&) = delete;
  DeviceMemory& operator=(const DeviceMemory&) = delete;
  ~DeviceMemory();

  // Registers [iova, iova+size) backed by host storage `data` (owned by the caller).
  // `tracked`: the storage changes only through write(), span_for_write() and note_write()
  // (the fake kernel's cache model: the NPU-side copy of a cached BO changes on a sync or
  // an NPU write, nothing else). Only tracked BOs have an origin() for caches to key on.
  void map(uint64_t iova, uint8_t* data, size_t size, bool tracked = false);
  void unmap(uint64_t iova);
  // Host pointer to [iova, iova+n) when wholly inside one mapped BO, else nullptr.
  uint8_t* span(uint64_t iova, size_t n) const;
  // The same for a DMA that writes: the BO's contents count as changed.
  uint8_t* span_for_write(uint64_t iova, size_t n) const;
  bool read(uint64_t iova, void* dst, size_t n) const;
  bool write(uint64_t iova, const void* src, size_t n) const;
  // The BO holding iova was written by someone other than this class (a cache sync).
  void note_write(uint64_t iova) const;

  // What [iova, iova+n) holds, as a key for data derived from it (the CORE's prepared
  // weights): the BO's serial number (unique for the process, never reused), how often it
  // has been written, and the offset. nullopt for untracked BOs and bad ranges.
  struct Origin {
    uint64_t serial = 0, generation = 0, offset = 0;
  };
  std::optional<Origin> origin(uint64_t iova, size_t n) const;

  WeightCache* weight_cache() const { return weights_; }
  const Int8Engine& int8_engine() const;

 private:
  struct Range {
    uint8_t* data;
    size_t size;
    uint64_t serial;
    bool tracked;
    mutable uint64_t generation;  // bumped by every write, also through a const view
  };
  const Range* find(uint64_t iova, size_t n, uint64_t* offset) const;
  void forget(const Range& r) const;
  std::map<uint64_t, Range> ranges_;  // keyed by start IOVA
  WeightCache* weights_;
  const Int8Engine* engine_;
};

}  // namespace ork::emu
