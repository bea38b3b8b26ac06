#include "driver/os/debug.h"

#include <cstdio>
#include <cstdlib>
#include <string>

namespace ork::driver {
namespace {

// The raw ORK_DEBUG value, read once: "" when unset.
const std::string& debug_spec() {
  static const std::string spec = [] {
    const char* value = std::getenv("ORK_DEBUG");
    return std::string(value ? value : "");
  }();
  return spec;
}

}  // namespace

bool debug_enabled(std::string_view subsystem) {
  std::string_view spec = debug_spec();
  while (!spec.empty()) {
    size_t comma = spec.find(',');
    std::string_view item = spec.substr(0, comma);
    if (item == subsystem || item == "all") return true;
    if (comma == std::string_view::npos) break;
    spec.remove_prefix(comma + 1);
  }
  return false;
}

void debug_line(std::string_view subsystem, std::string_view text) {
  // One fprintf per line so that lines from several threads do not interleave mid-line.
  std::fprintf(stderr, "ork[%.*s] %.*s\n", static_cast<int>(subsystem.size()), subsystem.data(),
               static_cast<int>(text.size()), text.data());
}

}  // namespace ork::driver
