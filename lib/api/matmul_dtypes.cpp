// The dtype halves of ork_weights_create / ork_matmul (weights.h): which A and C a weights
// dtype takes, the w4a8 / W4A4 choice, and the CPU backend's reference calls, chosen so that
// every backend returns the same bytes (docs/dtypes.md).
#include <fmt/format.h>

#include <chrono>
#include <bit>
#include <cstring>
#include <mutex>
#include <string>

#include "lib/api/error.h"
#include "lib/api/weights.h"
#include "lib/matmul/layout.h"
#include "lib/ref/fast.h"
#include "lib/ref/fp16_matmul.h"
#include "lib/ref/oracle.h"

namespace ork::api {
namespace {

using matmul::DType;

const char* name_of(int32_t d) {
  switch (d) {
    case ORK_DTYPE_INT8: return "int8";
    case ORK_DTYPE_FP16: return "fp16";
    case ORK_DTYPE_INT4: return "int4";
    case ORK_DTYPE_INT32: return "int32";
    case ORK_DTYPE_FP32: return "fp32";
  }
  return "unknown";
}

std::string dtype_text(int32_t d) { return fmt::format("{} ({})", name_of(d), d); }

size_t sz(int64_t v) { return static_cast<size_t>(v); }

// The K-slice width every backend uses for fp16 (the planner's): the CPU reference adds
// fp32 partials of the same slices in the same order, so cpu == emu bit for bit.
Result<int64_t> fp16_slice_k(int64_t k, int64_t n) {
  auto p = matmul::make_plan({1, k, n}, {.dtype = DType::fp16, .cores = 1, .mc_cap = 0});
  if (!p) return p.error();
  return p->slice_k;
}

// A and C dtypes of one call, after defaults; errors name both dtypes.
struct CallTypes {
  int32_t a = 0, c = 0;
};

ork_status resolve_types(const ork_weights& w, const ork_matmul_options& o, CallTypes* t) {
  t->a = o.a_dtype == 0 ? w.dtype : o.a_dtype;
  t->c = o.c_dtype != 0 ? o.c_dtype : w.dtype == ORK_DTYPE_FP16 ? ORK_DTYPE_FP32 : ORK_DTYPE_INT32;
  const bool a_ok = t->a == w.dtype || (w.dtype == ORK_DTYPE_INT4 && t->a == ORK_DTYPE_INT8);
  if (!a_ok)
    return fail(ORK_E_INVALID_ARGUMENT,
                fmt::format("ork_matmul: a_dtype {} with {} weights: expected {}{}", dtype_text(t->a),
                            name_of(w.dtype), name_of(w.dtype), w.dtype == ORK_DTYPE_INT4 ? " (W4A4) or int8 (w4a8)" : ""));
  const bool c_ok = w.dtype == ORK_DTYPE_FP16 ? (t->c == ORK_DTYPE_FP32 || t->c == ORK_DTYPE_FP16) : t->c == ORK_DTYPE_INT32;
  if (!c_ok)
    return fail(ORK_E_INVALID_ARGUMENT,
                fmt::format("ork_matmul: c_dtype {} with {} weights: expected {}", dtype_text(t->c), name_of(w.dtype),
                            w.dtype == ORK_DTYPE_FP16 ? "fp32 or fp16" : "int32"));
  return ORK_OK;
}

// `cores`: the NPU cores the caller asked for (0 = all: as many host threads as the shape
// needs, up to the machine's), run as host threads of every dtype's path. Integer sums are
// exact, and the fp16 path keeps each cell's order whatever the threads, so the thread count
// never changes a byte (lib/ref/fast.h, lib/ref/fp16_matmul.h).
// `*threads` receives the host threads the multiply ran on.
ork_status run_cpu(const ork_weights& w, const CallTypes& t, const void* a, int64_t m, void* c, int cores,
                   int* threads) {
  const ref::Dims d{m, w.k, w.n};
  const ref::FastOptions fo{.threads = cores, .threads_used = threads};
  *threads = 1;
  const size_t mk = sz(m * w.k), mn = sz(m * w.n);
  Status s;
  if (w.dtype == ORK_DTYPE_FP16) {
    auto slice = fp16_slice_k(w.k, w.n);
    if (!slice) return fail(slice.error());
    std::span<const uint16_t> av{static_cast<const uint16_t*>(a), mk};
    const ref::Fp16Options ho{.threads = cores, .threads_used = threads};
    s = t.c == ORK_DTYPE_FP16
            ? ref::matmul_fp16_rows_to_fp16(av, w.host_fp16, {static_cast<uint16_t*>(c), mn}, d, *slice, ho)
            : ref::matmul_fp16_rows(av, w.host_fp16, {static_cast<float*>(c), mn}, d, *slice, ho);
  } else if (t.a == ORK_DTYPE_INT4) {  // W4A4: exact integer sums, as the sliced NPU path
    std::vector<int8_t> wide(mk);
    s = matmul::widen_int4({static_cast<const uint8_t*>(a), sz(matmul::int4_packed_bytes(m * w.k))}, m * w.k, wide);
    if (s) s = ref::matmul_int8_packed(wide, m, w.host_packed, std::span<int32_t>{static_cast<int32_t*>(c), mn}, fo);
  } else {  // int8, and w4a8 (int8 A x widened int4 W)
    s = ref::matmul_int8_packed({static_cast<const int8_t*>(a), mk}, m, w.host_packed,
                                std::span<int32_t>{static_cast<int32_t*>(c), mn}, fo);
  }
  if (!s) return fail(s.error());
  return ok();
}

}  // namespace

ork_status call_dtypes(const ork_weights& w, const ork_matmul_options& o, int32_t* a_dtype, int32_t* c_dtype) {
  CallTypes t;
  if (auto st = resolve_types(w, o, &t); st != ORK_OK) return st;
  *a_dtype = t.a;
  *c_dtype = t.c;
  return ORK_OK;
}

ork_status check_weights_dtype(int dtype) {
  if (dtype == ORK_DTYPE_INT8 || dtype == ORK_DTYPE_FP16 || dtype == ORK_DTYPE_INT4) return ORK_OK;
  if (dtype == ORK_DTYPE_INT32 || dtype == ORK_DTYPE_FP32)
    return fail(ORK_E_INVALID_ARGUMENT,
                fmt::format("ork_weights_create: dtype {} is an output dtype; weights are int8, fp16 or int4",
                            dtype_text(static_cast<ork_dtype>(dtype))));
  return fail(ORK_E_INVALID_ARGUMENT, fmt::format("ork_weights_create: dtype {} is not a dtype (int8 1, fp16 2, int4 3)",
                                                  dtype));
}

ork_status fill_weights(ork_device& device, ork_weights& w, const void* data) {
  const size_t kn = sz(w.k * w.n);
  if (device.kmd) {
    const DType dt = w.dtype == ORK_DTYPE_FP16 ? DType::fp16 : w.dtype == ORK_DTYPE_INT4 ? DType::int4 : DType::int8;
    auto r = matmul::ResidentWeights::create(*device.kmd, dt, w.k, w.n, data);
    if (!r) return fail(r.error());
    w.resident = std::move(*r);
    if (w.dtype == ORK_DTYPE_INT4) {
      const auto* p = static_cast<const uint8_t*>(data);
      w.packed.assign(p, p + matmul::int4_packed_bytes(w.k * w.n));
    }
    return ok();
  }
  if (w.dtype == ORK_DTYPE_FP16) {
    const auto* p = static_cast<const uint16_t*>(data);
    w.host_fp16.assign(p, p + kn);
  } else {
    std::vector<int8_t> wide;  // int4 widened to one int8 per value
    std::span<const int8_t> b{static_cast<const int8_t*>(data), kn};
    if (w.dtype == ORK_DTYPE_INT4) {
      wide.resize(kn);
      auto s = matmul::widen_int4({static_cast<const uint8_t*>(data), sz(matmul::int4_packed_bytes(w.k * w.n))},
                                  w.k * w.n, wide);
      if (!s) return fail(s.error());
      b = wide;
    }
    auto packed = ref::pack_b_int8(b, w.k, w.n, ref::BOrder::row_major);
    if (!packed) return fail(packed.error());
    w.host_packed = std::move(*packed);
  }
  w.host_bytes = static_cast<int64_t>(w.host_packed.bytes() + w.host_fp16.size() * sizeof(uint16_t));
  add_host_weight_bytes(device, w.host_bytes);
  return ok();
}

ork_status npu_call(ork_device& device, const ork_weights& w, const ork_matmul_options& o, const matmul::RunOptions& run,
                    const matmul::ResidentWeights** rw_out, matmul::RunOptions* ro_out) {
  CallTypes t;
  if (auto st = resolve_types(w, o, &t); st != ORK_OK) return st;
  const matmul::ResidentWeights* rw = w.resident.get();
  if (w.dtype == ORK_DTYPE_INT4 && t.a == ORK_DTYPE_INT8) {  // w4a8: the int8-wide copy
    if (!w.resident_w4a8) {
      auto r = matmul::ResidentWeights::create_w4a8(*device.kmd, w.k, w.n, w.packed.data());
      if (!r) return fail(r.error());
      w.resident_w4a8 = std::move(*r);
    }
    rw = w.resident_w4a8.get();
  }
  *ro_out = run;
  ro_out->mc_cap = o.mc_cap;
  ro_out->fp16_out = t.c == ORK_DTYPE_FP16;
  *rw_out = rw;
  return ORK_OK;
}

ork_status run_cpu_call(const ork_weights& w, const void* a, int64_t m, void* c, const ork_matmul_options& o,
                        CallMeter& meter) {
  CallTypes t;
  if (auto st = resolve_types(w, o, &t); st != ORK_OK) return st;
  const auto t0 = std::chrono::steady_clock::now();
  // A core_mask's bit count or `cores` as host threads; 0: as many as the shape needs.
  int threads = 0;
  const ork_status st = run_cpu(w, t, a, m, c, o.core_mask != 0 ? std::popcount(o.core_mask) : o.cores, &threads);
  meter.cpu_threads = static_cast<uint64_t>(threads);
  meter.host_device_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count();
  return st;
}

ork_status run_matmul(ork_device& device, const ork_weights& w, const void* a, int64_t m, void* c,
                      const ork_matmul_options& o, const matmul::RunOptions& run, CallMeter& meter) {
  std::lock_guard lock(device.mutex);  // the device's queue (device.h): one call at a time
  if (!device.kmd) return run_cpu_call(w, a, m, c, o, meter);
  const matmul::ResidentWeights* rw = nullptr;
  matmul::RunOptions ro;
  if (auto st = npu_call(device, w, o, run, &rw, &ro); st != ORK_OK) return st;
  auto s = device.runner->run(*rw, a, m, c, ro, &meter.run);
  if (!s) return fail(s.error());
  return ok();
}

}  // namespace ork::api
