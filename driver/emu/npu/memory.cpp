// DeviceMemory: the emulated NPU's IOVA space. Every DMA of the model goes through span(),
// which only answers for an access wholly inside one mapped BO (docs/emulator.md:
// an access outside is a DMA error interrupt, never a host access).
#include "driver/emu/npu/memory.h"

#include <atomic>
#include <cstring>

#include "driver/emu/npu/core.h"
#include "driver/emu/npu/weight_cache.h"

namespace ork::emu {
namespace {
std::atomic<uint64_t> next_serial{1};  // process-wide: a freed BO's serial never comes back
}  // namespace

DeviceMemory::DeviceMemory(WeightCache* weights, const Int8Engine* engine) : weights_(weights), engine_(engine) {}

DeviceMemory::~DeviceMemory() {
  for (const auto& [iova, r] : ranges_) forget(r);
}

const Int8Engine& DeviceMemory::int8_engine() const { return engine_ ? *engine_ : builtin_int8_engine(); }

void DeviceMemory::forget(const Range& r) const {
  if (weights_) weights_->forget(r.serial);
}

void DeviceMemory::map(uint64_t iova, uint8_t* data, size_t size, bool tracked) {
  if (auto it = ranges_.find(iova); it != ranges_.end()) forget(it->second);
  ranges_[iova] = Range{data, size, next_serial.fetch_add(1), tracked, 0};
}

void DeviceMemory::unmap(uint64_t iova) {
  auto it = ranges_.find(iova);
  if (it == ranges_.end()) return;
  forget(it->second);
  ranges_.erase(it);
}

const DeviceMemory::Range* DeviceMemory::find(uint64_t iova, size_t n, uint64_t* offset) const {
  auto it = ranges_.upper_bound(iova);  // first BO starting after iova
  if (it == ranges_.begin()) return nullptr;
  --it;                                  // the BO starting at or before iova
  const uint64_t off = iova - it->first;
  const Range& r = it->second;
  // Written so that no sum can overflow: offset <= size, then n <= size - offset.
  if (off > r.size || n > r.size - off) return nullptr;
  if (n == 0 && off == r.size) return nullptr;  // one past the end is not inside
  *offset = off;
  return &r;
}

uint8_t* DeviceMemory::span(uint64_t iova, size_t n) const {
  uint64_t off = 0;
  const Range* r = find(iova, n, &off);
  return r ? r->data + off : nullptr;
}

uint8_t* DeviceMemory::span_for_write(uint64_t iova, size_t n) const {
  uint64_t off = 0;
  const Range* r = find(iova, n, &off);
  if (r == nullptr) return nullptr;
  ++r->generation;
  return r->data + off;
}

void DeviceMemory::note_write(uint64_t iova) const {
  uint64_t off = 0;
  if (const Range* r = find(iova, 0, &off)) ++r->generation;
}

std::optional<DeviceMemory::Origin> DeviceMemory::origin(uint64_t iova, size_t n) const {
  uint64_t off = 0;
  const Range* r = find(iova, n, &off);
  if (r == nullptr || !r->tracked) return std::nullopt;
  return Origin{r->serial, r->generation, off};
}

bool DeviceMemory::read(uint64_t iova, void* dst, size_t n) const {
  const uint8_t* p = span(iova, n);
  if (p == nullptr) return false;
  if (n != 0) std::memcpy(dst, p, n);
  return true;
}

bool DeviceMemory::write(uint64_t iova, const void* src, size_t n) const {
  uint8_t* p = span_for_write(iova, n);
  if (p == nullptr) return false;
  if (n != 0) std::memcpy(p, src, n);
  return true;
}

}  // namespace ork::emu
