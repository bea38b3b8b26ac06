// IEEE 754 binary16 <-> binary32, bit-exact, without _Float16 (GCC 12 on x86 lacks it in C++
// without flags). float_to_half rounds to nearest, ties to even, like F16C's VCVTPS2PH with
// imm8 = 0 and like the NPU's OUT_CVT FP32TOFP16 path is assumed to (contract section 2).
#pragma once

#include <cstdint>

namespace ork::ref {

// Every half, subnormals included, is exactly representable as a float. NaN payloads are
// kept (shifted into the float's top mantissa bits).
float half_to_float(uint16_t h);

// Round-to-nearest-even; overflow (|x| >= 65520) -> inf; NaN -> quiet NaN with the top 9 bits
// of the payload kept (the quiet bit forced so a payload never collapses into inf).
uint16_t float_to_half(float f);

}  // namespace ork::ref
