// "2G", "512M", "64K", "4096": sizes on the command line, in bytes (K/M/G/T = KiB/MiB/...).
#pragma once

#include <cstdint>
#include <string>

#include "driver/common/result.h"

namespace ork::io::tools {

Result<uint64_t> parse_size(const std::string& text);
std::string format_bytes(uint64_t bytes);  // "2.00 GiB"

}  // namespace ork::io::tools
