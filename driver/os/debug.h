// Quiet-by-default logging, compiled in (a failing run is repeated with it on): ORK_DEBUG=
// ioctl,submit,... (or "all") selects subsystems; lines go to stderr prefixed "ork[<subsystem>] ".
#pragma once

#include <fmt/format.h>

#include <string_view>

namespace ork::driver {

// True when ORK_DEBUG names `subsystem` (or "all"). The variable is read once per process.
bool debug_enabled(std::string_view subsystem);

// Writes one line to stderr; call only after debug_enabled() said yes.
void debug_line(std::string_view subsystem, std::string_view text);

template <class... Args>
void debug_log(std::string_view subsystem, fmt::format_string<Args...> format, Args&&... args) {
  if (debug_enabled(subsystem))
    debug_line(subsystem, fmt::format(format, std::forward<Args>(args)...));
}

}  // namespace ork::driver
