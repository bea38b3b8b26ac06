// Packing weights from the layouts engines hold (layout_source.h). The native block keeps
// each kernel's K values in runs of 32 (weight_index: (n % wa) * 32 + k % 32), so every
// dtype is "for each kernel n, for each run of 32 K values": a copy from an N x K row, a
// gather down a K x N column.
#include "lib/matmul/layout_source.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>

#include "driver/common/int4.h"
#include "driver/common/npu_layout.h"
#include "lib/matmul/layout.h"

namespace ork::matmul {
namespace {

constexpr int64_t kRun = hw::kKBlock;  // K values per kernel per native block (npu_layout.h)

int64_t elem_bytes(DType d) { return element_bits(d) / 8; }  // int4: handled as nibbles

// Copies `len` elements from source element index `from` to native element index `to`.
void copy_run(DType d, const uint8_t* src, int64_t from, uint8_t* dst, int64_t to, int64_t len) {
  if (d != DType::int4) {
    const int64_t e = elem_bytes(d);
    std::memcpy(dst + to * e, src + from * e, static_cast<size_t>(len * e));
    return;
  }
  if (from % 2 == 0 && to % 2 == 0) {  // byte-aligned runs: whole bytes, then one last nibble
    std::memcpy(dst + to / 2, src + from / 2, static_cast<size_t>(len / 2));
    if (len % 2 == 1) int4::put(dst, to + len - 1, int4::code_at(src, from + len - 1));
    return;
  }
  for (int64_t i = 0; i < len; ++i) int4::put(dst, to + i, int4::code_at(src, from + i));
}

// One element from source index `from` to native index `to`.
void copy_one(DType d, const uint8_t* src, int64_t from, uint8_t* dst, int64_t to) {
  if (d == DType::int4) int4::put(dst, to, int4::code_at(src, from));
  else if (d == DType::fp16) std::memcpy(dst + to * 2, src + from * 2, 2);
  else dst[to] = src[from];
}

int64_t source_slice_kt(const Plan& p, int64_t s) { return std::min(p.slice_k, p.kp - s * p.slice_k); }

}  // namespace

Status pack_b_source(const Plan& plan, const WeightSource& src, std::span<uint8_t> out) {
  const int64_t k_len = plan.shape.k, n_len = plan.shape.n;
  if (src.data == nullptr) return make_error(-EINVAL, "weights data is NULL");
  const int64_t row = source_row_length(k_len, n_len, src), ld = source_stride(k_len, n_len, src);
  if (ld < row)
    return make_error(-EINVAL, "row_stride = " + std::to_string(ld) + " is smaller than a row (" +
                                   (src.n_by_k ? "K = " : "N = ") + std::to_string(row) + " elements)");
  if (static_cast<int64_t>(out.size()) != plan.b_bytes())
    return make_error(-EINVAL, "native B: " + std::to_string(out.size()) + " bytes given, the plan needs " +
                                   std::to_string(plan.b_bytes()));
  const auto* s = static_cast<const uint8_t*>(src.data);
  if (plan.dtype == DType::int8 && !src.n_by_k)  // the SSE transposes of the dense path
    return pack_b_int8_strided(static_cast<const int8_t*>(src.data), ld, plan,
                               {reinterpret_cast<int8_t*>(out.data()), out.size()});
  std::memset(out.data(), 0, out.size());  // padding: K to kp, N to np
  for (int64_t sl = 0; sl < plan.slices; ++sl) {
    const int64_t k0 = sl * plan.slice_k, kt = source_slice_kt(plan, sl), base = plan.np * plan.slice_k * sl;
    const int64_t k_end = std::min(k0 + kt, k_len);
    for (int64_t n = 0; n < n_len; ++n)
      for (int64_t kb = k0; kb < k_end; kb += kRun) {
        const int64_t len = std::min(kRun, k_end - kb);
        const int64_t to = base + weight_index(plan.dtype, kb - k0, n, kt);
        if (src.n_by_k) {
          copy_run(plan.dtype, s, n * ld + kb, out.data(), to, len);
        } else {
          for (int64_t i = 0; i < len; ++i) copy_one(plan.dtype, s, (kb + i) * ld + n, out.data(), to + i);
        }
      }
  }
  return {};
}

Status unpack_b_native(const Plan& plan, std::span<const uint8_t> native, std::span<uint8_t> out) {
  const int64_t k_len = plan.shape.k, n_len = plan.shape.n;
  const int64_t want = plan.dtype == DType::int4 ? int4_packed_bytes(k_len * n_len) : k_len * n_len * elem_bytes(plan.dtype);
  if (static_cast<int64_t>(native.size()) != plan.b_bytes())
    return make_error(-EINVAL, "native B: " + std::to_string(native.size()) + " bytes given, the plan needs " +
                                   std::to_string(plan.b_bytes()));
  if (static_cast<int64_t>(out.size()) != want)
    return make_error(-EINVAL, "unpacked B: " + std::to_string(out.size()) + " bytes given, K x N needs " +
                                   std::to_string(want));
  if (plan.dtype == DType::int4 && (k_len * n_len) % 2 == 1) out.back() = 0;  // the unused high nibble
  for (int64_t sl = 0; sl < plan.slices; ++sl) {
    const int64_t k0 = sl * plan.slice_k, kt = source_slice_kt(plan, sl), base = plan.np * plan.slice_k * sl;
    for (int64_t k = k0; k < std::min(k0 + kt, k_len); ++k)
      for (int64_t n = 0; n < n_len; ++n)
        copy_one(plan.dtype, native.data(), base + weight_index(plan.dtype, k - k0, n, kt), out.data(), k * n_len + n);
  }
  return {};
}

}  // namespace ork::matmul
