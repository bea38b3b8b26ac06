// Which ISA features this CPU has: the one place every kernel tier of the project asks
// (lib/ref's int8 and fp16 tiers, lib/quant's activation and group kernels, lib/matmul's
// slice sums, the benchmark's peak loops), so a feature is probed once and named once.
// Header only in driver/common: the lowest layer all of them may include.
//
// Sources: x86 through GCC's __builtin_cpu_supports (CPUID, and for AVX and AVX-512 the
// OS's XCR0 state, which CPUID alone does not say) where GCC names the feature; F16C, AMX
// and PREFETCHW through CPUID itself (Intel SDM vol. 2A, "CPUID"): clang 14's __builtin_cpu_supports does
// not know "f16c", and gcc's <cpuid.h> and clang's spell the AMX bits differently. AArch64
// through the kernel's hwcaps (arch/arm64/include/uapi/asm/hwcap.h). AMX's tile data state
// must still be granted by the kernel (lib/ref/kernel_amx.cpp amx_usable): that is an OS
// permission, not a feature.
//
// The forced-tier overrides: a test hides features (hide_cpu_features), and every tier query
// then answers as on a CPU without them, so the best tier of every kernel family drops
// together (a lower tier forced through code that takes no tier argument). A benchmark does
// the same for a whole process with ORK_CPU_TIER (cpu_tier_mask below), read here only, so
// that this machine measures the paths an AVX2-only CPU takes.
#pragma once

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "driver/common/result.h"
#if defined(__x86_64__)
#include <cpuid.h>
#elif defined(__aarch64__)
#include <asm/hwcap.h>  // HWCAP_ASIMDDP
#include <sys/auxv.h>
#endif

namespace ork::cpu {

// One bit each; a tier asks for all the bits it needs (has()).
enum Feature : uint32_t {
  kAvx2 = 1u << 0,
  kFma = 1u << 1,        // FMA3
  kF16c = 1u << 2,       // VCVTPH2PS / VCVTPS2PH
  kAvx512f = 1u << 3,
  kAvx512bw = 1u << 4,
  kAvx512vl = 1u << 5,
  kAvx512vnni = 1u << 6,
  kAmxInt8 = 1u << 7,    // AMX-TILE and AMX-INT8 (CPUID; the OS grant is asked apart)
  kAsimdDp = 1u << 8,    // AArch64 SDOT/UDOT (ID_AA64ISAR0_EL1.DP)
  kPrefetchw = 1u << 9,  // x86 PREFETCHW (a hint: a line fetched for writing)
};

namespace detail {
#if defined(__x86_64__)
// CPUID.(EAX=1):ECX bit 29 is F16C; CPUID.(EAX=7, ECX=0):EDX bits 24 and 25 are AMX-TILE and
// AMX-INT8 (Intel SDM vol. 2A, "CPUID").
constexpr unsigned kCpuidF16c = 1u << 29;
constexpr unsigned kCpuidAmxTile = 1u << 24;
constexpr unsigned kCpuidAmxInt8 = 1u << 25;
// CPUID.(EAX=80000001H):ECX bit 8 is PRFCHW, PREFETCHW (Intel SDM vol. 2A, "CPUID" and
// "PREFETCHW"; AMD APM vol. 3, "3DNowPrefetch").
constexpr unsigned kCpuidPrefetchw = 1u << 8;
#endif

inline uint32_t probe_cpu_features() {
  uint32_t f = 0;
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2")) f |= kAvx2;
  if (__builtin_cpu_supports("fma")) f |= kFma;
  if (__builtin_cpu_supports("avx512f")) f |= kAvx512f;
  if (__builtin_cpu_supports("avx512bw")) f |= kAvx512bw;
  if (__builtin_cpu_supports("avx512vl")) f |= kAvx512vl;
  if (__builtin_cpu_supports("avx512vnni")) f |= kAvx512vnni;
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid(1, &eax, &ebx, &ecx, &edx) != 0 && (ecx & kCpuidF16c) != 0) f |= kF16c;
  if (__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx) != 0 && (edx & kCpuidAmxTile) != 0 &&
      (edx & kCpuidAmxInt8) != 0)
    f |= kAmxInt8;
  if (__get_cpuid(0x80000001u, &eax, &ebx, &ecx, &edx) != 0 && (ecx & kCpuidPrefetchw) != 0) f |= kPrefetchw;
#elif defined(__aarch64__)
  // Set on every core of a big.LITTLE system or on none (the RK3588's A76 and A55 both have it).
  if ((getauxval(AT_HWCAP) & HWCAP_ASIMDDP) != 0) f |= kAsimdDp;
#endif
  return f;
}

// Process-wide and only read after first use (docs/README.md "State"); the hidden set is
// written by tests only.
inline std::atomic<uint32_t> g_hidden_cpu_features{0};
}  // namespace detail

// What the CPU has, probed once per process.
inline uint32_t detected_cpu_features() {
  static const uint32_t f = detail::probe_cpu_features();
  return f;
}

// ORK_CPU_TIER: the highest tier any kernel family may take in this process, for benchmarks
// (docs/cpu-reference.md "Forcing a tier"). The features above it are hidden as a test hides
// them: `native` (or unset, or empty) hides nothing; `avx512` hides AMX; `avx2` hides AMX and
// AVX-512 (an AVX2 + FMA + F16C CPU, what the x86-64-v3 level names); `baseline` hides every
// optional feature but PREFETCHW (x86-64's SSE2; arm64's NEON without the dot product).
// Anything else is an error naming the value (cpu_tier_status), and hides nothing.
inline constexpr uint32_t kAboveAvx512 = kAmxInt8;
inline constexpr uint32_t kAboveAvx2 = kAboveAvx512 | kAvx512f | kAvx512bw | kAvx512vl | kAvx512vnni;
inline constexpr uint32_t kAboveBaseline = kAboveAvx2 | kAvx2 | kFma | kF16c | kAsimdDp;

// The features a tier's name hides (the variable's parser; pure, for tests).
inline Result<uint32_t> cpu_tier_mask(std::string_view tier) {
  if (tier.empty() || tier == "native") return uint32_t{0};
  if (tier == "avx512") return kAboveAvx512;
  if (tier == "avx2") return kAboveAvx2;
  if (tier == "baseline") return kAboveBaseline;
  return make_error(-EINVAL, "ORK_CPU_TIER='" + std::string(tier.substr(0, 64)) +
                                 "': expected 'native', 'avx512', 'avx2' or 'baseline'");
}

namespace detail {
// The variable, read once per process (a tier never changes mid-run).
inline const Result<uint32_t>& env_tier_mask() {
  static const Result<uint32_t> mask = [] {
    const char* v = std::getenv("ORK_CPU_TIER");
    return cpu_tier_mask(v != nullptr ? v : "");
  }();
  return mask;
}
}  // namespace detail

// An error when ORK_CPU_TIER names no tier: opening a device reports it (lib/api/device.cpp),
// so a typo never measures the wrong tier silently.
inline Status cpu_tier_status() {
  const Result<uint32_t>& m = detail::env_tier_mask();
  if (!m) return m.error();
  return {};
}

// What the tiers may use: the CPU's features less those ORK_CPU_TIER and a test hid.
inline uint32_t cpu_features() {
  const Result<uint32_t>& tier = detail::env_tier_mask();
  const uint32_t above = tier ? tier.value() : 0u;
  return detected_cpu_features() & ~above & ~detail::g_hidden_cpu_features.load(std::memory_order_relaxed);
}

// Whether every feature in `all` is usable.
inline bool has(uint32_t all) { return (cpu_features() & all) == all; }

// Tests: from now on answer as a CPU without `mask` (0: the whole CPU again). Returns the
// set hidden before, to restore.
inline uint32_t hide_cpu_features(uint32_t mask) {
  return detail::g_hidden_cpu_features.exchange(mask, std::memory_order_relaxed);
}

// Hides `mask` for a scope (tests).
class HiddenCpuFeatures {
 public:
  explicit HiddenCpuFeatures(uint32_t mask) : before_(hide_cpu_features(mask)) {}
  ~HiddenCpuFeatures() { hide_cpu_features(before_); }
  HiddenCpuFeatures(const HiddenCpuFeatures&) = delete;
  HiddenCpuFeatures& operator=(const HiddenCpuFeatures&) = delete;

 private:
  uint32_t before_;
};

}  // namespace ork::cpu
