// The slice-sum loop of the output unpacker per instruction set (layout_host_sum.h). The
// output layout: docs/regcmd-contract.md section 2 (output_index in layout.cpp is the same
// fact per element); every output atom is 16 bytes (driver/common/npu_layout.h).
#include "lib/matmul/layout_host_sum.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>
#include <type_traits>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "driver/common/cpu_features.h"
#include "driver/common/fp16.h"
#include "driver/common/kernel_checks.h"
#include "driver/common/npu_layout.h"
#include "lib/matmul/layout_host_i16.h"

ORK_KERNEL_CHECKS_BEGIN  // driver/common/kernel_checks.h

namespace ork::matmul {
namespace {

constexpr int64_t kSumAtom = hw::kAtomBytes;
static_assert(kSumAtom == 16);

// int32 addition modulo 2^32 (the oracle's result past 2^31); fp32 one rounded add.
inline int32_t add(int32_t x, int32_t y) { return static_cast<int32_t>(static_cast<uint32_t>(x) + static_cast<uint32_t>(y)); }
inline float add(float x, float y) { return x + y; }
inline uint16_t add(uint16_t, uint16_t y) { return y; }  // fp16 C is one slice: never added

// One atom of C's row (c2 elements, or fewer at N's tail) from `count` slices, at element
// `at` of each slice; a whole atom is a fixed-length loop the compiler vectorises.
template <int64_t kC2, class Native, class Out>
__attribute__((always_inline)) inline void atom(const Native* const* s, int64_t count, int64_t at, Out* row, bool first,
                                                int64_t len = kC2) {
  if (len == kC2) {
    Out v[kC2];
    if (first) {
      for (int64_t i = 0; i < kC2; ++i) v[i] = static_cast<Out>(s[0][at + i]);
    } else {
      for (int64_t i = 0; i < kC2; ++i) v[i] = add(row[i], static_cast<Out>(s[0][at + i]));
    }
    for (int64_t j = 1; j < count; ++j)
      for (int64_t i = 0; i < kC2; ++i) v[i] = add(v[i], static_cast<Out>(s[j][at + i]));
    for (int64_t i = 0; i < kC2; ++i) row[i] = v[i];
    return;
  }
  for (int64_t i = 0; i < len; ++i) {
    Out x = first ? static_cast<Out>(s[0][at + i]) : add(row[i], static_cast<Out>(s[0][at + i]));
    for (int64_t j = 1; j < count; ++j) x = add(x, static_cast<Out>(s[j][at + i]));
    row[i] = x;
  }
}

// A whole 8-row block of one surface: its atoms are one contiguous run of 8 x c2 elements in
// every slice, summed as one fixed-length run (the compiler vectorises it for the caller's
// ISA), then stored as 8 row pieces of C (row stride n_len).
template <int64_t kC2, class Native, class Out>
__attribute__((always_inline)) inline void block_run(const Native* const* s, int64_t count, int64_t at, Out* c,
                                                     int64_t n_len, bool first) {
  constexpr int64_t kRun = kHostRowBlock * kC2;
  Out v[kRun];
  if (first) {
    for (int64_t e = 0; e < kRun; ++e) v[e] = static_cast<Out>(s[0][at + e]);
  } else {
    for (int64_t r = 0; r < kHostRowBlock; ++r)
      for (int64_t i = 0; i < kC2; ++i) v[r * kC2 + i] = add(c[r * n_len + i], static_cast<Out>(s[0][at + r * kC2 + i]));
  }
  for (int64_t j = 1; j < count; ++j) {
    const Native* sj = s[j] + at;
    for (int64_t e = 0; e < kRun; ++e) v[e] = add(v[e], static_cast<Out>(sj[e]));
  }
  for (int64_t r = 0; r < kHostRowBlock; ++r)
    for (int64_t i = 0; i < kC2; ++i) c[r * n_len + i] = v[r * kC2 + i];
}

// A 32-bit output atom (int32 or fp32: 4 elements, 16 bytes) as one 16-byte vector of the
// compiler's (GCC vector extensions: an xmm register on x86, a q register on arm64), added
// as add() adds: int32 as uint32 (modulo 2^32, no signed overflow), fp32 one rounded add per
// lane; operands in add()'s order.
template <class Out>
struct Atom32;
template <>
struct Atom32<int32_t> {
  typedef uint32_t type __attribute__((vector_size(16)));
};
template <>
struct Atom32<float> {
  typedef float type __attribute__((vector_size(16)));
};
template <class V, class T>
__attribute__((always_inline)) inline V load_atom32(const T* p) {
  V v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
template <class V, class T>
__attribute__((always_inline)) inline void store_atom32(T* p, V v) {
  std::memcpy(p, &v, sizeof v);
}

// Rows [m0, m0 + R) of P surfaces `surface` elements apart, R < 8 (decode, a short last
// block), 32-bit outputs: per slice each surface's R atoms (R x 16 contiguous bytes) added
// into P x R vectors kept in registers, each row's P atoms of C stored once. The atoms one
// row at a time (`atom`) ran the slice loop (a pointer load, one add, a branch) per atom and
// slice, each atom's adds one dependent chain (fp32's 3 cycles an add): 1.1 (int32) and 1.3
// (fp32) cycles an atom and slice at 4 x 18944 x 3584 (docs/matmul-schedule.md "fp16 at
// small M").
template <int R, int P, class Out>
__attribute__((always_inline)) inline void short_block32(const Out* const* s, int64_t count, int64_t at, int64_t surface,
                                                         Out* c, int64_t n_len, bool first) {
  using V = typename Atom32<Out>::type;
  constexpr int64_t kC2 = 4;
  V v[P][R];
#pragma GCC unroll 8
  for (int p = 0; p < P; ++p)
#pragma GCC unroll 7
    for (int r = 0; r < R; ++r) {
      v[p][r] = load_atom32<V>(s[0] + at + p * surface + r * kC2);
      if (!first) v[p][r] = load_atom32<V>(c + r * n_len + p * kC2) + v[p][r];
    }
  for (int64_t j = 1; j < count; ++j) {
    const Out* sj = s[j] + at;
#pragma GCC unroll 8
    for (int p = 0; p < P; ++p)
#pragma GCC unroll 7
      for (int r = 0; r < R; ++r) v[p][r] = v[p][r] + load_atom32<V>(sj + p * surface + r * kC2);
  }
#pragma GCC unroll 8
  for (int p = 0; p < P; ++p)
#pragma GCC unroll 7
    for (int r = 0; r < R; ++r) store_atom32(c + r * n_len + p * kC2, v[p][r]);
}

// Rows [m0, m0 + R) of surfaces [0, full): P surfaces at a time, so that a slice's pass adds
// 6 to 8 atoms (P = 8 at decode), then the last ones alone.
template <int R, class Out>
__attribute__((always_inline)) inline void short_rows32(const Out* const* s, int64_t count, int64_t surface, Out* c,
                                                        int64_t n_len, bool first, int64_t m0, int64_t full) {
  constexpr int P = short_block_surfaces(R);
  constexpr int64_t kC2 = 4;
  Out* row = c + m0 * n_len;
  int64_t g = 0;
  for (; g + P <= full; g += P)
    short_block32<R, P>(s, count, g * surface + m0 * kC2, surface, row + g * kC2, n_len, first);
  for (; g < full; ++g) short_block32<R, 1>(s, count, g * surface + m0 * kC2, surface, row + g * kC2, n_len, first);
}

template <class Out>
__attribute__((always_inline)) inline void short_rows32_of(int64_t rows, const Out* const* s, int64_t count,
                                                           int64_t surface, Out* c, int64_t n_len, bool first,
                                                           int64_t m0, int64_t full) {
  switch (rows) {
    case 1: return short_rows32<1>(s, count, surface, c, n_len, first, m0, full);
    case 2: return short_rows32<2>(s, count, surface, c, n_len, first, m0, full);
    case 3: return short_rows32<3>(s, count, surface, c, n_len, first, m0, full);
    case 4: return short_rows32<4>(s, count, surface, c, n_len, first, m0, full);
    case 5: return short_rows32<5>(s, count, surface, c, n_len, first, m0, full);
    case 6: return short_rows32<6>(s, count, surface, c, n_len, first, m0, full);
    default: return short_rows32<7>(s, count, surface, c, n_len, first, m0, full);
  }
}

// Rows in 8-row blocks, each block across every surface: C is written row piece after row
// piece along its rows (8 write streams), every slice read 128 bytes (two lines) a surface.
// (Surfaces outer and rows inner, which reads each slice front to back, measured slower:
// C's rows are 4 N bytes apart, a power of two at the usual N, so the lines of a column of C
// fall in the same few cache sets and are evicted before the next surfaces fill them.)
template <SumIsa kIsa, class Native, class Out>
__attribute__((always_inline)) inline void unpack_impl(const Native* const* s, int64_t count, const Plan& p, Out* c,
                                                       bool first, int64_t r0, int64_t r1, int64_t ldc) {
  constexpr int64_t kC2 = kSumAtom / static_cast<int64_t>(sizeof(Native));
  const int64_t full = p.shape.n / kC2, tail = p.shape.n % kC2;
  const int64_t n_len = ldc > 0 ? ldc : p.shape.n;  // C's row stride, elements
  const int64_t surface = p.mp * kC2;  // elements per (mp, c2) surface
  int64_t g0 = 0;  // whole surfaces already summed (int4's int16 partials on x86)
#if defined(__x86_64__)
  if constexpr (std::is_same_v<Native, int16_t> && kIsa != SumIsa::portable) {
    if constexpr (kIsa == SumIsa::avx512) sum_i16_surfaces_avx512(s, count, surface, c, n_len, first, r0, r1, full);
    else sum_i16_surfaces_avx2(s, count, surface, c, n_len, first, r0, r1, full);
    g0 = full;
  }
#endif
  for (int64_t m0 = r0; m0 < r1; m0 += kHostRowBlock) {
    const int64_t m1 = std::min(r1, m0 + kHostRowBlock);
    Out* row = c + m0 * n_len;
    if (m1 - m0 == kHostRowBlock) {
      for (int64_t g = g0; g < full; ++g) block_run<kC2>(s, count, g * surface + m0 * kC2, row + g * kC2, n_len, first);
    } else if constexpr (std::is_same_v<Native, Out> && sizeof(Out) == 4) {  // int32, fp32
      short_rows32_of(m1 - m0, s, count, surface, c, n_len, first, m0, full);
    } else {
      for (int64_t g = g0; g < full; ++g)
        for (int64_t m = m0; m < m1; ++m) atom<kC2>(s, count, g * surface + m * kC2, c + m * n_len + g * kC2, first);
    }
    for (int64_t m = m0; m < m1 && tail > 0; ++m)
      atom<kC2>(s, count, full * surface + m * kC2, c + m * n_len + full * kC2, first, tail);
  }
}

}  // namespace

const char* sum_isa_name(SumIsa isa) {
  switch (isa) {
    case SumIsa::portable: return "portable";
    case SumIsa::avx2: return "avx2";
    case SumIsa::avx512: return "avx512";
  }
  return "unknown";
}

constexpr uint32_t kSumAvx512Features = cpu::kAvx512f | cpu::kAvx512bw | cpu::kAvx512vl;

bool sum_isa_supported(SumIsa isa) {
#if defined(__x86_64__)
  if (isa == SumIsa::avx2) return cpu::has(cpu::kAvx2);
  if (isa == SumIsa::avx512) return cpu::has(kSumAvx512Features);
#endif
  return isa == SumIsa::portable;
}

SumIsa sum_isa() {  // per call, from the features: a forced tier is features hidden
  return sum_isa_supported(SumIsa::avx512) ? SumIsa::avx512
         : sum_isa_supported(SumIsa::avx2) ? SumIsa::avx2
                                           : SumIsa::portable;
}

// Forcing a tier is the one override of cpu_features.h: the features of the tiers above it
// hidden (for every kernel family, as a CPU without them would be).
Status force_sum_isa(SumIsa isa) {
  if (!sum_isa_supported(isa))
    return make_error(-ENOTSUP, std::string("the ") + sum_isa_name(isa) + " slice sum: this CPU does not have it");
  cpu::hide_cpu_features(isa == SumIsa::avx512 ? 0u
                         : isa == SumIsa::avx2 ? kSumAvx512Features
                                               : kSumAvx512Features | cpu::kAvx2);
  return {};
}

void unforce_sum_isa() { cpu::hide_cpu_features(0); }

// Each element type's loop compiled once per ISA; the x86 clones carry their target.
#if defined(__x86_64__)
#define ORK_SUM_ROWS(Native, Out)                                                                                      \
  __attribute__((target("avx2"))) static void sum_avx2(const Native* const* s, int64_t count, const Plan& p, Out* c, \
                                                       bool first, int64_t r0, int64_t r1, int64_t ldc) {            \
    unpack_impl<SumIsa::avx2>(s, count, p, c, first, r0, r1, ldc);                                                    \
  }                                                                                                                   \
  __attribute__((target("avx512f,avx512bw,avx512vl"))) static void sum_avx512(                                        \
      const Native* const* s, int64_t count, const Plan& p, Out* c, bool first, int64_t r0, int64_t r1, int64_t ldc) { \
    unpack_impl<SumIsa::avx512>(s, count, p, c, first, r0, r1, ldc);                                                  \
  }                                                                                                                   \
  void unpack_rows_on(SumIsa isa, const Native* const* s, int64_t count, const Plan& p, Out* c, bool first,          \
                      int64_t r0, int64_t r1, int64_t ldc) {                                                         \
    if (isa == SumIsa::avx512) return sum_avx512(s, count, p, c, first, r0, r1, ldc);                                \
    if (isa == SumIsa::avx2) return sum_avx2(s, count, p, c, first, r0, r1, ldc);                                    \
    unpack_impl<SumIsa::portable>(s, count, p, c, first, r0, r1, ldc);                                               \
  }
#else
#define ORK_SUM_ROWS(Native, Out)                                                                                      \
  void unpack_rows_on(SumIsa, const Native* const* s, int64_t count, const Plan& p, Out* c, bool first, int64_t r0,  \
                      int64_t r1, int64_t ldc) {                                                                     \
    unpack_impl<SumIsa::portable>(s, count, p, c, first, r0, r1, ldc);                                               \
  }
#endif

// fp16 rounding. VCVTPS2PH rounds as float_to_half does (nearest even from the immediate,
// NaN quieted with its payload's top bits: docs/dtypes.md "fp16 conversion", checked against
// the host's converter in tests/driver/common/fp16_test.cpp); an fp32 subnormal becomes a
// signed zero whether or not MXCSR.DAZ is set, and tests/lib/matmul/layout_host_test.cpp
// runs every path under FTZ and DAZ too.
#if defined(__x86_64__)
namespace {
__attribute__((target("avx2,f16c"))) int64_t round_f16c(const float* in, uint16_t* out, int64_t count) {
  int64_t i = 0;
  for (; i + 8 <= count; i += 8)
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i),
                     _mm256_cvtps_ph(_mm256_loadu_ps(in + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  return i;
}
__attribute__((target("avx512f"))) int64_t round_avx512(const float* in, uint16_t* out, int64_t count) {
  int64_t i = 0;
  for (; i + 16 <= count; i += 16)
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i),
                        // all lanes; the plain form's undefined pass-through warns (GCC 12)
                        _mm512_maskz_cvtps_ph(0xffff, _mm512_loadu_ps(in + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  return i;
}
}  // namespace
#endif

void round_to_fp16_on(SumIsa isa, const float* in, uint16_t* out, int64_t count) {
  int64_t i = 0;
#if defined(__x86_64__)
  if (isa == SumIsa::avx512) i = round_avx512(in, out, count);
  if (isa != SumIsa::portable && cpu::has(cpu::kF16c)) i += round_f16c(in + i, out + i, count - i);
#else
  (void)isa;
#endif
  for (; i < count; ++i) out[i] = ork::float_to_half(in[i]);
}

ORK_SUM_ROWS(int32_t, int32_t)
ORK_SUM_ROWS(int16_t, int32_t)
ORK_SUM_ROWS(float, float)
ORK_SUM_ROWS(uint16_t, uint16_t)
#undef ORK_SUM_ROWS

}  // namespace ork::matmul
ORK_KERNEL_CHECKS_END
