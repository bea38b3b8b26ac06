// Micro-kernels of the fast int8 path (internal to lib/ref). Every kernel reads K in groups
// of 4 bytes per row: two sign-extended int16 (pair kernels) or four biased uint8 (VNNI), so
// one group is one int32 broadcast. A panel of B holds, per group, `nr` columns x 4 bytes.
#pragma once

#include <cstdint>

#include "lib/ref/fast.h"

namespace ork::ref::detail {

// How a kernel wants A (B follows: int16 pairs, or int8 quads).
enum class AFormat {
  int16_pairs,  // two sign-extended int16 per group (pmaddwd)
  u8_biased,    // four uint8 a + 128 per group; the caller subtracts 128 * column sums
  s8,           // four int8 per group (AMX tdpbssd, AArch64 SDOT: signed x signed)
};

struct Kernel {
  Isa isa;
  int mr;            // rows per micro-tile (packed A is padded with zero rows to a multiple)
  int nr;            // columns per micro-tile (= columns per B panel)
  AFormat a_format;
  int group_align;   // K groups padded to a multiple of this (AMX: 16 groups = 64 bytes)
  // A packed in blocks of mr rows as [M/mr][K/a_unit][mr][a_unit bytes] when a_unit > 0
  // (AMX: 64, one tile of mr rows x 64 K bytes contiguous), else plain rows; a_chunk_major
  // (below) puts the K chunks outermost. Where a block's chunk starts: pack.h a_chunk_offset.
  int a_unit;
  int chunk_groups;  // K groups per cache block: A and B chunks of one block stay in L1
  // Computes the full mr x nr int32 tile (row-major, nr per row) over `groups` K groups and
  // stores it to `out`, or adds it to `out` when `accumulate`. `a` points at the block's
  // chunk of packed A (a_chunk_offset: rows `a_stride` bytes apart, or blocked), bp at the
  // panel chunk.
  void (*micro)(const uint8_t* a, int64_t a_stride, const uint8_t* bp, int64_t groups,
                int32_t* out, bool accumulate);
  void (*thread_begin)();  // per-thread state (AMX tile configuration), or null
  void (*thread_end)();
  // The short-M path, used for M <= short_m (0 = none): `rows` (1 .. short_m) rows of A,
  // packed as rows in rows_a_format (no padding rows, `a_stride` bytes apart), against the
  // same panels, over `groups` K groups; the rows x nr tile stored (or added) row-major. A
  // full tile of mr rows would multiply mr - M rows of padding: 7/8 of VNNI's work at M = 1,
  // 31/32 of AMX's, 3/4 of SDOT's. The panel format must be 4-byte quads; a rows kernel that
  // reads biased A over panels packed without bias (AMX's use of VNNI's) adds -128 x column
  // sum itself (rows_need_column_bias below; column_bias, pack.h).
  void (*micro_rows)(int rows, const uint8_t* a, int64_t a_stride, const uint8_t* bp, int64_t groups,
                     int32_t* out, bool accumulate) = nullptr;
  int short_m = 0;                 // <= kMaxShortM
  Isa rows_isa = Isa::generic;     // the tier micro_rows is built for (the CPU must have it)
  // dst[i] = t[i] + bias[i] modulo 2^32 for i < len (a row of a tile into C), in the tier's
  // widest stores; null: fast.cpp's portable loop.
  void (*add_bias)(int32_t* dst, const int32_t* t, const int32_t* bias, int64_t len) = nullptr;
  // The last K chunk of a full tile straight into C: micro's tile over `groups`, plus the
  // partial tile `partial` (earlier chunks, mr x nr row-major; null: none), plus bias[nr],
  // stored to rows of C `c_stride` elements apart. Null: micro into the panel buffer, then
  // add_bias (fast.cpp store_rows); used only where the tile's mr rows and nr columns are
  // all in C and contiguous per row.
  void (*micro_to_c)(const uint8_t* a, const uint8_t* bp, int64_t groups, const int32_t* partial, int32_t* c,
                     int64_t c_stride, const int32_t* bias) = nullptr;
  // With a_unit = 4: A as [K chunk][M/mr][chunk groups][mr][4 bytes], one K group of the mr
  // rows in 4 mr contiguous bytes, and a K chunk of every block one contiguous run, so the
  // row-block loop over one panel chunk reads A as a single sequential stream (VNNI).
  bool a_chunk_major = false;
  // How the rows kernel wants its rows of A: u8_biased (VNNI's and AMX's rows kernel) or s8
  // (SDOT's, signed x signed like its tiles, so no column bias either).
  AFormat rows_a_format = AFormat::u8_biased;
};

// The rows kernel reads biased A while the tier's panels carry no bias (AMX): the short-M
// path adds -128 x column sum itself (column_bias, pack.h).
inline bool rows_need_column_bias(const Kernel& k) {
  return k.micro_rows != nullptr && k.rows_a_format == AFormat::u8_biased && k.a_format != AFormat::u8_biased;
}

constexpr int kMaxShortM = 8;      // rows of the short-M path's tile (nr <= 64 columns each)

inline int k_per_group(const Kernel& k) { return k.a_format == AFormat::int16_pairs ? 2 : 4; }

#if defined(__x86_64__)
// AMX (kernel_amx.cpp): CPUID says AMX-TILE and AMX-INT8, and the kernel granted this process
// the tile data state (arch_prctl ARCH_REQ_XCOMP_PERM, Linux >= 5.16).
bool amx_usable();
#endif

const Kernel& kernel_for(Isa isa);  // fast.cpp
const Kernel& generic_kernel();     // kernel_generic.cpp: any CPU
#if defined(__x86_64__)
const Kernel& sse2_kernel();        // kernels_x86.cpp
const Kernel& avx2_kernel();
const Kernel& vnni_kernel();
const Kernel& amx_kernel();         // kernel_amx.cpp
// VNNI's short-M kernel (kernels_x86.cpp), also AMX's: 1 .. kVnniShortM rows x 32 columns.
// Up to 8: from a PackedB at K = N = 2048 on one thread it beat AMX's tiles for M = 1..8
// (149-197 us against 227-245, `ork_bench --peak --sweep 9`); at M = 9 two blocks of rows
// took 262 us against the tiles' 227-233 (docs/cpu-reference.md "Against the measured peak").
constexpr int kVnniShortM = 8;
void vnni_rows(int rows, const uint8_t* a, int64_t a_stride, const uint8_t* bp, int64_t groups, int32_t* out,
               bool accumulate);
// kernels.h add_bias in 64-byte stores (AVX-512F): a row of C in 2 stores for nr = 32
// instead of 8, so a block's stores to missing lines fill less of the store buffer.
void add_bias_avx512(int32_t* dst, const int32_t* t, const int32_t* bias, int64_t len);
#endif
#if defined(__aarch64__)
const Kernel& sdot_kernel();        // kernel_sdot.cpp (compiled with +dotprod)
// SDOT's short-M kernel: 1 .. kSdotShortM rows x 16 columns, s8 rows of A. Past 6 rows its
// accumulators (4 vectors a row) and B's 4 vectors would not fit the 32 vector registers;
// 7 and 8 rows are two of the 4-row tiles with one or no padding row.
constexpr int kSdotShortM = 6;
#endif

}  // namespace ork::ref::detail
