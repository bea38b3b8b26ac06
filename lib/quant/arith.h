// The scalar arithmetic every quantised path shares (docs/quantisation.md, "Arithmetic"):
// rounding, scale from absmax, one value's code, finiteness checks. Written to be
// independent of the floating-point environment: no nearbyint/lrint (they follow the
// current rounding mode), no FMA (lib/quant is compiled with -ffp-contract=off).
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <span>

#include "driver/common/result.h"
#include "lib/quant/scheme.h"

namespace ork::quant {

// Round half to even, whatever fegetround() says: 0.5 -> 0, 1.5 -> 2, 2.5 -> 2, -0.5 -> 0,
// -1.5 -> -2. Defined for finite |x| < 2^31; larger magnitudes saturate (callers clamp anyway).
// (These three are inline: the per-element hot path of activation quantisation.)
inline int32_t round_half_even(float x) {
  if (!(std::fabs(x) < 2147483520.0f))  // largest float below 2^31; NaN lands here too
    return x > 0 ? std::numeric_limits<int32_t>::max() : std::numeric_limits<int32_t>::min();
  // Truncation (cvttss2si) ignores the rounding mode, and x - t is exact for every float
  // (t and x share the binade or t = 0), so the tie test below sees the true fraction.
  // Avoids std::floor, a library call on baseline x86-64 (no SSE4.1 roundss).
  const auto t = static_cast<int32_t>(x);
  const float frac = x - static_cast<float>(t);  // in (-1, 1), the sign of x
  // Branch-free (random fractions mispredict): +1 above one half, -1 below minus one half,
  // and on a tie (+-0.5 exactly) a step away from zero only when t is odd: the even neighbour.
  const int32_t odd = t & 1;
  return t + static_cast<int32_t>(frac > 0.5f) - static_cast<int32_t>(frac < -0.5f) +
         (static_cast<int32_t>(frac == 0.5f) & odd) - (static_cast<int32_t>(frac == -0.5f) & odd);
}

// scale = absmax / qmax in fp32 (one correctly rounded division). 0 when absmax is 0 or the
// division underflows to 0: a column of zeros (or of values below ~1.6e-43) quantises to 0.
inline float scale_from_absmax(float absmax, Bits bits) {
  const float s = absmax / static_cast<float>(qmax(bits));
  return s > 0.0f ? s : 0.0f;
}

// q = clamp(round_half_even(x / scale), -qmax, qmax); 0 when scale is 0.
inline int8_t quantise_value(float x, float scale, Bits bits) {
  if (scale == 0.0f) return 0;
  const int32_t q = round_half_even(x / scale);
  const int32_t lim = qmax(bits);
  return static_cast<int8_t>(q > lim ? lim : q < -lim ? -lim : q);
}

// First element of a rows x cols row-major matrix that is NaN or +-inf, as an error naming
// it: "<what>[3][5] = nan: inputs must be finite". Success when all are finite.
Status check_finite(std::span<const float> x, int64_t rows, int64_t cols, const char* what);

}  // namespace ork::quant
