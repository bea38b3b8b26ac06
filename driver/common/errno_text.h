// How every layer names an errno in a message: "ENOENT (No such file or directory)". Either
// sign is taken, since the layers carry errors as negative errnos (docs/README.md
// "Conventions").
#pragma once

#include <cstring>
#include <string>

namespace ork {

inline std::string errno_text(int err) {
  const int e = err < 0 ? -err : err;
  const char* name = strerrorname_np(e);  // glibc 2.32; nullptr for a number it does not know
  return (name ? std::string(name) : "errno " + std::to_string(e)) + " (" + std::strerror(e) + ")";
}

}  // namespace ork
