// The C API's error convention: every entry point returns an ork_status and leaves a
// thread-local message (ork_last_error) that names the bad argument or device condition.
#pragma once

#include <exception>
#include <new>
#include <string>

#include "driver/common/result.h"
#include "ork/ork.h"

namespace ork::api {

// Records `message` as this thread's last error and returns `status`.
ork_status fail(ork_status status, std::string message);
// Maps an internal Error (negative errno + message) to a status and records it.
ork_status fail(const Error& error);
// As fail(Error), for a device that could not be opened: a missing node, a refused
// open (EACCES, EPERM) or no such device is ORK_E_NO_DEVICE. Elsewhere those errnos come
// from an open device (MEM_MAP's EPERM) and are ORK_E_DEVICE with the kernel's word.
ork_status fail_open(const Error& error);
// Clears the last error (successful calls leave it empty).
ork_status ok();

// Runs an entry point's body so that no exception crosses the C API: out of memory becomes
// ORK_E_NO_MEMORY, anything else ORK_E_DEVICE with the exception's text.
template <class F>
ork_status guarded(F&& body) {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return fail(ORK_E_NO_MEMORY, "out of host memory");
  } catch (const std::exception& e) {
    return fail(ORK_E_DEVICE, std::string("internal error: ") + e.what());
  } catch (...) {
    return fail(ORK_E_DEVICE, "internal error");
  }
}

}  // namespace ork::api
