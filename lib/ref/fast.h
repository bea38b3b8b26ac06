// The fast int8 CPU path: blocked, vectorised, optionally on two threads. Integer math, so it
// is bit-identical to the oracle (oracle.h) whatever the ISA, blocking or thread count; the
// tests check exactly that. Layouts as the oracle: row-major A (M x K), B (K x N), C (M x N).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <vector>

#include "driver/common/result.h"
#include "lib/ref/oracle.h"

namespace ork::ref {

// Kernel tiers, chosen at run time (x86: CPUID; AArch64: the kernel's hwcaps). x86: AMX-INT8
// (tdpbssd, s8 x s8 tiles), AVX-512 VNNI (vpdpbusd, u8 x s8 with a column-sum correction),
// AVX2 (vpmaddwd on sign-extended int16 pairs), SSE2 (pmaddwd). AArch64: SDOT (Armv8.2-A dot
// product, s8 x s8; getauxval(AT_HWCAP) & HWCAP_ASIMDDP), e.g. the RK3588's Cortex-A76 and
// A55. All exact: none of these instructions saturates.
// `generic` is plain C++ (int16 pairs, left to the compiler's vectoriser): any CPU. Every
// supported tier can be forced with FastOptions::isa / pack_b_int8's isa (tests, ork_bench).
enum class Isa { generic, sse2, avx2, avx512_vnni, amx, sdot };

const char* isa_name(Isa isa);
bool isa_supported(Isa isa);
Isa best_isa();
std::vector<Isa> supported_isas();

struct FastOptions {
  int threads = 0;           // 0 = up to the machine's hardware threads (big shapes only)
  std::optional<Isa> isa;    // unset = best_isa(); an unsupported one is an error
  // Short M (1..8 on AVX-512 VNNI and AMX) goes to a rows kernel that computes no padding
  // rows (docs/cpu-reference.md "Short M"). false: always the tier's full tiles (what a
  // benchmark compares it with; the tests run both).
  bool short_path = true;
  // When set: receives the threads the call ran on (what `threads` = 0 chose, or `threads`
  // capped by the shape's panels), for the cpu device's statistics (ork_stats.cpu_threads).
  int* threads_used = nullptr;
};

Status matmul_int8_fast(std::span<const int8_t> a, std::span<const int8_t> b,
                        std::span<int32_t> c, Dims d, const FastOptions& options = {});

// B packed once, for many multiplies with different A: resident weights, or the emulated
// NPU's M-tiles over one weight block. matmul_int8_fast packs B on every call (about a
// fifth of its time at M = 512, K = N = 2048); with a PackedB that work is done once.
// How B is stored for pack_b_int8:
enum class BOrder {
  row_major,     // K x N: B[k][n] at k * N + n (the oracle's layout)
  column_major,  // N x K: B[k][n] at n * K + k (each column's K values contiguous)
};

// Where matmul_int8_packed writes C, in int32 elements: element (m, n) is at
//   base[(n / group) * group_stride + m * row_stride + n % group].
// Row-major C (m x n) is {base, n, n, 0}: one group. The NPU's output surfaces are groups of
// 4 columns, each `surface stride` elements apart, rows 4 elements apart: the emulated NPU
// writes its output cube directly instead of copying a row-major C into it.
struct CLayout {
  int32_t* base = nullptr;
  int64_t row_stride = 0, group = 0, group_stride = 0;
  static CLayout row_major(std::span<int32_t> c, int64_t n) { return {c.data(), n, n, 0}; }
};

// Receives columns [n0, n1) of every row of C as int32 sums, element (m, n) at
// sums[m * ld + n - n0], valid during the call only (matmul_int8_packed_to).
using ColumnSink = std::function<void(int64_t n0, int64_t n1, const int32_t* sums, int64_t ld)>;

struct PackedCall;  // fast.cpp: what the multiplies with a PackedB share

class PackedB {
 public:
  int64_t k() const { return k_; }
  int64_t n() const { return n_; }
  Isa isa() const { return isa_; }
  size_t bytes() const { return panels_.size() + (bias_.size() + rows_bias_.size()) * sizeof(int32_t); }

 private:
  friend Result<PackedB> pack_b_int8(std::span<const int8_t>, int64_t, int64_t, BOrder, std::optional<Isa>);
  friend Status unpack_b_int8(const PackedB&, std::span<int8_t>);
  friend struct PackedCall;
  Isa isa_ = Isa::generic;
  int64_t k_ = 0, n_ = 0, groups_ = 0;
  std::vector<uint8_t> panels_;  // every panel of B in the kernel's format
  std::vector<int32_t> bias_;    // per column: what the kernel's tile needs added (VNNI)
  std::vector<int32_t> rows_bias_;  // the same for the short-M rows kernel, when it differs (AMX)
};

// Packs B (k x n, stored as `order` says) for one kernel tier (unset = best_isa()).
Result<PackedB> pack_b_int8(std::span<const int8_t> b, int64_t k, int64_t n, BOrder order,
                            std::optional<Isa> isa = {});
// The values back as K x N row-major (`out` holds K*N): what the cpu backend exports
// (packed-weight export, docs/library.md) without keeping a second copy of the weights.
Status unpack_b_int8(const PackedB& b, std::span<int8_t> out);
// c (m x n, row-major) = a (m x k, row-major) x b; bit-identical to matmul_int8.
// options.isa, when set, must be the tier b was packed for.
Status matmul_int8_packed(std::span<const int8_t> a, int64_t m, const PackedB& b, std::span<int32_t> c,
                          const FastOptions& options = {});
// The same into any CLayout (group >= 1; the caller owns the bounds: every element the
// layout names for m x n must be writable).
Status matmul_int8_packed(std::span<const int8_t> a, int64_t m, const PackedB& b, const CLayout& c,
                          const FastOptions& options = {});

// The same multiply with C handed over instead of stored: each thread computes a chunk of
// columns (split.h) into a scratch buffer of its own (M x the chunk's columns, int32) and
// calls `sink` with it at once, while it is in that core's cache. Calls on different threads
// run at once, on disjoint columns; together they cover [0, N) once. For a pass over C the
// caller would otherwise make after the call (the quantised modes' dequantisation): it runs
// on the call's threads, and no M x N int32 buffer is written or read.
Status matmul_int8_packed_to(std::span<const int8_t> a, int64_t m, const PackedB& b, const ColumnSink& sink,
                             const FastOptions& options = {});

}  // namespace ork::ref
