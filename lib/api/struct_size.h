// The struct_size rule of the C API (include/ork/ork.h, docs/library.md "Versioning"), written
// once for both directions:
// - options a caller passes in: struct_size 0 = the defaults, a smaller size (an older
//   caller) = the fields it has, a larger one than this library knows = refused (its extra
//   fields would be ignored silently);
// - structs the library fills (check_out_struct, stats.h): 0 is refused, smaller than the
//   8-byte header is refused, a smaller size gets the fields that fit, a larger one the
//   fields this library knows.
#pragma once

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "lib/api/error.h"
#include "lib/api/stats.h"

namespace ork::api {

template <class T>
ork_status read_options(const char* fn, const T* in, T* out) {
  *out = T{};
  if (in == nullptr || in->struct_size == 0) return ORK_OK;
  if (in->struct_size > sizeof(T))
    return fail(ORK_E_INVALID_ARGUMENT, fmt::format("{}: options.struct_size = {} is larger than this library knows ({})",
                                                    fn, in->struct_size, sizeof(T)));
  std::memcpy(out, in, in->struct_size);
  return ORK_OK;
}

// Fills the caller's `out` from `full` under the rule above (check_out_struct first).
template <class T>
ork_status write_out_struct(const char* what, const T& full, T* out) {
  if (auto s = check_out_struct(out->struct_size, what); s != ORK_OK) return s;
  const uint32_t n = std::min<uint32_t>(out->struct_size, sizeof(T));
  std::memcpy(out, &full, n);
  out->struct_size = n;
  return ORK_OK;
}

}  // namespace ork::api
