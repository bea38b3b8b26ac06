#include "lib/api/error.h"

#include <cerrno>

namespace ork::api {
namespace {
thread_local std::string last_error;

ork_status status_for(int code) {
  switch (code) {
    case -EINVAL: return ORK_E_INVALID_ARGUMENT;
    case -EOPNOTSUPP: return ORK_E_UNSUPPORTED;
    case -ENODEV:  // the device went away: every later call fails the same way
    case -ENXIO: return ORK_E_NO_DEVICE;
    case -ENOMEM:
    case -ENOSPC: return ORK_E_NO_MEMORY;
    case -ETIMEDOUT:
    case -ETIME: return ORK_E_TIMEOUT;
    default: return ORK_E_DEVICE;
  }
}
}  // namespace

ork_status fail(ork_status status, std::string message) {
  last_error = std::move(message);
  return status;
}

ork_status fail(const Error& error) { return fail(status_for(error.code), error.message); }

ork_status fail_open(const Error& error) {
  switch (error.code) {
    case -ENOENT:
    case -EACCES:
    case -EPERM: return fail(ORK_E_NO_DEVICE, error.message);
    default: return fail(error);
  }
}

ork_status ok() {
  last_error.clear();
  return ORK_OK;
}

}  // namespace ork::api

extern "C" ORK_API const char* ork_last_error(void) { return ork::api::last_error.c_str(); }
