// The portable tier of activation quantisation and the run-time choice of tier (act_kernels.h).
#include "lib/quant/act_kernels.h"

#include <cstring>

#include "driver/common/cpu_features.h"
#include "lib/quant/arith.h"

namespace ork::quant::detail {

const char* act_tier_name(ActTier t) {
  switch (t) {
    case ActTier::portable: return "portable";
    case ActTier::avx2: return "avx2";
    case ActTier::avx512: return "avx512";
  }
  return "unknown";
}

bool act_tier_supported(ActTier t) {
  if (t == ActTier::portable) return true;
#if defined(__x86_64__)
  if (t == ActTier::avx2) return cpu::has(cpu::kAvx2);
  if (t == ActTier::avx512) return cpu::has(cpu::kAvx512f);
#endif
  return false;
}

std::vector<ActTier> supported_act_tiers() {
  std::vector<ActTier> out;
  for (ActTier t : {ActTier::portable, ActTier::avx2, ActTier::avx512})
    if (act_tier_supported(t)) out.push_back(t);
  return out;
}

ActTier best_act_tier() {
  // From the features on every call (a few bit tests; cpu_features.h probes once), so a
  // test's hidden features pick a lower tier here too.
  if (act_tier_supported(ActTier::avx512)) return ActTier::avx512;
  return act_tier_supported(ActTier::avx2) ? ActTier::avx2 : ActTier::portable;
}

uint32_t absmax_bits_portable(const float* x, int64_t n) {
  uint32_t m = 0;
  for (int64_t i = 0; i < n; ++i) {
    uint32_t b;
    std::memcpy(&b, x + i, sizeof b);
    b &= 0x7fffffffu;  // |x|, as std::fabs clears the sign
    m = b > m ? b : m;
  }
  return m;
}

void quantise_row_portable(const float* x, int64_t n, float scale, Bits bits, int8_t* out) {
  for (int64_t i = 0; i < n; ++i) out[i] = quantise_value(x[i], scale, bits);
}

uint32_t absmax_bits(const float* x, int64_t n, ActTier t) {
#if defined(__x86_64__)
  if (t == ActTier::avx512) return absmax_bits_avx512(x, n);
  if (t == ActTier::avx2) return absmax_bits_avx2(x, n);
#endif
  (void)t;
  return absmax_bits_portable(x, n);
}

void quantise_row(const float* x, int64_t n, float scale, Bits bits, int8_t* out, ActTier t) {
  if (scale == 0.0f) {  // quantise_value's first case, for the whole row
    std::memset(out, 0, static_cast<size_t>(n));
    return;
  }
#if defined(__x86_64__)
  if (t == ActTier::avx512) return quantise_row_avx512(x, n, scale, bits, out);
  if (t == ActTier::avx2) return quantise_row_avx2(x, n, scale, bits, out);
#endif
  (void)t;
  quantise_row_portable(x, n, scale, bits, out);
}

}  // namespace ork::quant::detail
