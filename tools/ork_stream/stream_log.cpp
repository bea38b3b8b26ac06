// ork_stream_bench's log (stream_log.h).
#include "tools/ork_stream/stream_log.h"

#include <cstdio>

#include "driver/common/env.h"

namespace ork::io::tools {

// `io` or `all` in ORK_DEBUG (read once, by driver/common/env.h).
bool io_log_enabled() { return debug_names("io"); }

void io_log(std::string_view message) {
  if (!io_log_enabled()) return;
  std::fprintf(stderr, "ork io: %.*s\n", static_cast<int>(message.size()), message.data());
}

}  // namespace ork::io::tools
