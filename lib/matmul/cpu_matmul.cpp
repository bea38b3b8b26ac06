// The CPU reference's weights and kernels per dtype (cpu_matmul.h).
#include "lib/matmul/cpu_matmul.h"

#include <span>
#include <utility>

#include "lib/matmul/layout.h"
#include "lib/matmul/plan.h"
#include "lib/ref/fp16_matmul.h"

namespace ork::matmul {
namespace {

size_t sz(int64_t v) { return static_cast<size_t>(v); }

// The K-slice width every backend uses for fp16 (the planner's): the CPU reference adds
// fp32 partials of the same slices in the same order, so cpu == emu bit for bit.
Result<int64_t> fp16_slice_k(int64_t k, int64_t n) {
  auto p = make_plan({1, k, n}, {.dtype = DType::fp16, .cores = 1, .mc_cap = 0});
  if (!p) return p.error();
  return p->slice_k;
}

Result<HostWeights> packed_int8(DType dtype, int64_t k, int64_t n, std::span<const int8_t> b) {
  auto packed = ref::pack_b_int8(b, k, n, ref::BOrder::row_major);
  if (!packed) return packed.error();
  HostWeights w{.dtype = dtype, .k = k, .n = n};
  w.packed = std::move(*packed);
  return w;
}

}  // namespace

Result<HostWeights> host_weights_int8(int64_t k, int64_t n, const void* data) {
  return packed_int8(DType::int8, k, n, {static_cast<const int8_t*>(data), sz(k * n)});
}

Result<HostWeights> host_weights_fp16(int64_t k, int64_t n, const void* data) {
  auto packed = ref::pack_b_fp16({static_cast<const uint16_t*>(data), sz(k * n)}, k, n);
  if (!packed) return packed.error();
  HostWeights w{.dtype = DType::fp16, .k = k, .n = n};
  w.fp16 = std::move(*packed);
  return w;
}

Result<HostWeights> host_weights_int4(int64_t k, int64_t n, const void* data) {
  std::vector<int8_t> wide(sz(k * n));  // one int8 per value
  auto s = widen_int4({static_cast<const uint8_t*>(data), sz(int4_packed_bytes(k * n))}, k * n, wide);
  if (!s) return s.error();
  return packed_int8(DType::int4, k, n, wide);
}

Status cpu_matmul_int8(const HostWeights& w, const CpuCall& call) {
  const ref::FastOptions fo{.threads = call.threads, .threads_used = call.threads_used};
  return ref::matmul_int8_packed({static_cast<const int8_t*>(call.a), sz(call.m * w.k)}, call.m, w.packed,
                                 std::span<int32_t>{static_cast<int32_t*>(call.c), sz(call.m * w.n)}, fo);
}

Status cpu_matmul_fp16(const HostWeights& w, const CpuCall& call) {
  auto slice = fp16_slice_k(w.k, w.n);
  if (!slice) return slice.error();
  const size_t mk = sz(call.m * w.k), mn = sz(call.m * w.n);
  std::span<const uint16_t> av{static_cast<const uint16_t*>(call.a), mk};
  const ref::Fp16Options ho{.threads = call.threads, .threads_used = call.threads_used};
  if (call.c_code == kCodeFp16)
    return ref::matmul_fp16_packed_to_fp16(av, call.m, w.fp16, {static_cast<uint16_t*>(call.c), mn}, *slice, ho);
  return ref::matmul_fp16_packed(av, call.m, w.fp16, {static_cast<float*>(call.c), mn}, *slice, ho);
}

Status cpu_matmul_int4(const HostWeights& w, const CpuCall& call) {
  if (call.a_code != kCodeInt4) return cpu_matmul_int8(w, call);  // w4a8: int8 A x widened int4 W
  // W4A4: exact integer sums, as the sliced NPU path.
  const int64_t mk = call.m * w.k;
  std::vector<int8_t> wide(sz(mk));
  if (auto s = widen_int4({static_cast<const uint8_t*>(call.a), sz(int4_packed_bytes(mk))}, mk, wide); !s) return s;
  CpuCall wide_call = call;
  wide_call.a = wide.data();
  return cpu_matmul_int8(w, wide_call);
}

}  // namespace ork::matmul
