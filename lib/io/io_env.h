// The ORK_IO_NO_* switches (docs/io.md, the fallback table): each forces one fallback when
// set to anything but "" or "0". The one reader of them, for the layer loader
// (loader_open.cpp) and lib/exec's tensor reader, so both honour the same values.
#pragma once

#include <cstdlib>
#include <cstring>

namespace ork::io {

struct IoEnv {
  bool no_uring = false;     // ORK_IO_NO_URING: pread instead of io_uring
  bool no_direct = false;    // ORK_IO_NO_DIRECT: buffered reads instead of O_DIRECT
  bool no_register = false;  // ORK_IO_NO_REGISTER: plain reads instead of fixed buffers
};

inline IoEnv read_io_env() {
  auto set = [](const char* name) {
    const char* v = std::getenv(name);
    return v != nullptr && *v != '\0' && std::strcmp(v, "0") != 0;
  };
  return {.no_uring = set("ORK_IO_NO_URING"), .no_direct = set("ORK_IO_NO_DIRECT"),
          .no_register = set("ORK_IO_NO_REGISTER")};
}

}  // namespace ork::io
