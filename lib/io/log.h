// lib/io's logging: compiled in, quiet unless ORK_DEBUG names `io` (or `all`), e.g.
// ORK_DEBUG=io,submit. Fallbacks are logged here and also kept in the
// loader's stats, which is where tools and tests look.
#pragma once

#include <string_view>

namespace ork::io {

bool io_log_enabled();
void io_log(std::string_view message);

}  // namespace ork::io
