// The scalar arithmetic every quantised path shares (docs/quantisation.md, "Arithmetic"):
// rounding, scale from absmax, one value's code, finiteness checks. Written to be
// independent of the floating-point environment: no nearbyint/lrint (they follow the
// current rounding mode), no FMA (lib/quant is compiled with -ffp-contract=off).
#pragma once

#include <cstdint>
#include <span>

#include "driver/common/result.h"
#include "lib/quant/scheme.h"

namespace ork::quant {

// Round half to even, whatever fegetround() says: 0.5 -> 0, 1.5 -> 2, 2.5 -> 2, -0.5 -> 0,
// -1.5 -> -2. Defined for finite |x| < 2^31; larger magnitudes saturate (callers clamp anyway).
int32_t round_half_even(float x);

// scale = absmax / qmax in fp32 (one correctly rounded division). 0 when absmax is 0 or the
// division underflows to 0: a column of zeros (or of values below ~1.6e-43) quantises to 0.
float scale_from_absmax(float absmax, Bits bits);

// q = clamp(round_half_even(x / scale), -qmax, qmax); 0 when scale is 0.
int8_t quantise_value(float x, float scale, Bits bits);

// First element of a rows x cols row-major matrix that is NaN or +-inf, as an error naming
// it: "<what>[3][5] = nan: inputs must be finite". Success when all are finite.
Status check_finite(std::span<const float> x, int64_t rows, int64_t cols, const char* what);

}  // namespace ork::quant
