// An independent, minimal decoder of RK3588 NPU register command words, for the golden
// tests (docs/regcmd-contract.md section 8). It deliberately includes nothing of libork: no
// driver/regcmd, no generated npu_regs.h, no driver/regs JSON. Its bit layout, block targets
// and register fields are written here again, from the public sources themselves, so that a
// mistake shared by libork's encoder and libork's emulator cannot pass through it.
//
// Sources (each fact below names one):
//   XML = Mesa src/gallium/drivers/rocket/registers.xml (bminor/mesa-mesa @ 5b829658f74f),
//         field positions as bitfield low/high or pos;
//   RGC = Mesa src/gallium/drivers/rocket/rkt_regcmd.c (same commit): emit_raw packs
//         target << 48 | value << 16 | reg, and emit() uses target = enum target + 1;
//   MTX = mtx512/rk3588-npu include/npu_hw.h @ 472394787d3f: NPUOP (the same packing), the
//         trailer targets OP_ENABLE = 0x0081 and OP_40 = 0x0041, and the offsets 0x3030
//         and 0x40c4 that the XML does not describe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace golden {

// One 64-bit word split by the published layout (RGC emit_raw, MTX NPUOP).
struct Word {
  uint16_t target = 0;  // bits 63..48
  uint32_t value = 0;   // bits 47..16
  uint16_t reg = 0;     // bits 15..0
};
constexpr Word split(uint64_t w) {
  return Word{static_cast<uint16_t>(w >> 48), static_cast<uint32_t>((w >> 16) & 0xffffffffu),
              static_cast<uint16_t>(w & 0xffffu)};
}

struct FieldFact {
  std::string name;
  unsigned lsb;
  unsigned width;
};

struct RegFact {
  const char* block;   // "CNA", "CORE", "DPU", "PC"
  uint16_t offset;
  std::string name;    // XML register name ("UNKNOWN_3030" where the XML has none)
  std::vector<FieldFact> fields;
};

// The block a target names (XML enum target + 1, RGC): nullptr for an unknown target.
// Also the register window the block's offsets must lie in (XML domain offsets).
struct BlockFact {
  const char* name;
  uint16_t target;
  uint16_t window_base;  // offsets of the block are window_base .. window_base + 0xfff
};
const BlockFact* block_for_target(uint16_t target);

// The register of a block at an offset, or nullptr.
const RegFact* find_reg(const char* block, uint16_t offset);
const RegFact* find_reg(const std::string& block_dot_name);  // "CNA.CBUF_CON0"

// Values of the fields of `value`, plus "(other bits)" for the bits no field covers (so a
// comparison field by field still sees every bit).
struct FieldValue {
  std::string name;
  uint32_t value;
};
std::vector<FieldValue> fields_of(const RegFact& reg, uint32_t value);

// Trailer words that are not register writes of a block (MTX npu_hw.h, docs/regcmd-contract.md section 5).
inline constexpr uint16_t kTargetOpEnable = 0x0081;  // MTX OP_ENABLE = PC_OP_ENABLE | 0x01
inline constexpr uint16_t kTargetMarker = 0x0041;    // MTX OP_40 = PC_OP_40 | 0x01

// What one word of a task means, decoded with the facts above. `error` is set when the
// word is inconsistent (an offset outside its target's window, an unknown register).
struct Decoded {
  Word word;
  std::string key;     // "CNA.CBUF_CON0", "PADDING", "MARKER", "OP_ENABLE"
  const RegFact* reg = nullptr;
  std::string error;
};
Decoded decode(uint64_t w);

}  // namespace golden
