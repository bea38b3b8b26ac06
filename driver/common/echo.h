// What an error message may echo of its input: at most `limit` bytes, then how much was left
// out. A message that names a bad value (a device name, a path, a number's text) stays one
// readable line whatever the value's size (a 100 KB device name once came back whole).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace ork {

inline constexpr size_t kEchoBytes = 200;

inline std::string echo_capped(std::string_view text, size_t limit = kEchoBytes) {
  if (text.size() <= limit) return std::string(text);
  return std::string(text.substr(0, limit)) + "... (" + std::to_string(text.size()) + " bytes)";
}

}  // namespace ork
