// int4 operands in the CPU reference: one value per int8, each in -8..7 (oracle.h
// matmul_int4). The value check the oracle and the fast path share (oracle.cpp), and the
// fast path's int4 entry (fast.cpp). A header of its own so that the many includers of
// oracle.h and fast.h do not recompile for it.
#pragma once

#include <cstdint>
#include <span>

#include "driver/common/result.h"
#include "lib/ref/fast.h"

namespace ork::ref {

// Every value of `v` in -8..7; the error names the operand (`name`), the first bad index
// and its value: "A[6] = 8: int4 values must be in -8..7".
Status check_int4_values(const char* name, std::span<const int8_t> v);

// int4 x int4 -> int32, bit-identical to the oracle's matmul_int4: the operands' sizes and
// every value checked as the oracle checks them (the same errors), then the fast int8 path
// on those very values. Both oracles sum in int64 and keep the low 32 bits (modular since
// C++20), and int4 values are int8 values, so the int8 path's bits are matmul_int4's
// (|a*b| <= 64: exact for any K < 2^25).
Status matmul_int4_fast(std::span<const int8_t> a, std::span<const int8_t> b, std::span<int32_t> c, Dims d,
                        const FastOptions& options = {});

}  // namespace ork::ref
