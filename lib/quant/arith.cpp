#include "lib/quant/arith.h"

#include <cmath>

#include <fmt/format.h>

namespace ork::quant {

Status check_finite(std::span<const float> x, int64_t rows, int64_t cols, const char* what) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) {
      const float v = x[static_cast<size_t>(r * cols + c)];
      if (!std::isfinite(v))
        return make_error(-EINVAL, fmt::format("{}[{}][{}] = {}: inputs must be finite", what, r, c, v));
    }
  return Status::success();
}

}  // namespace ork::quant
