#include "lib/io/log.h"

#include <cstdio>
#include <cstdlib>
#include <string>

namespace ork::io {

// Looks for `io` or `all` as a whole comma-separated word of ORK_DEBUG.
bool io_log_enabled() {
  const char* env = std::getenv("ORK_DEBUG");
  if (env == nullptr) return false;
  const std::string list = std::string(",") + env + ",";
  return list.find(",io,") != std::string::npos || list.find(",all,") != std::string::npos;
}

void io_log(std::string_view message) {
  if (!io_log_enabled()) return;
  std::fprintf(stderr, "ork io: %.*s\n", static_cast<int>(message.size()), message.data());
}

}  // namespace ork::io
