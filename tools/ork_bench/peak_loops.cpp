// The reference loops of ork_bench --peak (peak.h). Each is compiled for AVX-512 with a
// target attribute and only called after vnni_peak_available() said yes; other CPUs (the
// AArch64 build) get stubs that are never called.
#include <algorithm>
#include <chrono>
#include <cstring>

#include "tools/ork_bench/peak.h"

#include "driver/common/cpu_features.h"
#if defined(__x86_64__)
#include <immintrin.h>

#include "lib/ref/amx_tiles.h"
#include "lib/ref/kernels.h"
#endif

namespace ork::bench {

#if defined(__x86_64__)

namespace {
// The eight 64-bit lanes added up (not _mm512_reduce_add_epi64: GCC 12's expansion warns
// -Wuninitialized on its own undefined temporary).
__attribute__((target("avx512f")))
uint64_t lane_sum(__m512i v) {
  uint64_t lanes[8];
  _mm512_storeu_si512(lanes, v);
  uint64_t sum = 0;
  for (uint64_t x : lanes) sum += x;
  return sum;
}
}  // namespace

bool vnni_peak_available() {
  return cpu::has(cpu::kAvx512f | cpu::kAvx512bw | cpu::kAvx512vnni);
}

// kPeakAccumulators chains, each one VPDPBUSD per round: more than latency (about 5 cycles)
// x issue rate (2 per cycle) in flight, no memory operand, so only the multiply ports limit
// it. The operands come through a volatile read so the compiler cannot fold them.
__attribute__((target("avx512f,avx512bw,avx512vnni")))
uint64_t vnni_peak_loop(int64_t iters) {
  volatile int32_t seed = 0x01020304;
  const __m512i x = _mm512_set1_epi32(seed), y = _mm512_set1_epi32(seed + 1);
  __m512i acc[kPeakAccumulators];
#pragma GCC unroll 16
  for (int i = 0; i < kPeakAccumulators; ++i) acc[i] = _mm512_set1_epi32(i);
  for (int64_t it = 0; it < iters; ++it) {
#pragma GCC unroll 16
    for (int i = 0; i < kPeakAccumulators; ++i) acc[i] = _mm512_dpbusd_epi32(acc[i], x, y);
  }
  __m512i sum = acc[0];
#pragma GCC unroll 16
  for (int i = 1; i < kPeakAccumulators; ++i) sum = _mm512_xor_si512(sum, acc[i]);
  return lane_sum(sum);
}

// As the VPDPBUSD loop: kPeakAccumulators chains of VFMADD231PS (latency about 4 cycles x 2
// per cycle in flight), operands from a volatile so nothing folds; the values stay finite
// (x * 1 + 0 with a tiny x) so no denormal or overflow slows a lane.
__attribute__((target("avx512f")))
uint64_t fma_peak_loop(int64_t iters) {
  volatile float seed = 1.0f;
  const __m512 x = _mm512_set1_ps(seed), y = _mm512_set1_ps(seed - 1.0f);
  __m512 acc[kPeakAccumulators];
#pragma GCC unroll 16
  for (int i = 0; i < kPeakAccumulators; ++i) acc[i] = _mm512_set1_ps(static_cast<float>(i));
  for (int64_t it = 0; it < iters; ++it) {
#pragma GCC unroll 16
    for (int i = 0; i < kPeakAccumulators; ++i) acc[i] = _mm512_fmadd_ps(acc[i], x, y);
  }
  __m512 sum = acc[0];
#pragma GCC unroll 16
  for (int i = 1; i < kPeakAccumulators; ++i) sum = _mm512_add_ps(sum, acc[i]);
  return lane_sum(_mm512_castps_si512(sum));
}

bool amx_peak_available() { return ref::detail::amx_usable(); }

// Tiles 0-3: the C chains (16 x 16 int32); 4-5: A (16 rows x 64 int8); 6-7: B (16 quads x
// 16 columns x 4 int8). Each round multiplies both A tiles by both B tiles, 2 x 2 as lib/ref's
// int8 tiles do, so no chain waits on its own last TDPBSSD while the other three run.
__attribute__((target("amx-tile,amx-int8")))
uint64_t amx_peak_loop(int64_t iters) {
  static_assert(kAmxPeakChains == 4, "the loop below names its four C tiles");
  ref::detail::TileConfig cfg;
  for (int i = 0; i < 8; ++i) cfg.rows[i] = ref::detail::kAmxTileRows, cfg.colsb[i] = ref::detail::kAmxTileBytes;
  ref::detail::load_tile_config(cfg);
  alignas(64) int8_t ab[ref::detail::kAmxTileRows * ref::detail::kAmxTileBytes];
  volatile int8_t seed = 1;  // through a volatile, so the compiler knows nothing of the values
  for (int8_t& x : ab) x = seed;
  constexpr int kStride = ref::detail::kAmxTileBytes;
  _tile_loadd(4, ab, kStride);
  _tile_loadd(5, ab, kStride);
  _tile_loadd(6, ab, kStride);
  _tile_loadd(7, ab, kStride);
  _tile_zero(0);
  _tile_zero(1);
  _tile_zero(2);
  _tile_zero(3);
  for (int64_t it = 0; it < iters; ++it) {
    _tile_dpbssd(0, 4, 6);
    _tile_dpbssd(1, 4, 7);
    _tile_dpbssd(2, 5, 6);
    _tile_dpbssd(3, 5, 7);
  }
  alignas(64) int32_t c[ref::detail::kAmxTileRows * 16];
  _tile_stored(0, c, kStride);
  ref::detail::release_tiles();
  uint64_t sum = 0;
  for (int32_t x : c) sum += static_cast<uint32_t>(x);
  return sum;
}

// A stored pair of C tiles (16 rows x 32 int32) converted and added into four float chains
// (masked with all lanes: GCC 12's unmasked VCVTDQ2PS warns -Wmaybe-uninitialized).
__attribute__((target("avx512f"), always_inline)) inline void group32_extract(const int32_t* c, __m512* f) {
  for (int r = 0; r < ref::detail::kAmxTileRows * 2; ++r)
    f[r % 4] = _mm512_add_ps(f[r % 4], _mm512_maskz_cvtepi32_ps(0xffff, _mm512_load_si512(c + r * 16)));
}
// One group's sums into C pair 0 (tiles 0, 1) or 1 (2, 3), A in tile 4 or 5: GCC's tile
// intrinsics take literal tile numbers.
__attribute__((target("amx-tile,amx-int8"), always_inline)) inline void group32_sums0() {
  _tile_zero(0);
  _tile_zero(1);
  _tile_dpbssd(0, 4, 6);
  _tile_dpbssd(1, 4, 7);
}
__attribute__((target("amx-tile,amx-int8"), always_inline)) inline void group32_sums1() {
  _tile_zero(2);
  _tile_zero(3);
  _tile_dpbssd(2, 5, 6);
  _tile_dpbssd(3, 5, 7);
}

// Groups of 32 on tiles (lib/quant's amx tier) cannot accumulate across groups: each group's
// 16 x 16 int32 sums leave the tile unit through memory (TILESTORED; no tile-to-register move
// before AMX-AVX512) and come back as AVX-512 floats. This loop does the least of that work a
// group-wise kernel does, with nothing from memory but its own stores: per group, TDPBSSD
// over 32 bytes of K into a zeroed pair of C tiles (a TDPBSSD over 32 bytes takes as long as
// one over 64: docs/cpu-reference.md "The tile ceiling of groups of 32"), the pair stored,
// and each stored row converted (VCVTDQ2PS) and added into four float chains. Two pairs
// alternate, as in the amx tier, so one pair's TDPBSSD overlap the other's extraction.
__attribute__((target("amx-tile,amx-int8,avx512f")))
uint64_t amx_group32_loop(int64_t iters) {
  constexpr int kRows = ref::detail::kAmxTileRows, kK = kAmxGroup32Bytes, kLd = 32 * sizeof(int32_t);
  ref::detail::TileConfig cfg;
  for (int i = 0; i < 4; ++i) cfg.rows[i] = kRows, cfg.colsb[i] = ref::detail::kAmxTileBytes;
  for (int i = 4; i < 6; ++i) cfg.rows[i] = kRows, cfg.colsb[i] = kK;
  for (int i = 6; i < 8; ++i) cfg.rows[i] = kK / 4, cfg.colsb[i] = ref::detail::kAmxTileBytes;
  ref::detail::load_tile_config(cfg);
  alignas(64) int8_t ab[kRows * ref::detail::kAmxTileBytes];
  volatile int8_t seed = 1;
  for (int8_t& x : ab) x = seed;
  _tile_loadd(4, ab, kK);
  _tile_loadd(5, ab, kK);
  _tile_loadd(6, ab, ref::detail::kAmxTileBytes);
  _tile_loadd(7, ab, ref::detail::kAmxTileBytes);
  alignas(64) int32_t acc[2][kRows * 32];
  __m512 f[4] = {_mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps()};
  group32_sums0();
  group32_sums1();
  for (int64_t it = 0; it < iters; ++it) {
    _tile_stored(0, acc[0], kLd);
    _tile_stored(1, acc[0] + 16, kLd);
    group32_sums0();
    _tile_stored(2, acc[1], kLd);
    _tile_stored(3, acc[1] + 16, kLd);
    group32_sums1();
    group32_extract(acc[0], f);
    group32_extract(acc[1], f);
  }
  ref::detail::release_tiles();
  return lane_sum(_mm512_castps_si512(_mm512_add_ps(_mm512_add_ps(f[0], f[1]), _mm512_add_ps(f[2], f[3]))));
}

__attribute__((target("avx512f")))
uint64_t stream_read(const uint8_t* p, size_t bytes) {
  __m512i s0 = _mm512_setzero_si512(), s1 = s0, s2 = s0, s3 = s0;
  for (size_t i = 0; i < bytes; i += 256) {
    s0 = _mm512_add_epi64(s0, _mm512_loadu_si512(p + i));
    s1 = _mm512_add_epi64(s1, _mm512_loadu_si512(p + i + 64));
    s2 = _mm512_add_epi64(s2, _mm512_loadu_si512(p + i + 128));
    s3 = _mm512_add_epi64(s3, _mm512_loadu_si512(p + i + 192));
  }
  const __m512i sum = _mm512_add_epi64(_mm512_add_epi64(s0, s1), _mm512_add_epi64(s2, s3));
  return lane_sum(sum);
}

#else

bool vnni_peak_available() { return false; }
uint64_t vnni_peak_loop(int64_t) { return 0; }
bool amx_peak_available() { return false; }
uint64_t amx_peak_loop(int64_t) { return 0; }
uint64_t amx_group32_loop(int64_t) { return 0; }
uint64_t fma_peak_loop(int64_t) { return 0; }
uint64_t stream_read(const uint8_t* p, size_t bytes) {
  uint64_t sum = 0;
  for (size_t i = 0; i + 8 <= bytes; i += 8) {
    uint64_t v;
    std::memcpy(&v, p + i, sizeof v);
    sum += v;
  }
  return sum;
}

#endif

std::vector<PeakLoop> peak_loops() {
  if (!vnni_peak_available()) return {};
  std::vector<PeakLoop> loops{{"vpdpbusd peak", PeakUnit::vpdpbusd, vnni_peak_loop, vnni_peak_macs},
                              {"fp32 fma peak", PeakUnit::fma, fma_peak_loop, fma_peak_macs}};
  if (amx_peak_available()) {
    loops.push_back({"tdpbssd peak", PeakUnit::tdpbssd, amx_peak_loop, amx_peak_macs});
    loops.push_back({"tdpbssd group-32 ceiling", PeakUnit::tdpbssd_group32, amx_group32_loop, amx_group32_macs});
  }
  return loops;
}

int64_t peak_iters(const PeakLoop& loop, double seconds) {
  constexpr int64_t kProbe = int64_t{1} << 14;
  volatile uint64_t sink = loop.run(kProbe);
  const auto t0 = std::chrono::steady_clock::now();
  sink = loop.run(kProbe);
  (void)sink;
  const double probe = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return std::max<int64_t>(kProbe, static_cast<int64_t>(static_cast<double>(kProbe) * seconds / probe));
}

}  // namespace ork::bench
