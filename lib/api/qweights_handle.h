// What an ork_qweights is inside (quant_api.cpp, weights_ggml.cpp).
#pragma once

#include <memory>

#include "driver/common/result.h"
#include "lib/api/device.h"
#include "lib/quant/qmatmul.h"
#include "ork/ork.h"

struct ork_qweights {
  ork::api::DeviceRef keep_device;  // first: released last, after impl's BOs (device.h)
  ork_device* device = nullptr;
  std::unique_ptr<ork::quant::QuantMatmul> impl;
};

namespace ork::api {

// Makes `q` resident on `device` as *out; errors are prefixed with `fn`.
ork_status finish_qweights(const char* fn, ork_device* device, Result<quant::QuantWeights> q, ork_qweights** out);

}  // namespace ork::api
