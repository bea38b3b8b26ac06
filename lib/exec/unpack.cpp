// Native -> row-major weights (unpack.h).
#include "lib/exec/unpack.h"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "lib/matmul/layout.h"
#include "driver/common/int4.h"
#include "driver/common/npu_layout.h"

namespace ork::exec {
namespace {

// Every element of slice s's blocks through `put(dst, e)`: dst its row-major index, e its
// element index in the native layout. Blocks of weight_atom columns x 32 K values (layout.h):
// inside one the index function steps by a constant per column and per K value, so it is
// asked three times a block (its base and both steps) rather than once an element; the
// layout is still read only from weight_index.
template <class Put>
void for_block_elements(const matmul::Plan& p, matmul::DType dtype, int64_t s, Put put) {
  const int64_t k = p.shape.k, n = p.shape.n, wa = matmul::weight_atom(dtype), kb_len = hw::kKBlock;
  const int64_t k0 = s * p.slice_k, kt = std::min(p.slice_k, p.kp - k0);
  const int64_t slice = p.np * p.slice_k * s;  // elements before slice s
  for (int64_t nb = 0; nb < n; nb += wa)
    for (int64_t kb = 0; kb < kt && k0 + kb < k; kb += kb_len) {
      const int64_t base = matmul::weight_index(dtype, kb, nb, kt);
      const int64_t col = matmul::weight_index(dtype, kb, nb + 1, kt) - base;
      const int64_t step = matmul::weight_index(dtype, kb + 1, nb, kt) - base;
      const int64_t nc = std::min(wa, n - nb), kr = std::min(kb_len, k - k0 - kb);
      for (int64_t kk = 0; kk < kr; ++kk) {
        const int64_t dst = (k0 + kb + kk) * n + nb, e = slice + base + kk * step;
        for (int64_t c = 0; c < nc; ++c) put(dst + c, e + c * col);
      }
    }
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
  uint8_t* const o = out.data();
  const uint8_t* const in = native.data();
  for (int64_t s = 0; s < plan->slices; ++s) {
    if (dtype == matmul::DType::int8) {
      for_block_elements(*plan, dtype, s, [&](int64_t dst, int64_t e) { o[dst] = in[e]; });
    } else if (dtype == matmul::DType::fp16) {
      for_block_elements(*plan, dtype, s, [&](int64_t dst, int64_t e) { std::memcpy(o + dst * 2, in + e * 2, 2); });
    } else {
      for_block_elements(*plan, dtype, s,
                         [&](int64_t dst, int64_t e) { o[dst] = static_cast<uint8_t>(int4::value_at(in, e)); });
    }
  }
  return {};
}

}  // namespace ork::exec
