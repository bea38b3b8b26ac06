#!/usr/bin/env python3
"""Generates npu_regs.h from the register description rk3588_npu.json.

Usage: gen_regs.py INPUT.json OUTPUT.h

The description is checked first (fields inside 32 bits and not overlapping, offsets
4-aligned and inside their block's window, names unique); any problem is an error that
names the register and field, and no header is written.
"""
import json
import re
import sys


def fail(msg):
    sys.stderr.write(f"gen_regs.py: {msg}\n")
    sys.exit(1)


def camel(name):
    return "".join(p.capitalize() for p in name.lower().split("_"))


def num(text, what):
    try:
        return int(text, 0) if isinstance(text, str) else int(text)
    except ValueError:
        fail(f"{what}: '{text}' is not a number")


def load(path):
    with open(path, encoding="utf-8") as f:
        desc = json.load(f)
    blocks = {}
    for b in desc["blocks"]:
        blocks[b["name"]] = dict(name=b["name"], id=b["id"], target=num(b["target"], b["name"]),
                                 base=num(b["base"], b["name"]), size=num(b["size"], b["name"]))
    regs, seen = [], set()
    for r in desc["registers"]:
        full = f"{r['block']}_{r['name']}"
        if r["block"] not in blocks:
            fail(f"{full}: unknown block '{r['block']}'")
        blk = blocks[r["block"]]
        off = num(r["offset"], full)
        if off % 4:
            fail(f"{full}: offset 0x{off:04x} is not 4-byte aligned")
        if blk["size"] and not blk["base"] <= off < blk["base"] + blk["size"]:
            fail(f"{full}: offset 0x{off:04x} is outside the {blk['name']} window")
        if full in seen or (blk["name"], off) in seen:
            fail(f"{full}: register described twice")
        seen.update({full, (blk["name"], off)})
        fields, used = [], 0
        for fname, lsb, width in r["fields"]:
            if width < 1 or lsb + width > 32:
                fail(f"{full}.{fname}: bits {lsb}..{lsb + width - 1} are not inside 32 bits")
            mask = ((1 << width) - 1) << lsb
            if used & mask:
                fail(f"{full}.{fname}: overlaps another field")
            used |= mask
            fields.append(dict(name=fname, lsb=lsb, width=width))
        if len({f["name"] for f in fields}) != len(fields):
            fail(f"{full}: two fields share a name")
        regs.append(dict(full=full, block=blk, offset=off, fields=fields, source=r.get("source", "")))
    return list(blocks.values()), regs


def emit_struct(r):
    name = camel(r["full"])
    out = [f"// {r['full']} at 0x{r['offset']:04x}: {r['source']}",
           f"struct {name} {{"]
    for f in r["fields"]:
        out.append(f"  uint32_t {f['name'].lower()} = 0;  // bits {f['lsb'] + f['width'] - 1}:{f['lsb']}")
    out += [f"  static constexpr uint16_t offset = 0x{r['offset']:04x};",
            f"  static constexpr Block block = Block::{r['block']['id']};",
            f"  static constexpr const char* name = \"{r['full']}\";",
            "  // The first field whose value is wider than its field, if any.",
            "  constexpr std::optional<FieldOverflow> overflow() const {"]
    for f in r["fields"]:
        if f["width"] < 32:
            lim = (1 << f["width"]) - 1
            out.append(f"    if ({f['name'].lower()} > 0x{lim:x}u) return FieldOverflow{{\"{f['name']}\", "
                       f"{f['name'].lower()}, {f['width']}}};")
    out += ["    return std::nullopt;", "  }",
            "  // Packs; returns nullptr, or the name of the first field that does not fit.",
            "  constexpr const char* pack(uint32_t& out) const {",
            "    if (auto o = overflow()) return o->field;",
            "    out = pack_truncating();", "    return nullptr;", "  }",
            "  // What the register keeps: every field masked to its width.",
            "  constexpr uint32_t pack_truncating() const {", "    uint32_t v = 0;"]
    for f in r["fields"]:
        mask = (1 << f["width"]) - 1
        out.append(f"    v |= ({f['name'].lower()} & 0x{mask:x}u) << {f['lsb']};")
    out += ["    return v;", "  }",
            f"  static constexpr {name} unpack(uint32_t value) {{", f"    {name} r;"]
    for f in r["fields"]:
        mask = (1 << f["width"]) - 1
        out.append(f"    r.{f['name'].lower()} = (value >> {f['lsb']}) & 0x{mask:x}u;")
    out += ["    return r;", "  }", "};", ""]
    return out


HEAD = """\
// GENERATED FILE - DO NOT EDIT.
// Source: driver/regs/rk3588_npu.json, by driver/regs/gen_regs.py (meson custom_target).
// Edit the JSON description instead; docs/registers.md explains both.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace ork::regs {
"""

HELPERS = """
struct FieldInfo { const char* name; uint8_t lsb; uint8_t width; };
struct RegInfo { const char* name; Block block; uint16_t offset; const FieldInfo* fields; size_t field_count; };
struct BlockInfo { const char* name; Block block; uint16_t target; uint16_t base; uint16_t size; };
// A value wider than its field (what the checked packers refuse).
struct FieldOverflow { const char* field; uint32_t value; uint8_t width; };

constexpr uint32_t field_mask(const FieldInfo& f) {
  return f.width >= 32 ? 0xffffffffu : ((1u << f.width) - 1u);
}
constexpr uint32_t field_value(const FieldInfo& f, uint32_t reg) { return (reg >> f.lsb) & field_mask(f); }
"""

LOOKUPS = """
inline std::span<const RegInfo> all_regs() { return kRegTable; }
inline std::span<const BlockInfo> all_blocks() { return kBlockTable; }

inline const BlockInfo& block_info(Block b) { return kBlockTable[static_cast<size_t>(b)]; }
inline const char* block_name(Block b) { return block_info(b).name; }

// The block whose register window holds `offset` (GLOBAL has none); nullptr outside all.
inline const BlockInfo* block_for_offset(uint16_t offset) {
  for (const BlockInfo& b : kBlockTable)
    if (b.size != 0 && offset >= b.base && offset - b.base < b.size) return &b;
  return nullptr;
}
inline const BlockInfo* block_for_target(uint16_t target) {
  for (const BlockInfo& b : kBlockTable)
    if (b.target == target) return &b;
  return nullptr;
}
// First register described at `offset` (PC before GLOBAL for 0x0008); nullptr when unknown.
inline const RegInfo* find_reg(uint16_t offset) {
  for (const RegInfo& r : kRegTable)
    if (r.offset == offset) return &r;
  return nullptr;
}
inline const RegInfo* find_reg(Block block, uint16_t offset) {
  for (const RegInfo& r : kRegTable)
    if (r.block == block && r.offset == offset) return &r;
  return nullptr;
}
// What a regcmd entry (target, register) names; nullptr when unknown.
inline const RegInfo* find_reg_for_target(uint16_t target, uint16_t offset) {
  const BlockInfo* b = block_for_target(target);
  return b == nullptr ? nullptr : find_reg(b->block, offset);
}
inline const RegInfo* find_reg(std::string_view name) {
  for (const RegInfo& r : kRegTable)
    if (name == r.name) return &r;
  return nullptr;
}

}  // namespace ork::regs
"""


def generate(blocks, regs):
    out = [HEAD]
    out.append("enum class Block : uint8_t { " + ", ".join(b["id"] for b in blocks) + " };")
    out.append("inline constexpr size_t kBlockCount = %d;" % len(blocks))
    out.append("")
    out.append("// Entry target of each block: block id + 1 (docs/hardware.md section 3).")
    out.append("constexpr uint16_t target_of(Block b) {")
    out.append("  switch (b) {")
    for b in blocks:
        out.append(f"    case Block::{b['id']}: return 0x{b['target']:04x};")
    out.append("  }")
    out.append("  return 0;")
    out.append("}")
    out.append(HELPERS)
    out.append("// Register offsets.")
    for r in regs:
        out.append(f"inline constexpr uint16_t {r['full']} = 0x{r['offset']:04x};")
    out.append("")
    for r in regs:
        out += emit_struct(r)
    out.append("inline constexpr BlockInfo kBlockTable[] = {")
    for b in blocks:
        out.append(f"  {{\"{b['name']}\", Block::{b['id']}, 0x{b['target']:04x}, 0x{b['base']:04x}, "
                   f"0x{b['size']:04x}}},")
    out.append("};")
    for r in regs:
        fs = ", ".join(f"{{\"{f['name']}\", {f['lsb']}, {f['width']}}}" for f in r["fields"])
        out.append(f"inline constexpr FieldInfo kFields_{r['full']}[] = {{{fs}}};")
    out.append("inline constexpr RegInfo kRegTable[] = {")
    for r in regs:
        out.append(f"  {{\"{r['full']}\", Block::{r['block']['id']}, 0x{r['offset']:04x}, "
                   f"kFields_{r['full']}, {len(r['fields'])}}},")
    out.append("};")
    out.append(LOOKUPS)
    return "\n".join(out)


def main(argv):
    if len(argv) != 3:
        sys.stderr.write(__doc__)
        return 2
    blocks, regs = load(argv[1])
    ids = [b["id"] for b in blocks]
    if not all(re.fullmatch(r"[a-z_]+", i) for i in ids):
        fail("block ids must be lower_snake_case")
    text = generate(blocks, regs)
    with open(argv[2], "w", encoding="utf-8") as f:
        f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
