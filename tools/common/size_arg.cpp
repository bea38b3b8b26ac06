#include "tools/common/size_arg.h"

#include <cctype>

#include <fmt/format.h>

namespace ork::io::tools {

Result<uint64_t> parse_size(const std::string& text) {
  size_t digits = 0;
  while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits]))) ++digits;
  const std::string suffix = text.substr(digits);
  int shift = -1;
  if (suffix.empty() || suffix == "B") shift = 0;
  if (suffix == "K" || suffix == "KiB") shift = 10;
  if (suffix == "M" || suffix == "MiB") shift = 20;
  if (suffix == "G" || suffix == "GiB") shift = 30;
  if (suffix == "T" || suffix == "TiB") shift = 40;
  if (digits == 0 || digits > 12 || shift < 0) {
    return make_error(-EINVAL, fmt::format("size \"{}\": expected a number with an optional "
                                           "K, M, G or T suffix", text));
  }
  const uint64_t value = std::stoull(text.substr(0, digits));  // <= 12 digits: no overflow
  if (value > (UINT64_MAX >> shift))
    return make_error(-EINVAL, fmt::format("size \"{}\" does not fit in 64 bits", text));
  return value << shift;
}

std::string format_bytes(uint64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024.0 && u < 4) {
    v /= 1024.0;
    ++u;
  }
  return u == 0 ? fmt::format("{} B", bytes) : fmt::format("{:.2f} {}", v, units[u]);
}

}  // namespace ork::io::tools
