// The quantised entry points of the C API (ork.h, "Quantised matmul"; docs/quantisation.md):
// option checks and conversion; the work is lib/quant's. No exception crosses the boundary.
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <new>

#include <fmt/format.h>

#include "lib/api/device.h"
#include "lib/api/error.h"
#include "lib/api/qweights_handle.h"
#include "lib/api/struct_size.h"
#include "lib/quant/qmatmul.h"
#include "ork/ork.h"

using ork::api::fail;
using ork::api::guarded;
using ork::api::read_options;

namespace {

constexpr int64_t kQuantMaxDim = int64_t{1} << 24;  // as api.cpp: byte counts stay far from overflow

ork_status check_dim(const char* fn, const char* what, int64_t v) {
  if (v < 1 || v > kQuantMaxDim)
    return fail(ORK_E_INVALID_ARGUMENT, fmt::format("{}: {} = {}: must be in 1..{}", fn, what, v, kQuantMaxDim));
  return ORK_OK;
}

ork::Result<ork::quant::Bits> bits_of(const char* what, int32_t v) {
  if (v == 0 || v == 8) return ork::quant::Bits::int8;
  if (v == 4) return ork::quant::Bits::int4;
  return ork::make_error(-EINVAL, fmt::format("{} = {}: expected 8 or 4", what, v));
}

ork_status weight_scheme(const char* fn, const ork_quant_options* options, int64_t k,
                         ork::quant::WeightScheme* s) {
  ork_quant_options o;
  if (auto st = read_options(fn, options, &o); st != ORK_OK) return st;
  auto bits = bits_of("weight_bits", o.weight_bits);
  if (!bits) return fail(ORK_E_INVALID_ARGUMENT, fmt::format("{}: {}", fn, bits.error().message));
  *s = ork::quant::WeightScheme{.bits = *bits, .group = o.group};
  if (auto st = ork::quant::check_weight_scheme(*s, k); !st)
    return fail(ORK_E_INVALID_ARGUMENT, fmt::format("{}: {}", fn, st.error().message));
  return ORK_OK;
}

}  // namespace

ork_status ork::api::finish_qweights(const char* fn, ork_device* device, ork::Result<ork::quant::QuantWeights> q,
                                     ork_qweights** out) {
  if (!q) return fail(ork::make_error(q.error().code, fmt::format("{}: {}", fn, q.error().message)));
  std::lock_guard lock(device->mutex);  // the device's queue (device.h)
  auto impl = device->backend->make_quant(std::move(*q));
  if (!impl) return fail(ork::make_error(impl.error().code, fmt::format("{}: {}", fn, impl.error().message)));
  auto w = std::make_unique<ork_qweights>();
  w->keep_device = ork::api::DeviceRef(device);
  w->device = device;
  w->impl = std::move(*impl);
  *out = w.release();
  return ork::api::ok();
}

extern "C" {

ORK_API ork_status ork_qweights_packed_bytes(int64_t k, int64_t n, const ork_quant_options* options, uint64_t* bytes) {
  constexpr const char* fn = "ork_qweights_packed_bytes";
  return guarded([&] {
    if (bytes == nullptr) return fail(ORK_E_INVALID_ARGUMENT, fmt::format("{}: bytes is NULL", fn));
    if (auto s = check_dim(fn, "K", k); s != ORK_OK) return s;
    if (auto s = check_dim(fn, "N", n); s != ORK_OK) return s;
    ork::quant::WeightScheme scheme;
    if (auto s = weight_scheme(fn, options, k, &scheme); s != ORK_OK) return s;
    auto b = ork::quant::npu_int8_copy_bytes(k, n, scheme);
    if (!b) return fail(ork::make_error(b.error().code, fmt::format("{}: {}", fn, b.error().message)));
    *bytes = static_cast<uint64_t>(*b);
    return ork::api::ok();
  });
}

ORK_API ork_status ork_qweights_create(ork_device* device, const float* w, int64_t k, int64_t n,
                                       const ork_quant_options* options, ork_qweights** out) {
  constexpr const char* fn = "ork_qweights_create";
  return guarded([&] {
    if (out == nullptr) return fail(ORK_E_INVALID_ARGUMENT, fmt::format("{}: out is NULL", fn));
    *out = nullptr;
    if (device == nullptr) return fail(ORK_E_INVALID_ARGUMENT, fmt::format("{}: device is NULL", fn));
    if (w == nullptr) return fail(ORK_E_INVALID_ARGUMENT, fmt::format("{}: w is NULL", fn));
    if (auto s = check_dim(fn, "K", k); s != ORK_OK) return s;
    if (auto s = check_dim(fn, "N", n); s != ORK_OK) return s;
    ork::quant::WeightScheme scheme;
    if (auto s = weight_scheme(fn, options, k, &scheme); s != ORK_OK) return s;
    const std::span<const float> ws{w, static_cast<size_t>(k * n)};
    return ork::api::finish_qweights(fn, device, ork::quant::QuantWeights::quantise(ws, k, n, scheme), out);
  });
}

ORK_API ork_status ork_qweights_import(ork_device* device, const void* codes, const float* scales,
                                       int64_t k, int64_t n, const ork_quant_options* options,
                                       ork_qweights** out) {
  constexpr const char* fn = "ork_qweights_import";
  return guarded([&] {
    if (out == nullptr) return fail(ORK_E_INVALID_ARGUMENT, fmt::format("{}: out is NULL", fn));
    *out = nullptr;
    if (device == nullptr) return fail(ORK_E_INVALID_ARGUMENT, fmt::format("{}: device is NULL", fn));
    if (codes == nullptr) return fail(ORK_E_INVALID_ARGUMENT, fmt::format("{}: codes is NULL", fn));
    if (scales == nullptr) return fail(ORK_E_INVALID_ARGUMENT, fmt::format("{}: scales is NULL", fn));
    if (auto s = check_dim(fn, "K", k); s != ORK_OK) return s;
    if (auto s = check_dim(fn, "N", n); s != ORK_OK) return s;
    ork::quant::WeightScheme scheme;
    if (auto s = weight_scheme(fn, options, k, &scheme); s != ORK_OK) return s;
    const auto code_bytes = static_cast<size_t>(ork::quant::QuantWeights::code_bytes(scheme.bits, k, n));
    const auto scale_count = static_cast<size_t>(ork::quant::group_count(scheme, k) * n);
    return ork::api::finish_qweights(fn, device,
                         ork::quant::QuantWeights::import({static_cast<const uint8_t*>(codes), code_bytes},
                                                          {scales, scale_count}, k, n, scheme),
                         out);
  });
}

ORK_API ork_status ork_qweights_export(const ork_qweights* weights, void* codes, size_t codes_bytes,
                                       float* scales, size_t scale_count) {
  constexpr const char* fn = "ork_qweights_export";
  return guarded([&] {
    if (weights == nullptr) return fail(ORK_E_INVALID_ARGUMENT, fmt::format("{}: weights is NULL", fn));
    const ork::quant::QuantWeights& q = weights->impl->weights();
    if (codes != nullptr && codes_bytes < q.codes().size())
      return fail(ORK_E_INVALID_ARGUMENT, fmt::format("{}: codes_bytes = {}: the codes need {}", fn, codes_bytes, q.codes().size()));
    if (scales != nullptr && scale_count < q.scales().size())
      return fail(ORK_E_INVALID_ARGUMENT, fmt::format("{}: scale_count = {}: the scales need {}", fn, scale_count, q.scales().size()));
    if (codes != nullptr) std::memcpy(codes, q.codes().data(), q.codes().size());
    if (scales != nullptr) std::memcpy(scales, q.scales().data(), q.scales().size() * sizeof(float));
    return ork::api::ok();
  });
}

ORK_API int64_t ork_qweights_groups(const ork_qweights* weights) {
  return weights == nullptr ? 0 : weights->impl->weights().groups();
}

ORK_API void ork_qweights_destroy(ork_qweights* weights) {
  if (weights == nullptr) return;
  const ork::api::DeviceRef keep = std::move(weights->keep_device);  // released after the unlock
  std::unique_lock<std::mutex> lock;
  if (weights->device) lock = std::unique_lock(weights->device->mutex);  // its BOs go under the queue
  delete weights;
}

ORK_API ork_status ork_qmatmul(ork_device* device, const ork_qweights* weights, const float* a, int64_t m,
                               float* c, const ork_qmatmul_options* options) {
  constexpr const char* fn = "ork_qmatmul";
  return guarded([&] {
    if (device == nullptr) return fail(ORK_E_INVALID_ARGUMENT, fmt::format("{}: device is NULL", fn));
    if (weights == nullptr) return fail(ORK_E_INVALID_ARGUMENT, fmt::format("{}: weights is NULL", fn));
    if (weights->device != device)
      return fail(ORK_E_INVALID_ARGUMENT, fmt::format("{}: the weights belong to another device", fn));
    if (a == nullptr) return fail(ORK_E_INVALID_ARGUMENT, fmt::format("{}: A is NULL", fn));
    if (c == nullptr) return fail(ORK_E_INVALID_ARGUMENT, fmt::format("{}: C is NULL", fn));
    if (auto s = check_dim(fn, "M", m); s != ORK_OK) return s;
    ork_qmatmul_options o;
    if (auto s = read_options(fn, options, &o); s != ORK_OK) return s;
    if (o.stats != nullptr)
      if (auto s = ork::api::check_out_struct(o.stats->struct_size, "ork_qmatmul: options.stats"); s != ORK_OK) return s;
    auto bits = bits_of("activation_bits", o.activation_bits);
    if (!bits) return fail(ORK_E_INVALID_ARGUMENT, fmt::format("{}: {}", fn, bits.error().message));
    if (o.per_row != 0 && o.per_row != 1)
      return fail(ORK_E_INVALID_ARGUMENT, fmt::format("{}: per_row = {}: expected 0 or 1", fn, o.per_row));
    const int max_cores = device->info.cores;
    if (o.cores < 0 || o.cores > max_cores)
      return fail(ORK_E_INVALID_ARGUMENT, fmt::format("{}: cores = {}: the device has 1..{}", fn, o.cores, max_cores));
    const ork::quant::QuantWeights& q = weights->impl->weights();
    std::lock_guard lock(device->mutex);
    // Counted in the device's statistics like every matmul (ork_device_get_stats): the NPU
    // backends' pack, submit, device and unpack figures; on cpu the whole multiply.
    ork::api::CallMeter meter(*device);
    const ork::quant::QRunOptions ro{.act = {.bits = *bits, .per_row = o.per_row == 1},
                                     .cores = o.cores == 0 ? max_cores : o.cores,
                                     .threads = o.cores,  // the cpu device's host threads
                                     .stats = &meter.run};
    auto s = device->backend->run_quant(*weights->impl, {a, static_cast<size_t>(m * q.k())}, m,
                                        {c, static_cast<size_t>(m * q.n())}, ro, meter);
    if (!s) return fail(ork::make_error(s.error().code, fmt::format("{}: {}", fn, s.error().message)));
    return meter.finish(o.stats);
  });
}

}  // extern "C"
