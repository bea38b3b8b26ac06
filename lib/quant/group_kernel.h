// The cpu device's fused quantised matmul (docs/quantisation.md "The cpu device's fused
// kernel"): for a strip of output columns and a few rows of A, every K-group's integer dot
// products and its dequantisation in one pass, the running sum per output cell kept in
// registers from group to group, C written once. Exactly reference.h's order per cell:
//   u_g = fl(float(acc_g) * sw[g][n]);  t = u_0;  t = fl(t + u_g), g = 1, 2, ...;  C = fl(t * sa[m])
// acc_g is exact integer arithmetic whatever the instruction, and every float operation is one
// IEEE operation per lane (no FMA: lib/quant is compiled with -ffp-contract=off), so the result
// is the reference's bit for bit on every tier and thread count. The order forbids summing
// across K in floats, so the vectors run across N (as lib/ref's fp16 strips do), and the
// threads take column strips by lib/ref/split.h's rule. Affine imports (ggml Q4_1:
// reference.h qmatmul_codes) in the same pass: acc_g made the format's sum exactly in int32
// (int4: the offset already in the packed codes; int8: + code_offset x s_g, s_g the row's
// code sum over the group, folded into the accumulator's start), then
// u_g = fl(u_g + fl(float(s_g) * mn[g][n])) before it joins t.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "driver/common/result.h"
#include "lib/quant/activations.h"
#include "lib/quant/qweights.h"
#include "lib/ref/amx_tiles.h"

namespace ork::quant::detail {

// portable: plain C++ (any CPU). avx2: VPMADDWD on sign-extended int16 pairs, 16 columns a
// strip. vnni: AVX-512 VNNI VPDPBUSD on biased uint8 A x int8 B quads (the column-sum
// correction folded into the accumulator's start), 32 columns a strip. amx: vnni's packed
// weights, each group's sums on AMX tiles (TDPBSSD, signed x signed) for calls of at least
// kAmxMinRows rows, vnni's kernel below that. The x86 tiers are picked from the one feature
// query (driver/common/cpu_features.h; amx also needs the OS's grant, lib/ref/kernels.h).
enum class GroupTier { portable, avx2, vnni, amx };

const char* group_tier_name(GroupTier t);
bool group_tier_supported(GroupTier t);
std::vector<GroupTier> supported_group_tiers();  // slowest first
GroupTier best_group_tier();

// K values per step of a tier's inner loop (4 bytes: VNNI's quad, 2 int16: AVX2's pair) and
// columns per strip.
int group_tier_unit(GroupTier t);
int group_tier_strip(GroupTier t);

// Symmetric weights packed for one tier: per strip of columns, each group's steps (its rows
// rounded up to the unit, zero padded), the group's weight scales for the strip's columns
// (0 past N) and, on vnni, -128 x each column's code sum over the group (modulo 2^32);
// affine weights also their m terms and the part of their code offset the packed codes do
// not already hold (group_kernel.cpp folded_offset: 0 but for int8 weights on vnni and portable).
struct GroupPacked {
  GroupTier tier = GroupTier::portable;
  int64_t k = 0, n = 0, width = 0, groups = 0, strip = 0, strips = 0;
  std::vector<int64_t> group_off;  // byte offset of group g in a strip's block, [groups + 1]
  std::vector<uint8_t> b;          // [strips][group_off[groups] bytes], or nibbles (below)
  // int4 codes two a byte (vnni and amx tiers, PackOptions::nibbles): b holds
  // [strips][group_off[groups] / 2 bytes] (+ kAmxBSlack / 2), byte i of each 64 the codes i
  // (low nibble) and 64 + i (high) of the byte layout's 128-byte run, as code - nibble_base.
  // Short calls read them as they are; longer ones widen them (PackOptions, fused_qmatmul).
  bool nibbles = false;
  int8_t nibble_base = 0;
  std::vector<int32_t> bias;       // [strips][groups][strip] (vnni), else empty
  std::vector<float> scales;       // [strips][groups][strip]
  std::vector<float> mins;         // [strips][groups][strip] (affine with an m term), else empty
  int32_t code_offset = 0;         // packed code + offset = the format's code
  size_t bytes() const {
    return b.size() + bias.size() * sizeof(int32_t) + (scales.size() + mins.size()) * sizeof(float);
  }
};

// int4 weights on the vnni and amx tiers are kept two codes a byte (GroupPacked::nibbles):
// half the memory, and decode (up to kStripRows rows, one pass over B) reads half the bytes,
// widening them in registers; longer calls widen a grab of strips at a time into a kept
// buffer (docs/cpu-reference.md "int4 weights two codes a byte"). `nibbles = false` keeps
// one code a byte (the tests run both).
struct PackOptions {
  bool nibbles = true;
};

// Refuses an unsupported tier.
Result<GroupPacked> pack_group_weights(const QuantWeights& w, GroupTier tier, const PackOptions& o = {});

// `bytes` (a multiple of 128) of the byte layout from bytes / 2 of nibbles (GroupPacked):
// code = nibble + base. x86-64 with AVX-512BW (the vnni and amx tiers'), else plain C++.
void unpack_nibbles(const uint8_t* src, int64_t bytes, int8_t base, uint8_t* dst);

struct FusedOptions {
  int threads = 0;               // 0: as split.h's rule chooses for the shape
  int* threads_used = nullptr;   // receives the threads the call ran on
};

// C (M x N row-major) from quantised activations (qa.k = K) and packed weights.
Status fused_qmatmul(const QuantActivations& qa, const GroupPacked& b, std::span<float> c, const FusedOptions& o);

// ---- The tiers' kernels (group_kernel.cpp, group_kernel_x86.cpp).
constexpr int kStripRows = 8;      // most rows of A per call of the register tiers (row_block_of)
constexpr int kMostCallRows = 16;  // most rows of A per kernel call of any tier (amx's block)
// Rows per kernel call of a tier. amx: 16, one A tile against the strip's two B tiles (the
// last block of M padded with zero rows to 16). vnni: 6 rows, 12 accumulators in flight (4 rows' 8 left
// VPDPBUSD's issue slots idle; 6 rows measured 5-10 % more MACs per CPU-second at M = 128,
// K = N = 2048, docs/cpu-reference.md), their 12 running sums beside them (in registers in
// the straight group of 32; 7 rows measured no faster, 8 rows a call about 0.04x of int8's
// kernel time slower at M = 512). Also the rows of one block of prepared A (vnni). avx2 has
// 16 ymm: 4.
int group_tier_rows(GroupTier t);

// The tier a call runs on packed weights of tier t: amx's weights below kAmxMinRows rows run
// vnni's kernel, whose one call of up to kStripRows rows reads B once (a 16-row tile at M = 1
// is 15/16 padding). Measured with fused_qmatmul alone, one thread, K x N = 3584 x 2048,
// groups of 32, best of 15, 3 runs (docs/cpu-reference.md "Groups on AMX"): M = 4 vnni
// 359-393 us against the tiles' 395-448, M = 8 a tie, M = 12 vnni 541-662 against 388-528.
GroupTier call_tier(GroupTier t, int64_t m);
inline constexpr int64_t kAmxMinRows = kStripRows + 1;

// The kernel call (and, on vnni, the block of prepared A) that holds row i of M: blocks of
// group_tier_rows from row 0, but on vnni a remainder of 1 or 2 rows joins the last full
// block (one call of 7 or 8 rows): a call of 1 or 2 rows has 2 or 4 chains of 8 dependent
// VPDPBUSD per group, bound by their latency (M = 128 and 512 leave 2 rows: docs/cpu-reference.md
// "Groups of 32: the 2-row remainder").
struct RowBlock {
  int64_t start = 0;
  int rows = 0;
};
RowBlock row_block_of(GroupTier t, int64_t m, int64_t i);

// One kernel call: `rows` rows of A in the tier's format (portable and amx: int8 codes, amx's
// rows past M and values past K zero up to a whole tile; avx2: int16),
// `a_stride` bytes apart, group g's values from byte g * width * (bytes a value); vnni: code
// + 128 as uint8 in one block of the `rows` rows, quad q (K values 4q .. 4q + 3) of row r at
// a[(q * rows + r) * 4] (a_stride unused); one strip of packed weights; C's rows `ldc`
// floats apart, `cols` of the strip's columns stored.
struct StripCall {
  const uint8_t* a = nullptr;
  int64_t a_stride = 0, width = 0;
  int rows = 0, cols = 0;
  const uint8_t* b = nullptr;
  const int64_t* group_off = nullptr;
  int64_t groups = 0;
  const int32_t* bias = nullptr;  // [groups][strip] (vnni)
  const float* scales = nullptr;  // [groups][strip]
  const float* sa = nullptr;      // the rows' activation scales
  float* c = nullptr;
  int64_t ldc = 0;
  // Affine weights (null / 0 otherwise): the rows' code sums per group, row r's group g at
  // gsum[r * groups + g] as int32 (x code_offset, when not 0, into the accumulator's start)
  // and as float (exact: |s_g| <= 128 x the group width) for the m terms `mins`
  // ([groups][strip], or null).
  const int32_t* gsum = nullptr;
  const float* gsum_f = nullptr;
  const float* mins = nullptr;
  int32_t code_offset = 0;
  // B two codes a byte (GroupPacked::nibbles; the vnni tier's calls of up to kStripRows rows
  // and the amx tier's of up to kAmxNibbleRows read them so, as code = nibble + nibble_base);
  // else one a byte.
  bool nibbles = false;
  int8_t nibble_base = 0;
};

// code_offset x s_g of row r's group g, modulo 2^32 as the accumulators add.
inline uint32_t affine_shift(const StripCall& x, int r, int64_t g) {
  return static_cast<uint32_t>(x.code_offset) * static_cast<uint32_t>(x.gsum[r * x.groups + g]);
}

void strip_portable(const StripCall& x);
// The sum of n int8 codes (exact in int32 for n < 2^24), on SSE2 lanes (x86-64's baseline).
int32_t code_sum_sse2(const int8_t* p, int64_t n);
void strip_avx2(const StripCall& x);
void strip_vnni(const StripCall& x);
void unpack_nibbles_avx512(const uint8_t* src, int64_t bytes, int8_t base, uint8_t* dst);
// amx (group_kernel_amx.cpp): A's rows `a_stride` bytes apart, at least amx_chunks(width) x 64
// bytes past the last group's start (or the group rounded to 4 bytes, under 64) and 16 rows
// readable; B readable kAmxBSlack bytes past the strips. Between amx_group_begin (the
// tile shapes for the width) and amx_group_end on the calling thread.
inline int64_t amx_chunks(int64_t width) { return (width + ref::detail::kAmxTileBytes - 1) / ref::detail::kAmxTileBytes; }
inline constexpr int64_t kAmxBSlack = 32 * 128;  // a group of 128's 32 K quads of 128 bytes
// Up to this many rows the amx tier reads nibbles, widening each chunk into L1 before its
// tiles load it; past it the call widens a grab of strips once into a kept buffer, which
// the row blocks then share (docs/cpu-reference.md "int4 weights two codes a byte").
inline constexpr int64_t kAmxNibbleRows = 32;
void amx_group_begin(int64_t width);
void amx_group_end();
void strip_amx(const StripCall& x);

}  // namespace ork::quant::detail
