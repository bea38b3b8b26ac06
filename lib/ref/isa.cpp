// Which kernel tier this CPU can run (fast.h Isa): x86 through CPUID, AArch64 through the
// kernel's hwcaps, and the Kernel table of each tier (kernels.h).
#include <vector>
#if defined(__aarch64__)
#include <asm/hwcap.h>  // HWCAP_ASIMDDP
#include <sys/auxv.h>
#endif

#include "lib/ref/fast.h"
#include "lib/ref/kernels.h"

namespace ork::ref {

const char* isa_name(Isa isa) {
  switch (isa) {
    case Isa::generic: return "generic";
    case Isa::sse2: return "sse2";
    case Isa::avx2: return "avx2";
    case Isa::avx512_vnni: return "avx512_vnni";
    case Isa::amx: return "amx";
    case Isa::sdot: return "sdot";
  }
  return "unknown";
}

bool isa_supported(Isa isa) {
  if (isa == Isa::generic) return true;
#if defined(__x86_64__)
  __builtin_cpu_init();
  switch (isa) {
    case Isa::generic: return true;
    case Isa::sse2: return true;  // part of x86-64
    case Isa::avx2: return __builtin_cpu_supports("avx2");
    case Isa::avx512_vnni:
      return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
             __builtin_cpu_supports("avx512vnni");
    case Isa::amx: return detail::amx_usable();
    case Isa::sdot: return false;
  }
#elif defined(__aarch64__)
  // The kernel's view of the CPU (ID_AA64ISAR0_EL1.DP, arch/arm64/include/uapi/asm/hwcap.h):
  // set on every core of a big.LITTLE system or on none (the RK3588's A76 and A55 both have it).
  if (isa == Isa::sdot) return (getauxval(AT_HWCAP) & HWCAP_ASIMDDP) != 0;
#endif
  return false;
}

// Ordered from the slowest to the fastest: best_isa() is the last one supported.
std::vector<Isa> supported_isas() {
  std::vector<Isa> out;
  for (Isa isa : {Isa::generic, Isa::sse2, Isa::avx2, Isa::avx512_vnni, Isa::amx, Isa::sdot}) {
    if (isa_supported(isa)) out.push_back(isa);
  }
  return out;
}

Isa best_isa() { return supported_isas().back(); }

namespace detail {

const Kernel& kernel_for(Isa isa) {
#if defined(__x86_64__)
  switch (isa) {
    case Isa::generic: break;
    case Isa::sse2: return sse2_kernel();
    case Isa::avx2: return avx2_kernel();
    case Isa::avx512_vnni: return vnni_kernel();
    case Isa::amx: return amx_kernel();
    case Isa::sdot: break;
  }
#elif defined(__aarch64__)
  if (isa == Isa::sdot) return sdot_kernel();
#endif
  (void)isa;
  return generic_kernel();
}

}  // namespace detail

}  // namespace ork::ref
