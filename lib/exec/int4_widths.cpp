// int4 K-slice widths of a model's weights (int4_widths.h).
#include "lib/exec/int4_widths.h"

#include <cerrno>

#include <fmt/format.h>

#include "lib/exec/synthetic.h"
#include "lib/matmul/int4_bound.h"

namespace ork::exec {

Result<Int4Weights> parse_int4_weights(const std::string& name) {
  if (name == "q4_0") return Int4Weights::synthetic;
  for (Int4Weights k : {Int4Weights::floor, Int4Weights::uniform, Int4Weights::synthetic})
    if (name == int4_weights_name(k)) return k;
  return make_error(-EINVAL, fmt::format("int4 weights \"{}\": expected floor, uniform or synthetic (q4_0)", name));
}

const char* int4_weights_name(Int4Weights kind) {
  switch (kind) {
    case Int4Weights::floor: return "floor";
    case Int4Weights::uniform: return "uniform";
    case Int4Weights::synthetic: return "synthetic";
  }
  return "?";
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
                                       : uniform_int4_weights(md.k, md.n, synthetic_seed(seed, layer, static_cast<int>(j)));
    auto width = matmul::int4_safe_slice_k(w, md.k, md.n);
    if (!width) return make_error(width.error().code, fmt::format("matmul \"{}\": {}", md.name, width.error().message));
    out[j] = *width;
  }
  return out;
}

}  // namespace ork::exec
