// Builder, trailer and chain patching (docs/regcmd-contract.md section 5).
#include "driver/regcmd/regcmd.h"

#include <fmt/format.h>

#include "driver/common/npu_window.h"

namespace ork::regcmd {

Builder& Builder::emit_raw(regs::Block block, uint16_t reg, uint32_t value) {
  if (error_.empty()) entries_.push_back(encode(regs::target_of(block), value, reg));
  return *this;
}

Builder& Builder::finish(uint64_t next_iova, uint32_t next_entries, uint32_t op_en) {
  if (!error_.empty()) return *this;
  if (next_iova >= hw::kNpuWindowBytes) {
    error_ = fmt::format("next task IOVA 0x{:x} is not below 4 GiB (PC BASE_ADDRESS is 32 bits)",
                         next_iova);
    return *this;
  }
  if (next_iova % 16 != 0) {
    error_ = fmt::format("next task IOVA 0x{:x} is not 16-byte aligned (PC_SOURCE_ADDR is bits "
                         "31:4)", next_iova);
    return *this;
  }
  if (next_iova != 0 && (next_entries < 2 || next_entries % 2 != 0 || next_entries > 0x20000)) {
    error_ = fmt::format("next task of {} entries: must be even and 2..131072 (REGISTER_AMOUNTS "
                         "is 16 bits of 128-bit units)", next_entries);
    return *this;
  }
  // The trailer is 4 entries (even), so padding the body keeps the whole task even.
  if (entries_.size() % 2 != 0) entries_.push_back(kPadding);
  entries_.push_back(chain_base_entry(next_iova));
  entries_.push_back(chain_amount_entry(next_iova, next_entries));
  entries_.push_back(kTrailerMarker);
  entries_.push_back(encode(regs::target_of(regs::Block::global), op_en,
                            regs::GLOBAL_OPERATION_ENABLE));
  return *this;
}

void Builder::clear() {
  entries_.clear();
  error_.clear();
}

void Builder::record_overflow(const char* reg_name, const regs::FieldOverflow& o) {
  error_ = fmt::format("{}.{} = {} does not fit {} bits", reg_name, o.field, o.value, o.width);
}

uint32_t amount_for_entries(uint32_t entries) { return entries / 2 - 1; }
uint32_t entries_for_amount(uint32_t amount) { return (amount + 1) * 2; }

uint64_t chain_base_entry(uint64_t next_iova) {
  if (next_iova == 0) return kPadding;
  regs::PcBaseAddress base;
  base.pc_source_addr = static_cast<uint32_t>(next_iova >> 4);
  return encode(regs::target_of(regs::Block::pc), base.pack_truncating(), regs::PC_BASE_ADDRESS);
}

uint64_t chain_amount_entry(uint64_t next_iova, uint32_t next_entries) {
  if (next_iova == 0) return kPadding;
  regs::PcRegisterAmounts amount;
  amount.pc_data_amount = amount_for_entries(next_entries);
  return encode(regs::target_of(regs::Block::pc), amount.pack_truncating(),
                regs::PC_REGISTER_AMOUNTS);
}

void patch_next(std::span<uint64_t> task_entries, uint64_t next_iova, uint32_t next_entries) {
  if (task_entries.size() < kTrailerEntries) return;  // not a finished task: nothing to patch
  const size_t t = task_entries.size() - kTrailerEntries;
  task_entries[t] = chain_base_entry(next_iova);
  task_entries[t + 1] = chain_amount_entry(next_iova, next_entries);
}

}  // namespace ork::regcmd
