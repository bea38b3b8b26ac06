// Register command buffers (regcmd): the 64-bit entries the NPU's PC fetches, the Builder
// that writes them (reserve / emit, one flush; no device needed), the 4-entry PC trailer
// that chains tasks, and the decoder back to named register writes (dumps, tests, the
// emulator). Semantics: docs/regcmd-contract.md section 5; docs/registers.md.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "driver/regs/npu_regs.h"

namespace ork::regcmd {

// One entry: target 63..48 | value 47..16 | register 15..0 (docs/hardware.md section 3:
// RKT-M rkt_regcmd.c emit_raw, MTX npu_hw.h NPUOP).
struct Entry {
  uint16_t target = 0;
  uint32_t value = 0;
  uint16_t reg = 0;
  friend bool operator==(const Entry&, const Entry&) = default;
};

constexpr uint64_t encode(uint16_t target, uint32_t value, uint16_t reg) {
  return (uint64_t{target} << 48) | (uint64_t{value} << 16) | uint64_t{reg};
}
constexpr Entry decode(uint64_t raw) {
  return Entry{static_cast<uint16_t>(raw >> 48), static_cast<uint32_t>(raw >> 16),
               static_cast<uint16_t>(raw)};
}

// Trailer (docs/regcmd-contract.md section 5; VND RKNPU_PC_DATA_EXTRA_AMOUNT = 4).
inline constexpr size_t kTrailerEntries = 4;
inline constexpr uint32_t kOpEnCnaCoreDpu = 0x0d;  // bit0 CNA, bit2 CORE, bit3 DPU (MTX)
// The trailer's special targets (docs/hardware.md section 3, TRM via MTX/RKT-M): 0x0041
// "must be set before op_en" (no register meaning known) and 0, padding; the PC writes
// neither into a register.
inline constexpr uint16_t kTargetTrailerMarker = 0x0041;  // "set before op_en" (TRM via MTX)
inline constexpr uint64_t kTrailerMarker = encode(kTargetTrailerMarker, 0, 0);
inline constexpr uint16_t kTargetPadding = 0x0000;
inline constexpr uint64_t kPadding = encode(kTargetPadding, 0, 0);  // target 0: the PC ignores it

class Builder {
 public:
  Builder() { entries_.reserve(128); }  // a matmul task is ~30-110 entries (MTX: 108)

  // Checked: a field wider than its width records an error naming register, field, value
  // and width, and nothing is emitted. After an error every further emit is ignored.
  template <class R>
  Builder& emit(const R& reg) {
    if (!error_.empty()) return *this;
    if (auto o = reg.overflow()) {
      record_overflow(R::name, *o);
      return *this;
    }
    entries_.push_back(encode(regs::target_of(R::block), reg.pack_truncating(), R::offset));
    return *this;
  }
  // Unchecked: the value goes in as given (tests of truncation, registers without fields).
  Builder& emit_raw(regs::Block block, uint16_t reg, uint32_t value);
  // Pads to an even entry count with an all-zero entry where needed, then appends the
  // trailer. next_iova 0: the last task (both chain entries all-zero).
  Builder& finish(uint64_t next_iova, uint32_t next_entries, uint32_t op_en = kOpEnCnaCoreDpu);

  std::span<const uint64_t> entries() const { return entries_; }
  size_t size_entries() const { return entries_.size(); }
  bool ok() const { return error_.empty(); }
  const std::string& error() const { return error_; }
  void clear();

 private:
  void record_overflow(const char* reg_name, const regs::FieldOverflow& o);
  std::vector<uint64_t> entries_;
  std::string error_;
};

// REGISTER_AMOUNTS for a task of `entries` 64-bit entries (trailer included, even count):
// 128-bit units minus one.
uint32_t amount_for_entries(uint32_t entries);
// The entry count REGISTER_AMOUNTS `amount` stands for (the inverse).
uint32_t entries_for_amount(uint32_t amount);

// The two chain entries of a trailer (trailer entries 1 and 2); all-zero when next_iova is 0.
uint64_t chain_base_entry(uint64_t next_iova);
uint64_t chain_amount_entry(uint64_t next_iova, uint32_t next_entries);

// Rewrites the chain entries (trailer 1 and 2) of a finished task to point at the next task.
// `task_entries` is the whole task, trailer last.
void patch_next(std::span<uint64_t> task_entries, uint64_t next_iova, uint32_t next_entries);

// Decoding for dumps and tests.
struct NamedWrite {
  uint64_t raw = 0;
  Entry entry;
  const regs::RegInfo* reg = nullptr;  // nullptr: padding, the trailer marker, or unknown
};
std::vector<NamedWrite> decode_buffer(std::span<const uint64_t> entries);
// "CNA_DATA_SIZE0 0x1020 = 0x00010040 DATAIN_HEIGHT=64 DATAIN_WIDTH=1"; padding, the trailer
// marker and unknown registers get their own wording.
std::string format(const NamedWrite& w);

}  // namespace ork::regcmd
