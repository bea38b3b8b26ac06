// fp16_matmul.h. Built with -ffp-contract=off (meson.build): `acc + a*b` stays two roundings
// of which the product's is exact, as in the oracle.
#include "lib/ref/fp16_matmul.h"

#include <algorithm>
#include <atomic>
#include <string>
#include <type_traits>
#include <vector>

#include "driver/common/fp16.h"
#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#endif
#include "lib/ref/fast.h"
#include "lib/ref/workers.h"

namespace ork::ref {
namespace {

// A tile of C: up to kRows rows x kCols columns. Each cell's sum runs in the oracle's order
// (per slice acc = 0, k increasing, then total = acc or total + acc); tiles only choose which
// cells are computed together: kRows rows share every B load, and a tile's accumulators
// (4 x 64 fp32 = 1 KiB) stay in L1 (the AVX-512F tile: in registers) while B's rows of the
// slice go by.
constexpr int64_t kRows = 4;
constexpr int64_t kCols = 64;
constexpr int64_t kLanes = 16;  // the inner loop's fixed length (one zmm, two ymm, four xmm)

// acc[r][n] = acc[r][n] + av[r] * b[n] over rows r < rows and n < len, n in runs of kLanes.
__attribute__((always_inline)) inline void tile_k(float (*acc)[kCols], const float* av, int64_t rows,
                                                  const float* __restrict b, int64_t len) {
  for (int64_t r = 0; r < rows; ++r) {
    const float x = av[r];
    float* __restrict d = acc[r];  // never B: without restrict -O2 keeps this loop scalar
    int64_t n = 0;
    for (; n + kLanes <= len; n += kLanes)
      for (int64_t i = 0; i < kLanes; ++i) d[n + i] = d[n + i] + x * b[n + i];
    for (; n < len; ++n) d[n] = d[n] + x * b[n];
  }
}

struct Job {
  const float* af;  // A in fp32, M x K
  const float* bf;  // B in fp32, K x N
  Dims d;
  int64_t slice_k;
  float* total;  // M x N fp32 result
};

// One tile: rows [m0, m0 + rows), columns [n0, n0 + len).
__attribute__((always_inline)) inline void tile(const Job& j, int64_t m0, int64_t rows, int64_t n0, int64_t len) {
  float acc[kRows][kCols];
  float av[kRows];
  for (int64_t k0 = 0; k0 < j.d.k; k0 += j.slice_k) {
    const int64_t k1 = std::min(j.d.k, k0 + j.slice_k);
    for (int64_t r = 0; r < rows; ++r) std::fill(acc[r], acc[r] + len, 0.0f);
    for (int64_t k = k0; k < k1; ++k) {
      for (int64_t r = 0; r < rows; ++r) av[r] = j.af[(m0 + r) * j.d.k + k];
      tile_k(acc, av, rows, j.bf + k * j.d.n + n0, len);
    }
    for (int64_t r = 0; r < rows; ++r) {
      float* t = j.total + (m0 + r) * j.d.n + n0;
      for (int64_t n = 0; n < len; ++n) t[n] = k0 == 0 ? acc[r][n] : t[n] + acc[r][n];
    }
  }
}

void tile_default(const Job& j, int64_t m0, int64_t rows, int64_t n0, int64_t len) { tile(j, m0, rows, n0, len); }
#if defined(__x86_64__)
// The same source compiled for wider vectors: mul and add stay separate instructions
// (-ffp-contract=off), so every tier's bytes are the oracle's.
__attribute__((target("avx2"))) void tile_avx2(const Job& j, int64_t m0, int64_t rows, int64_t n0, int64_t len) {
  tile(j, m0, rows, n0, len);
}
// A whole tile on AVX-512F: 64 columns at a time, the 4 x 64 accumulators held in 16 zmm
// registers over the whole K-slice (through memory every k, as the loop above keeps them,
// a profile put 88 % of the time on the accumulators' load-add-store chain). Per cell the
// same operations in the same order: acc = 0; acc = acc + a*b (mul, then add: two
// roundings) for k increasing; total = acc or total + acc.
__attribute__((target("avx512f"))) void tile_avx512(const Job& j, int64_t m0, int64_t rows, int64_t n0, int64_t len) {
  if (rows != kRows || len != kCols) return tile(j, m0, rows, n0, len);
  for (int64_t k0 = 0; k0 < j.d.k; k0 += j.slice_k) {
    const int64_t k1 = std::min(j.d.k, k0 + j.slice_k);
    for (int64_t c = n0; c < n0 + kCols; c += 64) {
      __m512 acc[kRows][4];
      for (auto& row : acc)
        for (auto& v : row) v = _mm512_setzero_ps();
      for (int64_t k = k0; k < k1; ++k) {
        const float* b = j.bf + k * j.d.n + c;
        const __m512 bv[4] = {_mm512_loadu_ps(b), _mm512_loadu_ps(b + 16), _mm512_loadu_ps(b + 32), _mm512_loadu_ps(b + 48)};
        for (int64_t r = 0; r < kRows; ++r) {
          const __m512 x = _mm512_set1_ps(j.af[(m0 + r) * j.d.k + k]);
          for (int v = 0; v < 4; ++v) acc[r][v] = _mm512_add_ps(acc[r][v], _mm512_mul_ps(x, bv[v]));
        }
      }
      for (int64_t r = 0; r < kRows; ++r)
        for (int v = 0; v < 4; ++v) {
          float* t = j.total + (m0 + r) * j.d.n + c + 16 * v;
          _mm512_storeu_ps(t, k0 == 0 ? acc[r][v] : _mm512_add_ps(_mm512_loadu_ps(t), acc[r][v]));
        }
    }
  }
}
#endif

// B's halves to fp32, elements [i0, i1). x86 with F16C: VCVTPH2PS, 8 at a time; it converts
// every half (subnormals, inf, NaN payloads) exactly as driver/common/fp16.h does, which
// tests/driver/common/fp16_test.cpp checks over all 65536 values against this instruction.
void convert_default(const uint16_t* b, float* out, int64_t i0, int64_t i1) {
  for (int64_t i = i0; i < i1; ++i) out[i] = half_to_float(b[i]);
}
#if defined(__x86_64__)
// F16C from CPUID leaf 1, ECX bit 29 (Intel SDM Vol. 2A, "CPUID"), asked directly: clang 14's
// __builtin_cpu_supports does not know "f16c". AVX (its 256-bit registers enabled by the OS)
// from the builtin, which checks OSXSAVE too.
bool has_f16c() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid(1, &eax, &ebx, &ecx, &edx) == 0) return false;
  return (ecx & (1u << 29)) != 0 && __builtin_cpu_supports("avx");
}

__attribute__((target("avx,f16c"))) void convert_f16c(const uint16_t* b, float* out, int64_t i0, int64_t i1) {
  int64_t i = i0;
  for (; i + 8 <= i1; i += 8)
    _mm256_storeu_ps(out + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b + i))));
  convert_default(b, out, i, i1);
}
#endif

// B converted on `threads` threads, a contiguous share each.
void convert_b(std::span<const uint16_t> b, float* out, int threads) {
  auto fn = convert_default;
#if defined(__x86_64__)
  if (has_f16c()) fn = convert_f16c;
#endif
  const auto n = static_cast<int64_t>(b.size());
  if (threads <= 1) return fn(b.data(), out, 0, n);
  detail::run_on_threads(threads, [&](int i) { fn(b.data(), out, n * i / threads, n * (i + 1) / threads); });
}

using TileFn = void (*)(const Job&, int64_t, int64_t, int64_t, int64_t);
TileFn tile_fn() {
#if defined(__x86_64__)
  if (isa_supported(Isa::avx512_vnni)) return tile_avx512;  // that tier implies AVX-512F
  if (isa_supported(Isa::avx2)) return tile_avx2;
#endif
  return tile_default;
}

// Threads for M x K x N: as asked, or (0) the online CPUs while each gets 2^22 MACs or more.
int choose_threads(const Fp16Options& o, Dims d, int64_t tiles) {
  int64_t t = o.threads > 0 ? o.threads : detail::online_cpus();
  if (o.threads <= 0) t = std::min<int64_t>(t, std::max<int64_t>(1, d.m * d.k * d.n >> 22));
  return static_cast<int>(std::clamp<int64_t>(t, 1, tiles));
}

// C's tiles on `threads` threads, each grabbing the next tile from one counter.
void run_tiles(const Job& j, int threads) {
  const int64_t row_tiles = (j.d.m + kRows - 1) / kRows, col_tiles = (j.d.n + kCols - 1) / kCols;
  const TileFn fn = tile_fn();
  std::atomic<int64_t> next{0};
  const auto work = [&] {
    for (int64_t i; (i = next.fetch_add(1)) < row_tiles * col_tiles;) {
      // Columns outer: consecutive tiles share one 64-column strip of B (K x 64 fp32: 512 KiB
      // at K = 2048), which stays in L2 while the row tiles go by.
      const int64_t m0 = i % row_tiles * kRows, n0 = i / row_tiles * kCols;
      fn(j, m0, std::min(kRows, j.d.m - m0), n0, std::min(kCols, j.d.n - n0));
    }
  };
  if (threads <= 1) return work();
  detail::run_on_threads(threads, work);
}

template <class Out, class Store>
Status run(std::span<const uint16_t> a, std::span<const uint16_t> b, std::span<Out> c, Dims d, int64_t slice_k,
           const Fp16Options& o, Store store) {
  if (Status s = check_operands(d, a.size(), b.size(), c.size()); !s) return s;
  if (slice_k < 1) return make_error(-EINVAL, "slice_k = " + std::to_string(slice_k) + ": must be >= 1");
  if (o.threads < 0) return make_error(-EINVAL, "threads = " + std::to_string(o.threads) + ": must be >= 0");
  const int64_t tiles = (d.m + kRows - 1) / kRows * ((d.n + kCols - 1) / kCols);
  const int threads = choose_threads(o, d, tiles);
  if (o.threads_used) *o.threads_used = threads;
  // The fp32 copies of B and A, kept per calling thread from call to call: a fresh 16 MiB
  // buffer (K = N = 2048) was zeroed and faulted in on every call, which cost more than
  // the conversion itself. Only ever grown; its size is the largest B this thread used.
  thread_local std::vector<float> bf, af;
  if (bf.size() < b.size()) bf.resize(b.size());
  if (af.size() < a.size()) af.resize(a.size());
  convert_b(b, bf.data(), std::min(threads, detail::online_cpus()));
  convert_b(a, af.data(), 1);
  std::vector<float> total;
  float* out = nullptr;
  if constexpr (std::is_same_v<Out, float>) {
    out = c.data();
  } else {
    total.resize(c.size());
    out = total.data();
  }
  run_tiles({af.data(), bf.data(), d, slice_k, out}, threads);
  if constexpr (!std::is_same_v<Out, float>)
    for (size_t i = 0; i < c.size(); ++i) store(c[i], total[i]);
  return {};
}

}  // namespace

Status matmul_fp16_rows(std::span<const uint16_t> a, std::span<const uint16_t> b, std::span<float> c, Dims d,
                        int64_t slice_k, const Fp16Options& options) {
  return run(a, b, c, d, slice_k, options, [](float& o, float v) { o = v; });
}

Status matmul_fp16_rows_to_fp16(std::span<const uint16_t> a, std::span<const uint16_t> b,
                                std::span<uint16_t> c, Dims d, int64_t slice_k, const Fp16Options& options) {
  return run(a, b, c, d, slice_k, options, [](uint16_t& o, float v) { o = float_to_half(v); });
}

}  // namespace ork::ref
