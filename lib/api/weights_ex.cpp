// ork_weights_create_ex: weights in the layouts engines hold (K x N or N x K, a row stride),
// packed straight into the native layout (lib/matmul/layout_source.h; docs/library.md
// "Engine layouts"). Bit-exact with ork_weights_create of the same values as dense K x N.
#include <cstring>
#include <mutex>
#include <memory>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "driver/common/int4.h"
#include "lib/api/error.h"
#include "lib/api/stats.h"
#include "lib/api/weights.h"
#include "lib/matmul/layout.h"
#include "lib/ref/fast.h"
#include "lib/ref/fp16_matmul.h"

using ork::api::fail;

namespace {

constexpr const char* kFn = "ork_weights_create_ex";
constexpr int64_t kExMaxDim = int64_t{1} << 24;      // as api.cpp: byte counts far from overflow
constexpr int64_t kMaxStride = int64_t{1} << 31;   // elements; keeps (rows-1)*stride < 2^55

}  // namespace

namespace ork::api {
namespace {

size_t sz(int64_t v) { return static_cast<size_t>(v); }

// Element (k, n) of the source, as an index into its element (int4: nibble) stream.
struct Index {
  bool n_by_k;
  int64_t ld;
  int64_t operator()(int64_t k, int64_t n) const { return n_by_k ? n * ld + k : k * ld + n; }
};

// The K x N int4 stream (element k*N + n) of a source: what the w4a8 copy is made from.
std::vector<uint8_t> int4_k_by_n(const ork_weights& w, const uint8_t* src, Index at) {
  std::vector<uint8_t> out(sz(matmul::int4_packed_bytes(w.k * w.n)), 0);
  for (int64_t k = 0; k < w.k; ++k)
    for (int64_t n = 0; n < w.n; ++n) {
      int4::put(out.data(), k * w.n + n, int4::code_at(src, at(k, n)));
    }
  return out;
}

// cpu backend, int8 and int4: the values as dense int8 in the source's own orientation (a
// dense int8 source is used as it is), then lib/ref's packer in that order.
ork_status fill_cpu_int(ork_weights& w, const matmul::WeightSource& src, Index at) {
  const int64_t rows = src.n_by_k ? w.n : w.k, cols = src.n_by_k ? w.k : w.n;
  std::vector<int8_t> dense;
  const int8_t* b = static_cast<const int8_t*>(src.data);
  if (w.dtype == ORK_DTYPE_INT4 || at.ld != cols) {
    dense.resize(sz(rows * cols));
    const auto* p = static_cast<const uint8_t*>(src.data);
    for (int64_t r = 0; r < rows; ++r) {
      int8_t* d = dense.data() + r * cols;
      if (w.dtype == ORK_DTYPE_INT4) {
        for (int64_t c = 0; c < cols; ++c) d[c] = int4::value_at(p, r * at.ld + c);
      } else {
        std::memcpy(d, b + r * at.ld, sz(cols));
      }
    }
    b = dense.data();
  }
  auto packed = ref::pack_b_int8({b, sz(rows * cols)}, w.k, w.n,
                                 src.n_by_k ? ref::BOrder::column_major : ref::BOrder::row_major);
  if (!packed) return fail(packed.error());
  w.host.packed = std::move(*packed);
  return ok();
}

}  // namespace


std::vector<uint8_t> int4_stream_from(const ork_weights& w, const matmul::WeightSource& src) {
  return int4_k_by_n(w, static_cast<const uint8_t*>(src.data), Index{src.n_by_k, matmul::source_stride(w.k, w.n, src)});
}

ork_status host_weights_from(ork_weights& w, const matmul::WeightSource& src) {
  const Index at{src.n_by_k, matmul::source_stride(w.k, w.n, src)};
  w.host = matmul::HostWeights{.dtype = internal_dtype(w.dtype), .k = w.k, .n = w.n};
  if (w.dtype == ORK_DTYPE_FP16) {  // dense K x N bit patterns, then the fp16 kernels' strips
    const auto* p = static_cast<const uint16_t*>(src.data);
    std::vector<uint16_t> dense(sz(w.k * w.n));
    for (int64_t k = 0; k < w.k; ++k)
      for (int64_t n = 0; n < w.n; ++n) dense[sz(k * w.n + n)] = p[at(k, n)];
    auto packed = ref::pack_b_fp16(dense, w.k, w.n);
    if (!packed) return fail(packed.error());
    w.host.fp16 = std::move(*packed);
    return ok();
  }
  return fill_cpu_int(w, src, at);
}

ork_status dense_values(const ork_weights& w, std::vector<uint8_t>& out) {
  const int64_t kn = w.k * w.n;
  if (w.dtype == ORK_DTYPE_FP16) {
    std::vector<uint16_t> halves(sz(kn));
    if (auto s = ref::unpack_b_fp16(w.host.fp16, halves); !s) return fail(s.error());
    out.resize(sz(kn * 2));
    std::memcpy(out.data(), halves.data(), out.size());
    return ok();
  }
  std::vector<int8_t> values(sz(kn));
  if (auto s = ref::unpack_b_int8(w.host.packed, values); !s) return fail(s.error());
  if (w.dtype == ORK_DTYPE_INT8) {
    out.assign(reinterpret_cast<const uint8_t*>(values.data()), reinterpret_cast<const uint8_t*>(values.data()) + kn);
    return ok();
  }
  out.assign(sz(matmul::int4_packed_bytes(kn)), 0);  // int4: the widened values, two per byte again
  for (int64_t i = 0; i < kn; ++i) int4::put(out.data(), i, values[sz(i)]);
  return ok();
}

}  // namespace ork::api

namespace {

ork_status check_desc(const ork_weights_desc& d) {
  for (auto [what, v] : {std::pair{"k", d.k}, std::pair{"n", d.n}})
    if (v < 1 || v > kExMaxDim)
      return fail(ORK_E_INVALID_ARGUMENT, fmt::format("{}: desc.{} = {}: must be in 1..{}", kFn, what, v, kExMaxDim));
  const int dtype = ork::api::enum_value(d.dtype);  // any int a C caller stored: read as one (weights.h)
  if (ork::matmul::weights_dtype(dtype) == nullptr)
    return fail(ORK_E_INVALID_ARGUMENT, fmt::format("{}: desc.dtype = {}: weights are int8 (1), fp16 (2) or int4 (3)", kFn,
                                                    dtype));
  if (d.layout != ORK_LAYOUT_K_BY_N && d.layout != ORK_LAYOUT_N_BY_K)
    return fail(ORK_E_INVALID_ARGUMENT, fmt::format("{}: desc.layout = {}: expected ORK_LAYOUT_K_BY_N (0) or "
                                                    "ORK_LAYOUT_N_BY_K (1)", kFn, d.layout));
  const bool nk = d.layout == ORK_LAYOUT_N_BY_K;
  const int64_t row = nk ? d.k : d.n;
  if (d.row_stride < 0 || d.row_stride > kMaxStride)
    return fail(ORK_E_INVALID_ARGUMENT, fmt::format("{}: desc.row_stride = {}: must be 0 (dense) or in {}..{}", kFn,
                                                    d.row_stride, row, kMaxStride));
  if (d.row_stride != 0 && d.row_stride < row)
    return fail(ORK_E_INVALID_ARGUMENT, fmt::format("{}: desc.row_stride = {} is smaller than a row of the {} layout ({} = {} "
                                                    "elements)", kFn, d.row_stride, nk ? "N x K" : "K x N", nk ? "K" : "N", row));
  if (d.data == nullptr) return fail(ORK_E_INVALID_ARGUMENT, fmt::format("{}: desc.data is NULL", kFn));
  return ORK_OK;
}

}  // namespace

extern "C" {

ORK_API ork_status ork_weights_create_ex(ork_device* device, const ork_weights_desc* desc, ork_weights** out) {
  return ork::api::guarded([&] {
    if (out == nullptr) return fail(ORK_E_INVALID_ARGUMENT, fmt::format("{}: out is NULL", kFn));
    *out = nullptr;
    if (device == nullptr) return fail(ORK_E_INVALID_ARGUMENT, fmt::format("{}: device is NULL", kFn));
    if (desc == nullptr) return fail(ORK_E_INVALID_ARGUMENT, fmt::format("{}: desc is NULL", kFn));
    if (desc->struct_size == 0)
      return fail(ORK_E_INVALID_ARGUMENT, fmt::format("{}: desc.struct_size = 0: set it to sizeof(ork_weights_desc)", kFn));
    if (desc->struct_size > sizeof(ork_weights_desc))
      return fail(ORK_E_INVALID_ARGUMENT, fmt::format("{}: desc.struct_size = {} is larger than this library knows ({})", kFn,
                                                      desc->struct_size, sizeof(ork_weights_desc)));
    ork_weights_desc d{};  // struct_size rules: fields past the caller's struct_size keep defaults
    std::memcpy(&d, desc, desc->struct_size);
    if (auto s = check_desc(d); s != ORK_OK) return s;
    auto w = std::make_unique<ork_weights>();
    w->keep_device = ork::api::DeviceRef(device);
    w->device = device;
    w->dtype = d.dtype;
    w->k = d.k;
    w->n = d.n;
    const ork::matmul::WeightSource src{.data = d.data, .n_by_k = d.layout == ORK_LAYOUT_N_BY_K, .row_stride = d.row_stride};
    std::lock_guard lock(device->mutex);  // the device's queue (device.h)
    if (auto s = device->backend->make_weights_from(*w, src); s != ORK_OK) return s;
    *out = w.release();
    return ork::api::ok();
  });
}

}  // extern "C"
