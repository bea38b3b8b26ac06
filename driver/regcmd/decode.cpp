// The decoder from a regcmd buffer back to named register writes: shared by ork_regdump,
// the tests and ORK_DEBUG=regcmd logs. It names what the description knows and says so
// plainly for everything else.
#include <fmt/format.h>

#include "driver/regcmd/regcmd.h"

namespace ork::regcmd {

std::vector<NamedWrite> decode_buffer(std::span<const uint64_t> entries) {
  std::vector<NamedWrite> out;
  out.reserve(entries.size());
  for (uint64_t raw : entries) {
    const Entry e = decode(raw);
    out.push_back(NamedWrite{raw, e, regs::find_reg_for_target(e.target, e.reg)});
  }
  return out;
}

std::string format(const NamedWrite& w) {
  const Entry& e = w.entry;
  if (w.raw == kPadding) return "PADDING";
  if (e.target == kTargetTrailerMarker) {
    return fmt::format("TRAILER_MARKER target 0x{:04x} reg 0x{:04x} = 0x{:08x}", e.target, e.reg,
                       e.value);
  }
  if (w.reg == nullptr) {
    const regs::BlockInfo* b = regs::block_for_target(e.target);
    return fmt::format("UNKNOWN {} target 0x{:04x} reg 0x{:04x} = 0x{:08x}",
                       b != nullptr ? b->name : "block?", e.target, e.reg, e.value);
  }
  std::string s = fmt::format("{} 0x{:04x} = 0x{:08x}", w.reg->name, e.reg, e.value);
  for (size_t i = 0; i < w.reg->field_count; ++i) {
    const regs::FieldInfo& f = w.reg->fields[i];
    s += fmt::format(" {}={}", f.name, regs::field_value(f, e.value));
  }
  return s;
}

}  // namespace ork::regcmd
