// Settings read from the environment: two-valued ones (ORK_EMU_TIMING, ORK_EMU_WEIGHT_CACHE)
// and byte counts (ORK_CONTEXT_CACHE_BYTES, ORK_EMU_WEIGHT_CACHE_BYTES). Unset or "" gives
// the default; anything else that does not parse is an error naming the variable, its value
// and what it accepts, so a typo never silently picks a mode.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "driver/common/result.h"

namespace ork {

// true for `yes`, false for `no`, `unset` when the variable is unset or empty.
inline Result<bool> env_choice(const char* name, const char* no, const char* yes, bool unset) {
  const char* env = std::getenv(name);
  const std::string v = env ? env : "";
  if (v.empty()) return unset;
  if (v == yes) return true;
  if (v == no) return false;
  const char* first = unset ? yes : no;  // the default is named first
  const char* second = unset ? no : yes;
  return make_error(-EINVAL, std::string(name) + "='" + v + "': expected '" + first + "' or '" + second + "'");
}

// A size in bytes: digits with an optional K, M or G suffix (powers of 1024), e.g. "512M".
// Unset or empty gives `unset`; anything else (a sign, junk, overflow) is an error naming
// the variable and its value.
inline Result<uint64_t> env_bytes(const char* name, uint64_t unset) {
  const char* env = std::getenv(name);
  const std::string v = env ? env : "";
  if (v.empty()) return unset;
  const auto bad = [&] {
    return make_error(-EINVAL, std::string(name) + "='" + v + "': expected a byte count such as 1073741824, 512M or 6G");
  };
  uint64_t n = 0;
  size_t i = 0;
  for (; i < v.size() && v[i] >= '0' && v[i] <= '9'; ++i) {
    const auto digit = static_cast<uint64_t>(v[i] - '0');
    if (n > (UINT64_MAX - digit) / 10) return bad();
    n = n * 10 + digit;
  }
  if (i == 0) return bad();
  int shift = 0;
  if (i + 1 == v.size()) {
    const char s = v[i];
    shift = s == 'K' || s == 'k' ? 10 : s == 'M' || s == 'm' ? 20 : s == 'G' || s == 'g' ? 30 : -1;
    if (shift < 0) return bad();
  } else if (i != v.size()) {
    return bad();
  }
  if (shift && n > (UINT64_MAX >> shift)) return bad();
  return n << shift;
}

// Physical memory of the machine (bytes), from sysconf; 0 when it cannot be known. The
// default bounds of the caches that scale with a model derive from it.
inline uint64_t physical_memory_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page) : 0;
}

// ORK_DEBUG: a comma-separated list of subsystems (ioctl, submit, io, ...) or "all". The one
// reader of the variable, for the driver's log (driver/os/debug.h) and lib/io's; read once
// per process, so a log decision never changes mid-run.
inline bool debug_names(std::string_view subsystem) {
  static const std::string spec = [] {
    const char* value = std::getenv("ORK_DEBUG");
    return std::string(value ? value : "");
  }();
  std::string_view rest = spec;
  while (!rest.empty()) {
    const size_t comma = rest.find(',');
    const std::string_view item = rest.substr(0, comma);
    if (item == subsystem || item == "all") return true;
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  return false;
}

}  // namespace ork
