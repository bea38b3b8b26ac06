// Native -> row-major weights (unpack.h).
#include "lib/exec/unpack.h"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "lib/matmul/layout.h"
#include "driver/common/int4.h"

namespace ork::exec {
namespace {

// int8, block by block: weight_index(int8, k, n, kt) = (n/32)*32*kt + (k/32)*1024 + (n%32)*32
// + k%32, so slice s's block (n/32, k/32) is 1024 contiguous bytes, 32 columns of 32 K values.
Status unpack_int8(const matmul::Plan& p, std::span<const uint8_t> native, std::vector<uint8_t>& out) {
  const int64_t k = p.shape.k, n = p.shape.n;
  for (int64_t s = 0; s < p.slices; ++s) {
    const int64_t k0 = s * p.slice_k;
    const int64_t kt = std::min(p.slice_k, p.kp - k0);
    const uint8_t* slice = native.data() + p.np * p.slice_k * s;
    for (int64_t nb = 0; nb < n; nb += 32) {
      const int64_t nc = std::min<int64_t>(32, n - nb);
      for (int64_t kb = 0; kb < kt && k0 + kb < k; kb += 32) {
        const uint8_t* blk = slice + nb * kt + kb * 32;
        const int64_t kr = std::min<int64_t>(32, k - k0 - kb);
        for (int64_t kk = 0; kk < kr; ++kk) {
          uint8_t* dst = out.data() + (k0 + kb + kk) * n + nb;
          for (int64_t c = 0; c < nc; ++c) dst[c] = blk[c * 32 + kk];
        }
      }
    }
  }
  return {};
}

}  // namespace

Status unpack_weights(matmul::DType dtype, int64_t k, int64_t n, std::span<const uint8_t> native,
                      std::vector<uint8_t>& out, int64_t slice_k) {
  auto plan = matmul::make_plan(matmul::Shape{1, k, n}, matmul::PlanOptions{.dtype = dtype, .cores = 1, .slice_k = slice_k});
  if (!plan) return plan.error();
  if (static_cast<int64_t>(native.size()) != plan->b_bytes())
    return make_error(-EINVAL, fmt::format("packed weights of {} bytes, {} x {} needs {}", native.size(), k, n, plan->b_bytes()));
  const int64_t eb = dtype == matmul::DType::fp16 ? 2 : 1;
  out.assign(static_cast<size_t>(k * n * eb), 0);
  if (dtype == matmul::DType::int8) return unpack_int8(*plan, native, out);
  for (int64_t s = 0; s < plan->slices; ++s) {
    const int64_t k0 = s * plan->slice_k;
    const int64_t kt = std::min(plan->slice_k, plan->kp - k0);
    const int64_t base = plan->np * plan->slice_k * s;  // elements before slice s
    const int64_t k_end = std::min(k, k0 + kt);
    for (int64_t kk = k0; kk < k_end; ++kk) {
      for (int64_t nn = 0; nn < n; ++nn) {
        const int64_t e = base + matmul::weight_index(dtype, kk - k0, nn, kt);
        const size_t dst = static_cast<size_t>(kk * n + nn);
        if (dtype == matmul::DType::int8) {
          out[dst] = native[static_cast<size_t>(e)];
        } else if (dtype == matmul::DType::fp16) {
          std::memcpy(&out[dst * 2], &native[static_cast<size_t>(e) * 2], 2);
        } else {
          out[dst] = static_cast<uint8_t>(int4::value_at(native.data(), e));
        }
      }
    }
  }
  return {};
}

}  // namespace ork::exec
