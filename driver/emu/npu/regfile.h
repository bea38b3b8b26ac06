// One core's register file as the PC leaves it: every 32-bit register a regcmd entry can
// name (offsets 0x0000..0xFFFC), zero after reset. Registers keep their values across the
// tasks of a chain and across jobs, as hardware registers do: only a core reset clears
// them (driver/emu/npu/prior_state.h says what a job may find there).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace ork::emu {

class RegisterFile {
 public:
  static constexpr size_t kWords = 0x10000 / 4;
  uint32_t get(uint16_t offset) const { return regs_[offset / 4]; }
  void set(uint16_t offset, uint32_t value) { regs_[offset / 4] = value; }
  void clear() { regs_.fill(0); }  // the soft reset's state
  // Typed view through a generated register struct (driver/regs/npu_regs.h): the fields as
  // the register keeps them.
  template <class R>
  R view() const { return R::unpack(get(R::offset)); }

 private:
  std::array<uint32_t, kWords> regs_{};
};

}  // namespace ork::emu
