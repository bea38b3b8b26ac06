// The C API's error convention: every entry point returns an ork_status and leaves a
// thread-local message (ork_last_error) that names the bad argument or device condition.
#pragma once

#include <string>

#include "driver/common/result.h"
#include "ork/ork.h"

namespace ork::api {

// Records `message` as this thread's last error and returns `status`.
ork_status fail(ork_status status, std::string message);
// Maps an internal Error (negative errno + message) to a status and records it.
ork_status fail(const Error& error);
// Clears the last error (successful calls leave it empty).
ork_status ok();

}  // namespace ork::api
