// ork_bench --peak (peak.cpp, peak_loops.cpp): the fast int8 path against the core's measured
// VPDPBUSD peak and the streaming-read bound, in one run.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

namespace ork::bench {

// Parses its own options (argv holds --peak); exit code 0, 1 (a result differed from the
// oracle) or 2 (bad usage, or a CPU without AVX-512 VNNI: nothing to compare with).
int run_peak(int argc, char** argv);

// Runs fn(0) on this thread and fn(1) on a second one, released together: wall seconds from
// the release until both returned (the 2-thread peak rows).
double on_two_threads(const std::function<void(int)>& fn);

// The loops the figures are measured against (peak_loops.cpp; x86-64 only).
bool vnni_peak_available();
// Multiply-adds done by `iters` rounds of a register-only loop of independent VPDPBUSD zmm
// accumulators (64 int8 MACs each); the returned checksum keeps the loop from being dropped.
constexpr int kPeakAccumulators = 16;
uint64_t vnni_peak_loop(int64_t iters);
inline int64_t vnni_peak_macs(int64_t iters) { return iters * kPeakAccumulators * 64; }
// The same for fp32 FMA: `iters` rounds of kPeakAccumulators independent VFMADD231PS zmm
// chains (16 fp32 multiply-adds each): the peak the fp16 kernels (FMA on fp32) run against.
uint64_t fma_peak_loop(int64_t iters);
inline int64_t fma_peak_macs(int64_t iters) { return iters * kPeakAccumulators * 16; }
// The same for AMX's TDPBSSD where the CPU has AMX-INT8 and the OS grants the tile state
// (lib/ref's amx_usable): `iters` rounds of kAmxPeakChains independent int32 C tiles, each
// 16 rows x 16 columns x 64 int8 MACs a TDPBSSD, A and B tiles loaded once before the loop:
// the peak lib/ref's int8 tiles and lib/quant's groups on tiles run against.
bool amx_peak_available();
constexpr int kAmxPeakChains = 4;
uint64_t amx_peak_loop(int64_t iters);
inline int64_t amx_peak_macs(int64_t iters) { return iters * kAmxPeakChains * 16 * 16 * 64; }
// The ceiling of groups of 32 on tiles (peak_loops.cpp): `iters` rounds of two groups, each
// a pair of 16 x 16 C tiles over 32 bytes of K, stored and read back as floats.
constexpr int kAmxGroup32Bytes = 32;
uint64_t amx_group32_loop(int64_t iters);
inline int64_t amx_group32_macs(int64_t iters) { return iters * 4 * 16 * 16 * kAmxGroup32Bytes; }
// The reference loops this CPU runs, as one table for every mode that measures against
// them (--peak, --cpu-dtypes): VPDPBUSD and fp32 FMA where vnni_peak_available(), TDPBSSD
// where amx_peak_available() too, with the ceiling of groups of 32 on tiles beside it. `unit`
// is what a row measured against it multiplies with.
enum class PeakUnit { vpdpbusd, fma, tdpbssd, tdpbssd_group32 };
struct PeakLoop {
  const char* name;  // "vpdpbusd peak", "fp32 fma peak", "tdpbssd peak", "tdpbssd group-32 ceiling"
  PeakUnit unit;
  uint64_t (*run)(int64_t iters);
  int64_t (*macs)(int64_t iters);
};
std::vector<PeakLoop> peak_loops();
// Rounds of `loop` for a sample of about `seconds`, at least 1 << 14, from a timed run of
// 1 << 14 after a first one (AMX's unit starts slow after idling).
int64_t peak_iters(const PeakLoop& loop, double seconds);
// Reads `bytes` (a multiple of 256) from `p` with 64-byte vector loads into four
// independent sums: what reading that memory costs at best.
uint64_t stream_read(const uint8_t* p, size_t bytes);

}  // namespace ork::bench
