// Two-valued settings read from the environment (ORK_EMU_TIMING, ORK_EMU_WEIGHT_CACHE):
// unset or "" gives the default; anything but the two names is an error naming the variable,
// its value and what it accepts, so a typo never silently picks a mode.
#pragma once

#include <cstdlib>
#include <string>

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

}  // namespace ork
