// ork_matmul_t, the sync matmul on tensors; ork_matmul is its case of two dense host
// tensors (api.cpp). The runner takes dense row-major A and C: a strided operand is
// gathered / scattered here, a buffer operand synced around the library's CPU accesses
// (docs/library.md "Buffers and tensors").
#include <bit>
#include <cstring>
#include <mutex>
#include <vector>

#include <fmt/format.h>

#include "lib/api/error.h"
#include "lib/api/matmul_t.h"
#include "lib/api/stats.h"
#include "lib/api/struct_size.h"
#include "lib/api/tensor.h"
#include "lib/api/weights.h"

namespace ork::api {
namespace {

// core_mask: bits only below the device's core count; with a mask, cores is 0 or its count.
ork_status check_core_mask(const char* call, const ork_matmul_options& o, int max_cores) {
  if (o.core_mask == 0) return ORK_OK;
  const uint32_t valid = max_cores >= 32 ? ~0u : (1u << max_cores) - 1;
  if ((o.core_mask & ~valid) != 0)
    return fail(ORK_E_INVALID_ARGUMENT,
                fmt::format("{}: core_mask = 0x{:x}: bit {} is beyond the device's {} core{} (masks 0x1..0x{:x})",
                            call, o.core_mask, 31 - std::countl_zero(o.core_mask & ~valid), max_cores, max_cores == 1 ? "" : "s",
                            valid));
  if (o.cores != 0 && o.cores != std::popcount(o.core_mask))
    return fail(ORK_E_INVALID_ARGUMENT, fmt::format("{}: cores = {} with core_mask = 0x{:x} ({} cores): give one "
                                                    "or make them agree", call, o.cores, o.core_mask, std::popcount(o.core_mask)));
  return ORK_OK;
}

}  // namespace
ork_status check_matmul_options(const char* call, const ork_device& device, const ork_matmul_options* options,
                                ork_matmul_options* opt, matmul::RunOptions* run) {
  if (auto s = read_options(call, options, opt); s != ORK_OK) return s;
  const int max_cores = device.info.cores;
  if (opt->cores < 0 || opt->cores > max_cores)
    return fail(ORK_E_INVALID_ARGUMENT, fmt::format("{}: cores = {}: the device has 1..{}", call, opt->cores, max_cores));
  if (opt->mc_cap < 0)
    return fail(ORK_E_INVALID_ARGUMENT, fmt::format("{}: mc_cap = {}: must be >= 0", call, opt->mc_cap));
  if (auto s = check_core_mask(call, *opt, max_cores); s != ORK_OK) return s;
  if (opt->stats != nullptr)
    if (auto s = check_out_struct(opt->stats->struct_size, fmt::format("{}: options.stats", call).c_str()); s != ORK_OK)
      return s;
  *run = matmul::RunOptions{.cores = opt->cores == 0 ? max_cores : opt->cores, .core_mask = opt->core_mask};
  return ORK_OK;
}

namespace {

// Every check of a call before its operands' own: device, weights, A and C given, M,
// options, dtypes (resolved here, once). Fills t's call, m, opt, run, types and operands.
ork_status check_call(const char* call, ork_device* device, const ork_weights* weights, bool a_given, int64_t m,
                      bool c_given, const ork_matmul_options* options, TensorCall* t) {
  t->call = call;
  if (device == nullptr) return fail(ORK_E_INVALID_ARGUMENT, fmt::format("{}: device is NULL", call));
  if (weights == nullptr) return fail(ORK_E_INVALID_ARGUMENT, fmt::format("{}: weights is NULL", call));
  if (weights->device != device)
    return fail(ORK_E_INVALID_ARGUMENT, fmt::format("{}: the weights belong to another device", call));
  if (!a_given) return fail(ORK_E_INVALID_ARGUMENT, fmt::format("{}: A is NULL", call));
  if (!c_given) return fail(ORK_E_INVALID_ARGUMENT, fmt::format("{}: C is NULL", call));
  if (m < 1) return fail(ORK_E_INVALID_ARGUMENT, fmt::format("M = {}: must be >= 1", m));
  if (m > kMaxDim) return fail(ORK_E_INVALID_ARGUMENT, fmt::format("M = {}: larger than {} is not supported", m, kMaxDim));
  if (auto s = check_matmul_options(call, *device, options, &t->opt, &t->run); s != ORK_OK) return s;
  if (auto s = call_dtypes(*weights, t->opt, &t->types); s != ORK_OK) return s;
  t->m = m;
  t->a_op = Operand{.call = call, .name = "A", .rows = m, .cols = weights->k, .dtype = t->types.a};
  t->c_op = Operand{.call = call, .name = "C", .rows = m, .cols = weights->n, .dtype = t->types.c};
  return ORK_OK;
}

}  // namespace

ork_status begin_tensor_call(const char* call, ork_device* device, const ork_weights* weights, const ork_tensor* a,
                             int64_t m, const ork_tensor* c, const ork_matmul_options* options, TensorCall* t) {
  if (auto s = check_call(call, device, weights, a != nullptr, m, c != nullptr, options, t); s != ORK_OK) return s;
  if (auto s = resolve_tensor(*device, a, t->a_op, &t->a_ref); s != ORK_OK) return s;
  if (auto s = resolve_tensor(*device, c, t->c_op, &t->c_ref); s != ORK_OK) return s;
  t->a_use = BufferUse(t->a_ref.buffer);
  t->c_use = BufferUse(t->c_ref.buffer);
  // Shared buffers: the CPU accesses of this call bracketed by dma-buf syncs (buffer.h).
  if (t->a_ref.buffer) {
    if (auto s = buffer_begin_cpu(*t->a_ref.buffer, false, call); s != ORK_OK) return s;
    t->a_started = true;
  }
  if (t->c_ref.buffer) {
    if (auto s = buffer_begin_cpu(*t->c_ref.buffer, true, call); s != ORK_OK) return finish_tensor_call(*t, s);
    t->c_started = true;
  }
  t->a = dense_input(t->a_ref, t->a_op, t->a_scratch);
  t->c = output_target(t->c_ref, t->c_op, t->c_scratch);
  return ORK_OK;
}

ork_status finish_tensor_call(TensorCall& t, ork_status run) {
  if (run == ORK_OK && t.c != nullptr) scatter_output(t.c_ref, t.c_op, t.c_scratch);
  // END always follows START, also after a failed run (the first error's message stays).
  ork_status end_a = ORK_OK, end_c = ORK_OK;
  if (t.a_started) end_a = buffer_end_cpu(*t.a_ref.buffer, false, t.call);
  if (t.c_started) end_c = buffer_end_cpu(*t.c_ref.buffer, true, t.call);
  t.a_started = t.c_started = false;
  t.a_use.reset();
  t.c_use.reset();
  if (run != ORK_OK) return run;
  if (end_a != ORK_OK) return end_a;
  return end_c;
}

ork_status matmul_tensors(const char* call, ork_device* device, const ork_weights* weights, const ork_tensor* a,
                          int64_t m, const ork_tensor* c, const ork_matmul_options* options) {
  if (device == nullptr) return fail(ORK_E_INVALID_ARGUMENT, fmt::format("{}: device is NULL", call));
  std::lock_guard lock(device->mutex);  // the device's queue (device.h): the call's one lock
  TensorCall t;
  if (auto s = begin_tensor_call(call, device, weights, a, m, c, options, &t); s != ORK_OK) return s;
  CallMeter meter(*device);
  const ork_status run = device->backend->multiply(*weights, t.types, t.a, m, t.c, t.opt, t.run, meter);
  if (auto s = finish_tensor_call(t, run); s != ORK_OK) return s;
  return meter.finish(t.opt.stats);
}

ork_status matmul_dense(const char* call, ork_device* device, const ork_weights* weights, const void* a, int64_t m,
                        void* c, const ork_matmul_options* options) {
  if (device == nullptr) return fail(ORK_E_INVALID_ARGUMENT, fmt::format("{}: device is NULL", call));
  std::lock_guard lock(device->mutex);  // the device's queue (device.h): the call's one lock
  TensorCall t;
  if (auto s = check_call(call, device, weights, a != nullptr, m, c != nullptr, options, &t); s != ORK_OK) return s;
  if (auto s = check_host_aligned(t.a_op, a); s != ORK_OK) return s;
  if (auto s = check_host_aligned(t.c_op, c); s != ORK_OK) return s;
  CallMeter meter(*device);
  if (auto s = device->backend->multiply(*weights, t.types, a, m, c, t.opt, t.run, meter); s != ORK_OK) return s;
  return meter.finish(t.opt.stats);
}

}  // namespace ork::api

extern "C" {

ORK_API ork_status ork_matmul_t(ork_device* device, const ork_weights* weights, const ork_tensor* a, int64_t m,
                                const ork_tensor* c, const ork_matmul_options* options) {
  return ork::api::guarded([&] { return ork::api::matmul_tensors("ork_matmul_t", device, weights, a, m, c, options); });
}

}  // extern "C"
