#include "driver/os/debug.h"

#include <cstdio>

#include "driver/common/env.h"

namespace ork::driver {

bool debug_enabled(std::string_view subsystem) { return debug_names(subsystem); }  // driver/common/env.h

void debug_line(std::string_view subsystem, std::string_view text) {
  // One fprintf per line so that lines from several threads do not interleave mid-line.
  std::fprintf(stderr, "ork[%.*s] %.*s\n", static_cast<int>(subsystem.size()), subsystem.data(),
               static_cast<int>(text.size()), text.data());
}

}  // namespace ork::driver
