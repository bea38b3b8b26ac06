// ork_qweights_import_ggml: ggml's Q4_0 / Q4_1 / Q8_0 / Q8_1 blocks as quantised weights
// (lib/quant/ggml.h; docs/quantisation.md "ggml blocks").
#include <fmt/format.h>

#include "lib/api/error.h"
#include "lib/api/qweights_handle.h"
#include "lib/quant/ggml.h"

using ork::api::fail;

extern "C" {

ORK_API ork_status ork_qweights_import_ggml(ork_device* device, int32_t ggml_type, const void* blocks, size_t bytes,
                                            int64_t k, int64_t n, ork_qweights** out) {
  constexpr const char* fn = "ork_qweights_import_ggml";
  constexpr int64_t kMaxDim = int64_t{1} << 24;  // as api.cpp
  return ork::api::guarded([&] {
    if (out == nullptr) return fail(ORK_E_INVALID_ARGUMENT, fmt::format("{}: out is NULL", fn));
    *out = nullptr;
    if (device == nullptr) return fail(ORK_E_INVALID_ARGUMENT, fmt::format("{}: device is NULL", fn));
    if (blocks == nullptr) return fail(ORK_E_INVALID_ARGUMENT, fmt::format("{}: blocks is NULL", fn));
    for (auto [what, v] : {std::pair{"K", k}, std::pair{"N", n}})
      if (v < 1 || v > kMaxDim)
        return fail(ORK_E_INVALID_ARGUMENT, fmt::format("{}: {} = {}: must be in 1..{}", fn, what, v, kMaxDim));
    auto q = ork::quant::ggml::import_blocks(ggml_type, {static_cast<const uint8_t*>(blocks), bytes}, k, n);
    return ork::api::finish_qweights(fn, device, std::move(q), out);
  });
}

}  // extern "C"
