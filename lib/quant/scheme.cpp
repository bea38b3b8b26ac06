#include "lib/quant/scheme.h"

#include <cstring>

#include <fmt/format.h>

namespace ork::quant {

const char* bits_name(Bits bits) { return bits == Bits::int8 ? "int8" : "int4"; }

const char* mode_name(Mode mode) {
  switch (mode) {
    case Mode::w8a8: return "w8a8";
    case Mode::w4a8: return "w4a8";
    case Mode::w4a4: return "w4a4";
  }
  return "?";
}

Result<Mode> parse_mode(const char* name) {
  for (Mode m : {Mode::w8a8, Mode::w4a8, Mode::w4a4})
    if (name != nullptr && std::strcmp(name, mode_name(m)) == 0) return m;
  return make_error(-EINVAL, fmt::format("quantisation mode '{}': expected w8a8, w4a8 or w4a4",
                                         name ? name : "(null)"));
}

Bits weight_bits(Mode mode) { return mode == Mode::w8a8 ? Bits::int8 : Bits::int4; }
Bits activation_bits(Mode mode) { return mode == Mode::w4a4 ? Bits::int4 : Bits::int8; }

Status check_weight_scheme(const WeightScheme& s, int64_t k) {
  if (s.bits != Bits::int8 && s.bits != Bits::int4)
    return make_error(-EINVAL, fmt::format("weight bits = {}: expected 8 or 4", static_cast<int>(s.bits)));
  if (k < 1) return make_error(-EINVAL, fmt::format("K = {}: must be >= 1", k));
  if (s.group == 0) {
    if (k > kMaxPerChannelK)
      return make_error(-EINVAL, fmt::format("K = {}: per-channel scales allow K <= {} (int32 accumulators "
                                             "would wrap); use a group of 32, 64 or 128", k, kMaxPerChannelK));
    return Status::success();
  }
  for (int64_t g : kGroupWidths)
    if (s.group == g) return Status::success();
  return make_error(-EINVAL, fmt::format("group = {}: expected 0 (per-channel), 32, 64 or 128", s.group));
}

}  // namespace ork::quant
