// RAII owners for the C API handles, and the error text of the last failed call, for the
// tools and the tests written over the public C API (header-only).
#pragma once

#include <memory>
#include <string>

#include <fmt/format.h>

#include "ork/ork.h"

namespace ork::tools {

struct DeviceCloser {
  void operator()(ork_device* d) const { ork_device_close(d); }
};
struct WeightsDestroyer {
  void operator()(ork_weights* w) const { ork_weights_destroy(w); }
};
struct QWeightsDestroyer {
  void operator()(ork_qweights* w) const { ork_qweights_destroy(w); }
};
using DevicePtr = std::unique_ptr<ork_device, DeviceCloser>;
using WeightsPtr = std::unique_ptr<ork_weights, WeightsDestroyer>;
using QWeightsPtr = std::unique_ptr<ork_qweights, QWeightsDestroyer>;

// The enum identifier of a status ("ORK_E_NO_DEVICE"): stable for scripts (--json), where
// ork_status_string() is prose for people.
inline const char* status_name(ork_status status) {
  switch (status) {
    case ORK_OK: return "ORK_OK";
    case ORK_E_INVALID_ARGUMENT: return "ORK_E_INVALID_ARGUMENT";
    case ORK_E_UNSUPPORTED: return "ORK_E_UNSUPPORTED";
    case ORK_E_NO_DEVICE: return "ORK_E_NO_DEVICE";
    case ORK_E_NO_MEMORY: return "ORK_E_NO_MEMORY";
    case ORK_E_DEVICE: return "ORK_E_DEVICE";
    case ORK_E_TIMEOUT: return "ORK_E_TIMEOUT";
  }
  return "ORK_E_UNKNOWN";
}

// "no device (ORK_E_NO_DEVICE): <ork_last_error()>": call right after the failing call.
inline std::string describe_failure(ork_status status) {
  const char* detail = ork_last_error();
  return fmt::format("{} ({}): {}", ork_status_string(status), status_name(status),
                     detail && *detail ? detail : "(no message)");
}

// The name to show for the device a tool opened: the --device value, or "default".
inline std::string device_label(const std::string& requested) {
  return requested.empty() ? std::string("default") : requested;
}

}  // namespace ork::tools
