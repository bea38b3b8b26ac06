// The slice-sum loop of the output unpacker (layout_host.h), per instruction set: one
// portable loop (every CPU; the compiler vectorises it for the baseline, SSE2 on x86-64, NEON
// on arm64), AVX2 and AVX-512 on x86-64, chosen at run time. The same adds in the same order
// on every path (int32 modulo 2^32, fp32 one add per slice): the ISA never changes a byte,
// which tests/lib/matmul/layout_host_test.cpp checks by forcing each path in turn.
#pragma once

#include <cstdint>

#include "driver/common/result.h"
#include "lib/matmul/plan.h"

namespace ork::matmul {

// Rows in blocks of 8: for each surface a block's atoms are one contiguous 128-byte run, and
// the block's rows of the row-major side stay in L1 while the surfaces go by. Row by row,
// every 16-byte access went to another surface a power of two bytes away (the same few L1
// sets): measured 2x slower; 8 rows measured fastest of 2..32 (ork_bench "host layout work").
inline constexpr int64_t kHostRowBlock = 8;

// Surfaces a pass of a block of R < 8 rows sums together (the short-block kernels of every
// output type, layout_host_sum.cpp and layout_host_i16.cpp): 6 to 8 atoms a slice's pass,
// P x R sums in registers. At one row P = 8: the unpack of decode and of a stacked plan's
// 1-row diagonal blocks runs the slice loop once per 8 surfaces (docs/matmul-schedule.md
// "fp16 at small M", "int4 at one and two rows").
constexpr int short_block_surfaces(int rows) { return rows == 1 ? 8 : rows == 2 ? 4 : rows <= 4 ? 2 : 1; }

enum class SumIsa { portable, avx2, avx512 };

const char* sum_isa_name(SumIsa isa);
bool sum_isa_supported(SumIsa isa);  // this CPU runs it (portable: always)
SumIsa sum_isa();                    // the path in use: the best supported, unless forced
// Forces `isa` for every later unpack of this process (a test hook: both vector paths and
// the portable one are checked on one machine); an error when this CPU lacks it.
Status force_sum_isa(SumIsa isa);
void unforce_sum_isa();

// Rows [r0, r1) of C from the native outputs of `count` K-slices, each (np/c2, mp, c2):
// C = s0 + s1 + ... when `first`, else C + s0 + s1 + ... One pass over C whatever the count.
// C's rows are `ldc` elements apart (0: N, the plan's shape.n). `isa` must be supported
// (sum_isa() is).
void unpack_rows_on(SumIsa isa, const int32_t* const* s, int64_t count, const Plan& p, int32_t* c, bool first,
                    int64_t r0, int64_t r1, int64_t ldc = 0);
void unpack_rows_on(SumIsa isa, const int16_t* const* s, int64_t count, const Plan& p, int32_t* c, bool first,
                    int64_t r0, int64_t r1, int64_t ldc = 0);
void unpack_rows_on(SumIsa isa, const float* const* s, int64_t count, const Plan& p, float* c, bool first,
                    int64_t r0, int64_t r1, int64_t ldc = 0);
void unpack_rows_on(SumIsa isa, const uint16_t* const* s, int64_t count, const Plan& p, uint16_t* c, bool first,
                    int64_t r0, int64_t r1, int64_t ldc = 0);

// fp32 -> fp16 (binary16 bits), `count` values: round to nearest even, overflow to infinity,
// a NaN kept quiet with its sign and its payload's top 10 bits; the bits of ork::float_to_half
// (driver/common/fp16.h) on every path: F16C's VCVTPS2PH with the rounding mode in the
// instruction (not MXCSR's) on AVX2 and AVX-512 CPUs, the scalar converter elsewhere (arm64
// included). `isa` must be supported (sum_isa() is).
void round_to_fp16_on(SumIsa isa, const float* in, uint16_t* out, int64_t count);

}  // namespace ork::matmul
