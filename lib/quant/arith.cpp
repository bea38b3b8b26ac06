#include "lib/quant/arith.h"

#include <cmath>
#include <limits>

#include <fmt/format.h>

namespace ork::quant {

int32_t round_half_even(float x) {
  // floor and the difference below are exact for every float (|x| < 2^23 has a fractional
  // part representable in the same binade; |x| >= 2^23 is already an integer).
  if (!(std::fabs(x) < 2147483520.0f))  // largest float below 2^31
    return x > 0 ? std::numeric_limits<int32_t>::max() : std::numeric_limits<int32_t>::min();
  const float lo = std::floor(x);
  const float frac = x - lo;
  auto r = static_cast<int32_t>(lo);
  if (frac > 0.5f) return r + 1;
  if (frac < 0.5f) return r;
  return (r % 2 == 0) ? r : r + 1;  // a tie: the even neighbour
}

float scale_from_absmax(float absmax, Bits bits) {
  const float s = absmax / static_cast<float>(qmax(bits));
  return s > 0.0f ? s : 0.0f;
}

int8_t quantise_value(float x, float scale, Bits bits) {
  if (scale == 0.0f) return 0;
  const int32_t q = round_half_even(x / scale);
  const int32_t lim = qmax(bits);
  return static_cast<int8_t>(q > lim ? lim : q < -lim ? -lim : q);
}

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
