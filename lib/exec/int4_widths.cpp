// int4 K-slice widths of a model's weights (int4_widths.h).
#include "lib/exec/int4_widths.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <numbers>
#include <random>

#include <fmt/format.h>

#include "driver/common/int4.h"
#include "lib/exec/synthetic.h"
#include "lib/matmul/int4_bound.h"

namespace ork::exec {

Result<Int4Weights> parse_int4_weights(const std::string& name) {
  for (Int4Weights k : {Int4Weights::floor, Int4Weights::synthetic, Int4Weights::q4_0})
    if (name == int4_weights_name(k)) return k;
  return make_error(-EINVAL, fmt::format("int4 weights \"{}\": expected floor, synthetic or q4_0", name));
}

const char* int4_weights_name(Int4Weights kind) {
  switch (kind) {
    case Int4Weights::floor: return "floor";
    case Int4Weights::synthetic: return "synthetic";
    case Int4Weights::q4_0: return "q4_0";
  }
  return "?";
}

namespace {

constexpr int64_t kQ4Block = 32;  // Q4_0: 32 values per scale

// One column's block of standard normal values, quantised.
void quantise_block(const double* x, int64_t count, int8_t* q) {
  double v = 0;
  for (int64_t i = 0; i < count; ++i)
    if (std::fabs(x[i]) > std::fabs(v)) v = x[i];
  const double d = v / -8.0;
  for (int64_t i = 0; i < count; ++i) {
    const double r = d == 0 ? 0 : std::round(x[i] / d);
    q[i] = static_cast<int8_t>(std::clamp(r, -8.0, 7.0));
  }
}

}  // namespace

std::vector<uint8_t> q4_0_like_weights(int64_t k, int64_t n, uint64_t seed) {
  std::vector<uint8_t> out(static_cast<size_t>(int4::packed_bytes(k * n)), 0);
  std::mt19937_64 rng(seed);
  const auto uniform = [&] { return (static_cast<double>(rng() >> 11) + 0.5) * 0x1p-53; };  // (0, 1)
  double x[kQ4Block];
  int8_t q[kQ4Block];
  for (int64_t col = 0; col < n; ++col) {
    for (int64_t k0 = 0; k0 < k; k0 += kQ4Block) {
      const int64_t count = std::min(kQ4Block, k - k0);
      for (int64_t i = 0; i < count; i += 2) {  // Box-Muller: two normals per two uniforms
        const double r = std::sqrt(-2.0 * std::log(uniform())), t = 2.0 * std::numbers::pi * uniform();
        x[i] = r * std::cos(t);
        if (i + 1 < count) x[i + 1] = r * std::sin(t);
      }
      quantise_block(x, count, q);
      for (int64_t i = 0; i < count; ++i) int4::put(out.data(), (k0 + i) * n + col, q[i]);
    }
  }
  return out;
}

Result<std::vector<int64_t>> int4_slice_widths(const ModelDesc& desc, Int4Weights kind, int layer, uint64_t seed) {
  if (desc.dtype != matmul::DType::int4)
    return make_error(-EINVAL, fmt::format("int4 slice widths of a {} model: only int4 weights have them", dtype_key(desc.dtype)));
  std::vector<int64_t> out(desc.matmuls.size(), 0);
  if (kind == Int4Weights::floor) return out;
  for (size_t j = 0; j < desc.matmuls.size(); ++j) {
    const MatmulDesc& md = desc.matmuls[j];
    const std::vector<uint8_t> w = kind == Int4Weights::synthetic
                                       ? synthetic_weights(desc, layer, static_cast<int>(j), seed)
                                       : q4_0_like_weights(md.k, md.n, seed * 1000003u + static_cast<uint64_t>(layer) * 131u + j);
    auto width = matmul::int4_safe_slice_k(w, md.k, md.n);
    if (!width) return make_error(width.error().code, fmt::format("matmul \"{}\": {}", md.name, width.error().message));
    out[j] = *width;
  }
  return out;
}

}  // namespace ork::exec
