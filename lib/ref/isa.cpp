// Which kernel tier this CPU can run (fast.h Isa), from the one feature query
// (driver/common/cpu_features.h), and the Kernel table of each tier (kernels.h).
#include <vector>

#include "driver/common/cpu_features.h"
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
  switch (isa) {
    case Isa::generic: return true;
    case Isa::sse2: return true;  // part of x86-64
    case Isa::avx2: return cpu::has(cpu::kAvx2);
    case Isa::avx512_vnni: return cpu::has(cpu::kAvx512f | cpu::kAvx512bw | cpu::kAvx512vnni);
    case Isa::amx: return cpu::has(cpu::kAmxInt8) && detail::amx_usable();
    case Isa::sdot: return false;
  }
#elif defined(__aarch64__)
  if (isa == Isa::sdot) return cpu::has(cpu::kAsimdDp);
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
