// The fast int8 CPU path: blocked, vectorised, optionally on two threads. Integer math, so it
// is bit-identical to the oracle (oracle.h) whatever the ISA, blocking or thread count; the
// tests check exactly that. Layouts as the oracle: row-major A (M x K), B (K x N), C (M x N).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "driver/common/result.h"
#include "lib/ref/oracle.h"

namespace ork::ref {

// Kernel tiers, chosen at run time (CPUID): AMX-INT8 (tdpbssd, s8 x s8 tiles), AVX-512 VNNI
// (vpdpbusd, u8 x s8 with a column-sum correction), AVX2 (vpmaddwd on sign-extended int16
// pairs), SSE2 (pmaddwd). All exact: none of these instructions saturates.
// `generic` is plain C++ (int16 pairs, left to the compiler's vectoriser): any CPU, e.g. the
// RK3588's own Cortex-A76 when the reference runs on the board.
enum class Isa { generic, sse2, avx2, avx512_vnni, amx };

const char* isa_name(Isa isa);
bool isa_supported(Isa isa);
Isa best_isa();
std::vector<Isa> supported_isas();

struct FastOptions {
  int threads = 0;           // 0 = up to the machine's hardware threads (big shapes only)
  std::optional<Isa> isa;    // unset = best_isa(); an unsupported one is an error
};

Status matmul_int8_fast(std::span<const int8_t> a, std::span<const int8_t> b,
                        std::span<int32_t> c, Dims d, const FastOptions& options = {});

}  // namespace ork::ref
