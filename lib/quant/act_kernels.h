// The two per-element passes of activation quantisation (activations.cpp), per SIMD tier,
// chosen at run time: the absmax of a row (which also says whether the row is finite) and
// the codes of a row for a given scale. Every tier returns exactly what the scalar
// definition in arith.h returns (scale_from_absmax's input, quantise_value per element) for
// every input, whatever the floating-point environment's rounding mode
// (docs/quantisation.md "Activations on the host").
#pragma once

#include <cstdint>
#include <vector>

#include "lib/quant/scheme.h"

namespace ork::quant::detail {

// portable: the scalar definition itself (any CPU; AArch64 too). avx2 and avx512 (AVX-512F):
// x86-64, each compiled with a target attribute and picked only when CPUID has it.
enum class ActTier { portable, avx2, avx512 };

const char* act_tier_name(ActTier t);
bool act_tier_supported(ActTier t);
std::vector<ActTier> supported_act_tiers();  // slowest first
ActTier best_act_tier();

// The largest |x[i]|'s bit pattern (sign cleared) over n floats. For non-negative floats the
// bit patterns order as the values do, so for a finite row this is std::bit_cast<uint32_t>
// of max |x|; a value above kMaxFiniteBits says the row holds a NaN or an infinity.
inline constexpr uint32_t kMaxFiniteBits = 0x7f7fffffu;  // FLT_MAX (IEEE 754 binary32)
uint32_t absmax_bits(const float* x, int64_t n, ActTier t);

// out[i] = quantise_value(x[i], scale, bits) for i < n (arith.h).
void quantise_row(const float* x, int64_t n, float scale, Bits bits, int8_t* out, ActTier t);

// The x86 tiers (act_kernels_x86.cpp); only called when act_tier_supported() says yes.
uint32_t absmax_bits_avx2(const float* x, int64_t n);
uint32_t absmax_bits_avx512(const float* x, int64_t n);
void quantise_row_avx2(const float* x, int64_t n, float scale, Bits bits, int8_t* out);
void quantise_row_avx512(const float* x, int64_t n, float scale, Bits bits, int8_t* out);

// The scalar definitions the tiers end their rows with (their tails).
uint32_t absmax_bits_portable(const float* x, int64_t n);
void quantise_row_portable(const float* x, int64_t n, float scale, Bits bits, int8_t* out);

}  // namespace ork::quant::detail
