// The int4 element order, the one definition of the project: every packed int4 stream (the
// caller's operands and weights, the native operands the planner lays out, the NPU's int4
// feature and weight data the emulated CNA reads) holds element i in the low nibble of byte
// i/2 when i is even and in the high nibble when odd, as a two's complement value -8..7
// (docs/regcmd-contract.md section 2; the order on silicon is checked by tests-hw/test_int4_nibble_order).
// The emulator uses it too, like the fp16 converter beside it: if the order were wrong, the
// hardware test above is what shows it, and the emulator and the library would have to
// change together anyway. Header only, so lib/ref and tools need no link to the driver.
#pragma once

#include <cstdint>

namespace ork::int4 {

// The 4-bit code of element i (0..15, the value's two's complement bits).
constexpr uint8_t code_at(const uint8_t* bytes, int64_t i) {
  const uint8_t b = bytes[i / 2];
  return static_cast<uint8_t>(i % 2 == 0 ? b & 0x0f : b >> 4);
}

// The values of a byte's two elements, sign-extended (-8..7): element 2j is byte j's low
// nibble, element 2j + 1 its high one. For loops that decode a stream a byte at a time.
constexpr int8_t low_value(uint8_t b) { return static_cast<int8_t>(static_cast<int8_t>(b << 4) >> 4); }
constexpr int8_t high_value(uint8_t b) { return static_cast<int8_t>(static_cast<int8_t>(b) >> 4); }

// The value of element i, sign-extended: -8..7.
constexpr int8_t value_at(const uint8_t* bytes, int64_t i) {
  return i % 2 == 0 ? low_value(bytes[i / 2]) : high_value(bytes[i / 2]);
}

// Writes the low 4 bits of `v` (a code 0..15 or a value -8..7) as element i; the byte's other
// element is kept.
constexpr void put(uint8_t* bytes, int64_t i, int v) {
  uint8_t& b = bytes[i / 2];
  const auto nib = static_cast<uint8_t>(v & 0x0f);
  b = i % 2 == 0 ? static_cast<uint8_t>((b & 0xf0) | nib) : static_cast<uint8_t>((b & 0x0f) | (nib << 4));
}

// Bytes of a stream of `elements` int4 values (the last high nibble unused when odd).
constexpr int64_t packed_bytes(int64_t elements) { return (elements + 1) / 2; }

}  // namespace ork::int4

// The order, checked where it is defined: byte 0x21 holds element 0 = 1 (low nibble) and
// element 1 = 2; byte 0xf8 holds -8 then -1.
namespace ork::int4 {
inline constexpr uint8_t kOrderCheck[2] = {0x21, 0xf8};
static_assert(value_at(kOrderCheck, 0) == 1 && value_at(kOrderCheck, 1) == 2);
static_assert(value_at(kOrderCheck, 2) == -8 && value_at(kOrderCheck, 3) == -1 && code_at(kOrderCheck, 3) == 15);
static_assert(low_value(0xf8) == -8 && high_value(0xf8) == -1 && code_at(kOrderCheck, 2) == 8);
}  // namespace ork::int4
