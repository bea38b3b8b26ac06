// The cpu device's fused quantised matmul (lib/quant/group_kernel.h), each tier forced, at
// every thread count: bit-identical to the reference (lib/quant/reference.h) for every mode,
// group width and per-channel, shapes with a short last group, N off every strip width and
// M off the kernel's row block (and a remainder of 1 or 2 rows joined to the last block);
// long K past lib/ref's K chunk; imported full-range codes with signed scales; extreme
// accumulators (every code at its limit); affine imports (ggml Q4_1); the one feature
// override lowering every family's tier; and the refusals.
#include <gtest/gtest.h>

#include <initializer_list>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "driver/common/cpu_features.h"
#include "lib/quant/act_kernels.h"
#include "lib/quant/activations.h"
#include "lib/quant/group_kernel.h"
#include "lib/quant/reference.h"
#include "lib/ref/fast.h"
#include "lib/ref/fp16_matmul.h"
#include "lib/ref/split.h"
#include "lib/ref/workers.h"
#include "tests/support/quant_test_util.h"

namespace ork::quant::detail {
namespace {

using testing::first_difference;
using testing::random_matrix;

struct KernelShape {
  int64_t m, k, n;
};
// K: a short last group for 32, 64 and 128 (200 = 3 x 64 + 8, 130, 45 = 32 + 13: odd, off the
// pair and the quad); N off 16 and 32 (33, 47, 70); M off the 4-row block (1, 3, 6, 9).
const KernelShape kKernelShapes[] = {{1, 64, 32}, {3, 200, 47}, {6, 130, 33}, {9, 45, 70}, {4, 256, 16}, {2, 7, 5}};

std::string run_packed(const GroupPacked& p, int threads, const QuantWeights& w, std::span<const float> a,
                       int64_t m, const ActScheme& as, const std::vector<float>& want) {
  auto qa = quantise_activations(a, m, w.k(), as);
  if (!qa) return qa.error().message;
  std::vector<float> c(static_cast<size_t>(m * w.n()), -1.0f);
  int used = -1;
  if (auto s = fused_qmatmul(*qa, p, c, {.threads = threads, .threads_used = &used}); !s) return s.error().message;
  if (used < 1 || (threads > 0 && used > threads)) return "threads_used = " + std::to_string(used);
  return first_difference(c, want, w.n());
}

// Packed one code a byte, and (int4 weights on the vnni and amx tiers) again two a byte, as
// the tiers keep them.
std::string run(GroupTier tier, int threads, const QuantWeights& w, std::span<const float> a, int64_t m,
                const ActScheme& as, const std::vector<float>& want) {
  for (bool two : {false, true}) {
    auto p = pack_group_weights(w, tier, {.nibbles = two});
    if (!p) return p.error().message;
    const bool nibbles = (tier == GroupTier::vnni || tier == GroupTier::amx) && w.scheme().bits == Bits::int4;
    if (two && !nibbles) continue;  // the same packing again
    if (p->nibbles != two) return "nibbles = " + std::to_string(p->nibbles);
    if (auto diff = run_packed(*p, threads, w, a, m, as, want); !diff.empty())
      return (p->nibbles ? "two codes a byte: " : "") + diff;
  }
  return "";
}

TEST(FusedQmatmul, EveryTierAndThreadCountIsTheReference) {
  uint32_t seed = 1;
  for (const KernelShape& s : kKernelShapes)
    for (int64_t group : {0, 32, 64, 128})
      for (auto [wb, ab] : {std::pair{Bits::int8, Bits::int8}, {Bits::int4, Bits::int8}, {Bits::int4, Bits::int4}}) {
        if (group != 0 && group > s.k) continue;
        const auto wf = random_matrix(s.k, s.n, ++seed);
        const auto a = random_matrix(s.m, s.k, ++seed);
        const WeightScheme ws{wb, group};
        auto w = QuantWeights::quantise(wf, s.k, s.n, ws);
        ASSERT_TRUE(w.ok()) << w.error().message;
        for (bool per_row : {false, true}) {
          const ActScheme as{ab, per_row};
          auto want = reference::qmatmul(a, wf, s.m, s.k, s.n, ws, as);
          ASSERT_TRUE(want.ok());
          for (GroupTier t : supported_group_tiers())
            for (int threads : {0, 1, 2, 3, 5})
              ASSERT_EQ(run(t, threads, *w, a, s.m, as, *want), "")
                  << group_tier_name(t) << " threads " << threads << " M x K x N = " << s.m << " x " << s.k << " x "
                  << s.n << " group " << group << " w" << static_cast<int>(wb) << "a" << static_cast<int>(ab)
                  << (per_row ? " per row" : " per tensor");
        }
      }
}

// Every shape x width (per-channel, 32, 64, 128 up to K) x mode (w4a8, w8a8, w4a4) on each of
// `tiers` at 1 and 2 threads against the reference; activation scales per row where M is odd
// (`per_row_odd`) or even.
void check_widths_and_modes(std::initializer_list<KernelShape> shapes, uint32_t seed,
                            const std::vector<GroupTier>& tiers, bool per_row_odd) {
  for (const KernelShape& s : shapes)
    for (int64_t group : {0, 32, 64, 128})
      for (auto [wb, ab] : {std::pair{Bits::int4, Bits::int8}, {Bits::int8, Bits::int8}, {Bits::int4, Bits::int4}}) {
        if (group > s.k) continue;
        const auto wf = random_matrix(s.k, s.n, ++seed);
        const auto a = random_matrix(s.m, s.k, ++seed);
        const WeightScheme ws{wb, group};
        auto w = QuantWeights::quantise(wf, s.k, s.n, ws);
        ASSERT_TRUE(w.ok()) << w.error().message;
        const ActScheme as{ab, (s.m % 2 == 1) == per_row_odd};
        auto want = reference::qmatmul(a, wf, s.m, s.k, s.n, ws, as);
        ASSERT_TRUE(want.ok());
        for (GroupTier t : tiers)
          for (int threads : {1, 2})
            ASSERT_EQ(run(t, threads, *w, a, s.m, as, *want), "")
                << group_tier_name(t) << " threads " << threads << " M x K x N = " << s.m << " x " << s.k << " x "
                << s.n << " group " << group << " w" << static_cast<int>(wb) << "a" << static_cast<int>(ab);
      }
}

// Long K and row blocks: K past 1024 (lib/ref's VNNI K chunk, 256 quads) with a short last
// group (1030: 32 groups of 32 + 6 values, 16 + 1 of 64, 8 + 1 of 128), exactly 1024, one
// group (32), per-channel over 2100 (525 quads in one group); M off every tier's row block
// (13, 9, 17: off 4, 6 and 8; 16 and 8 on them), odd N; 1 and 2 threads; every tier, against
// the reference. Kept from a trial of lib/ref's blocking in the vnni kernel (K chunks of
// whole groups, 8-row blocks: docs/cpu-reference.md), which these shapes cut at each edge.
TEST(FusedQmatmul, LongKAndRowBlocksAreTheReference) {
  check_widths_and_modes({KernelShape{13, 1030, 47}, KernelShape{9, 1024, 33}, KernelShape{17, 32, 35},
                          KernelShape{8, 2100, 31}, KernelShape{16, 1120, 65}},
                         300, supported_group_tiers(), true);
}

// The amx tier's edges: M on each side of kAmxMinRows (8 runs vnni's kernel, 9 a tile of 16
// rows with 7 of zero padding), one tile (16), a second one of 1 row (17), two full (32), and
// past them (33, 69); K whose last group is short for every width and per-channel K off
// 64 and off 4 (45: one 48-byte chunk; 2100: 33 chunks of 64, the last reading 28 bytes of
// padding), so the tiles read B past the group and A past K; N off the strip (33, 47). When
// the CPU has no AMX the tier is refused and the call rule is still checked.
TEST(FusedQmatmul, AmxTilesAreTheReference) {
  EXPECT_EQ(call_tier(GroupTier::amx, kAmxMinRows - 1), GroupTier::vnni);
  EXPECT_EQ(call_tier(GroupTier::amx, kAmxMinRows), GroupTier::amx);
  EXPECT_EQ(call_tier(GroupTier::vnni, 512), GroupTier::vnni);
  EXPECT_EQ(row_block_of(GroupTier::amx, 69, 68).start, 64);
  EXPECT_EQ(row_block_of(GroupTier::amx, 69, 68).rows, 5);
  EXPECT_EQ(row_block_of(GroupTier::amx, 69, 40).rows, 16);
  if (!group_tier_supported(GroupTier::amx)) {
    const auto wf = random_matrix(64, 33, 1);
    auto w = QuantWeights::quantise(wf, 64, 33, WeightScheme{Bits::int4, 32});
    ASSERT_TRUE(w.ok());
    EXPECT_FALSE(pack_group_weights(*w, GroupTier::amx).ok());
    GTEST_SKIP() << "no AMX on this CPU (or no tile grant): the tier's kernel is not run";
  }
  check_widths_and_modes({KernelShape{8, 130, 33}, KernelShape{9, 1030, 47}, KernelShape{16, 45, 33},
                          KernelShape{17, 2100, 35}, KernelShape{32, 200, 47}, KernelShape{33, 96, 33},
                          KernelShape{69, 300, 64}},
                         900, {GroupTier::amx}, false);
}

// On vnni a remainder of 1 or 2 rows joins the last block of 6 (row_block_of: calls of 7 and
// 8 rows, A prepared in those blocks; M = 128 and 512 leave 2); M off the rule (9 = 6 + 3,
// 10, 17) keeps its short block, and the other tiers their blocks of 4. Then every tier
// against the reference on both sides of the rule, every group width, w4a8 / w8a8 / w4a4
// (the m term and the int8 shift: affine_cases below, M = 7, 8, 14 and 127).
TEST(FusedQmatmul, RemainderRowsJoinTheLastBlock) {
  const auto block = [](GroupTier t, int64_t m, int64_t i) {
    const RowBlock b = row_block_of(t, m, i);
    return std::pair{b.start, b.rows};
  };
  EXPECT_EQ(block(GroupTier::vnni, 128, 127), (std::pair<int64_t, int>{120, 8}));
  EXPECT_EQ(block(GroupTier::vnni, 128, 120), (std::pair<int64_t, int>{120, 8}));
  EXPECT_EQ(block(GroupTier::vnni, 128, 119), (std::pair<int64_t, int>{114, 6}));
  EXPECT_EQ(block(GroupTier::vnni, 127, 126), (std::pair<int64_t, int>{120, 7}));
  EXPECT_EQ(block(GroupTier::vnni, 8, 0), (std::pair<int64_t, int>{0, 8}));
  EXPECT_EQ(block(GroupTier::vnni, 9, 8), (std::pair<int64_t, int>{6, 3}));
  EXPECT_EQ(block(GroupTier::vnni, 10, 9), (std::pair<int64_t, int>{6, 4}));
  EXPECT_EQ(block(GroupTier::vnni, 2, 1), (std::pair<int64_t, int>{0, 2}));
  EXPECT_EQ(block(GroupTier::vnni, 6, 5), (std::pair<int64_t, int>{0, 6}));
  EXPECT_EQ(block(GroupTier::avx2, 10, 9), (std::pair<int64_t, int>{8, 2}));
  EXPECT_EQ(block(GroupTier::portable, 9, 8), (std::pair<int64_t, int>{8, 1}));
  uint32_t seed = 700;
  for (int64_t m : {7, 8, 9, 14, 17, 20, 127, 128})
    for (int64_t group : {32, 64, 128})
      for (auto [wb, ab] : {std::pair{Bits::int4, Bits::int8}, {Bits::int8, Bits::int8}, {Bits::int4, Bits::int4}}) {
        const int64_t k = 200, n = 40;
        const auto wf = random_matrix(k, n, ++seed);
        const auto a = random_matrix(m, k, ++seed);
        const WeightScheme ws{wb, group};
        auto w = QuantWeights::quantise(wf, k, n, ws);
        ASSERT_TRUE(w.ok()) << w.error().message;
        const ActScheme as{ab, m % 2 == 0};
        auto want = reference::qmatmul(a, wf, m, k, n, ws, as);
        ASSERT_TRUE(want.ok());
        for (GroupTier t : supported_group_tiers())
          for (int threads : {1, 2})
            ASSERT_EQ(run(t, threads, *w, a, m, as, *want), "") << group_tier_name(t) << " threads " << threads
                                                               << " M = " << m << " group " << group << " w"
                                                               << static_cast<int>(wb) << "a" << static_cast<int>(ab);
      }
}

// ggml-style imports: codes over the whole range (-128 for int8, -8 for int4) and scales of
// either sign, against reference::qmatmul_codes.
TEST(FusedQmatmul, FullRangeImportsWithSignedScales) {
  std::mt19937 rng(9);
  for (Bits bits : {Bits::int8, Bits::int4})
    for (const KernelShape& s : {KernelShape{3, 96, 40}, KernelShape{5, 70, 33}}) {
      const WeightScheme ws{bits, 32, true, true};
      const int64_t groups = (s.k + 31) / 32;
      const int lo = bits == Bits::int8 ? -128 : -8, hi = -lo - 1;
      std::uniform_int_distribution<int> code(lo, hi);
      std::normal_distribution<float> scale(0.0f, 0.01f);
      std::vector<int32_t> q(static_cast<size_t>(s.k * s.n));
      for (int32_t& x : q) x = code(rng);
      q[0] = lo;
      std::vector<uint8_t> bytes(static_cast<size_t>(QuantWeights::code_bytes(bits, s.k, s.n)), 0);
      for (size_t i = 0; i < q.size(); ++i) {
        if (bits == Bits::int8) bytes[i] = static_cast<uint8_t>(q[i]);
        else bytes[i / 2] |= static_cast<uint8_t>((q[i] & 0xf) << (i % 2 * 4));
      }
      std::vector<float> d(static_cast<size_t>(groups * s.n));
      for (float& x : d) x = scale(rng);
      auto w = QuantWeights::import(bytes, d, s.k, s.n, ws);
      ASSERT_TRUE(w.ok()) << w.error().message;
      const auto a = random_matrix(s.m, s.k, 77);
      const ActScheme as{Bits::int8, true};
      auto want = reference::qmatmul_codes(a, s.m, q, d, {}, s.k, s.n, 32, as);
      ASSERT_TRUE(want.ok());
      for (GroupTier t : supported_group_tiers())
        for (int threads : {1, 2}) ASSERT_EQ(run(t, threads, *w, a, s.m, as, *want), "") << group_tier_name(t);
    }
}

// Affine imports (ggml Q4_1: stored code q - 8, code offset 8, an m term per group; and an
// offset without m, and m without offset) against reference::qmatmul_codes on the format's
// codes, every tier and thread count, both activation widths, M off the row block, N off
// the strips, a short last group, and per-channel (one group: the fused kernel too). int4's
// offset is folded into the packed codes; int8 weights with an offset up to 128 (stored 127
// + 128 is no int8) keep the per-row shift on vnni and portable: both paths, groups of 32
// and 128 (the row sums' 16-byte steps and their tails).
// A of 260 x 2048 (2 MiB of floats): packed and its row sums taken on 2 threads where the
// machine has 2 (group_kernel.cpp prepare_a, the activation quantiser's rule), each thread
// writing its rows into the calling thread's buffers.
constexpr KernelShape kLargeA{260, 2048, 33};

TEST(FusedQmatmul, LargeAIsPreparedOnTheKeptThreads) {
  const auto wf = random_matrix(kLargeA.k, kLargeA.n, 61);
  const auto a = random_matrix(kLargeA.m, kLargeA.k, 62);
  const WeightScheme ws{Bits::int4, 32};
  auto w = QuantWeights::quantise(wf, kLargeA.k, kLargeA.n, ws);
  ASSERT_TRUE(w.ok()) << w.error().message;
  const ActScheme as{Bits::int8, true};
  auto want = reference::qmatmul(a, wf, kLargeA.m, kLargeA.k, kLargeA.n, ws, as);
  ASSERT_TRUE(want.ok());
  for (GroupTier t : supported_group_tiers())
    for (int threads : {0, 1, 2}) ASSERT_EQ(run(t, threads, *w, a, kLargeA.m, as, *want), "") << group_tier_name(t);
}

struct AffineCase {
  KernelShape s;
  int64_t group;  // 0: one group of K
  Bits bits;
  int offset;
  bool with_mins;
};

std::vector<AffineCase> affine_cases() {
  std::vector<AffineCase> out;
  for (const KernelShape& s : {KernelShape{5, 96, 40}, KernelShape{1, 70, 33}, KernelShape{9, 32, 70}, KernelShape{4, 200, 16}})
    for (auto [offset, with_mins] : {std::pair{8, true}, {8, false}, {0, true}, {3, true}})
      out.push_back({s, s.k <= 32 ? 0 : 32, Bits::int4, offset, with_mins});
  for (auto [offset, with_mins] : {std::pair{128, true}, {128, false}, {5, true}})
    out.push_back({{7, 300, 35}, 128, Bits::int8, offset, with_mins}), out.push_back({{2, 45, 33}, 32, Bits::int8, offset, with_mins});
  out.push_back({{3, 300, 47}, 128, Bits::int4, 8, true});
  out.push_back({kLargeA, 32, Bits::int4, 8, true});
  out.push_back({{11, 1030, 33}, 32, Bits::int4, 8, true});  // K past 1024, M off 4, 6 and 8
  out.push_back({{10, 1300, 35}, 128, Bits::int8, 128, true});
  out.push_back({{127, 96, 40}, 32, Bits::int4, 8, true});  // 7 rows in the last call (row_block_of)
  out.push_back({{14, 300, 35}, 128, Bits::int8, 128, false});  // 8 rows, the int8 shift
  out.push_back({{8, 130, 33}, 32, Bits::int8, 5, true});
  return out;
}

TEST(FusedQmatmul, AffineImportsAreTheReference) {
  std::mt19937 rng(21);
  for (const AffineCase& c : affine_cases())
    for (Bits ab : {Bits::int8, Bits::int4}) {
      const KernelShape& s = c.s;
      const WeightScheme ws{c.bits, c.group, true, true};
      const int64_t width = c.group == 0 ? s.k : c.group, groups = (s.k + width - 1) / width;
      const int lo = c.bits == Bits::int8 ? -128 : -8;
      std::uniform_int_distribution<int> code(lo, -lo - 1);
      std::normal_distribution<float> scale(0.0f, 0.02f);
      std::vector<int32_t> q(static_cast<size_t>(s.k * s.n));  // the format's codes
      std::vector<uint8_t> bytes(static_cast<size_t>(QuantWeights::code_bytes(c.bits, s.k, s.n)), 0);
      for (size_t i = 0; i < q.size(); ++i) {
        const int stored = i == 0 ? -lo - 1 : i == 1 ? lo : code(rng);  // both ends of the range
        q[i] = stored + c.offset;
        if (c.bits == Bits::int8) bytes[i] = static_cast<uint8_t>(stored);
        else bytes[i / 2] |= static_cast<uint8_t>((stored & 0xf) << (i % 2 * 4));
      }
      std::vector<float> d(static_cast<size_t>(groups * s.n)), mins(c.with_mins ? d.size() : 0);
      for (float& x : d) x = scale(rng);
      for (float& x : mins) x = scale(rng);
      auto w = QuantWeights::import(bytes, d, s.k, s.n, ws, {.mins = mins, .code_offset = c.offset});
      ASSERT_TRUE(w.ok()) << w.error().message;
      const auto a = random_matrix(s.m, s.k, static_cast<uint32_t>(rng()));
      const ActScheme as{ab, s.m % 2 == 1};
      auto want = reference::qmatmul_codes(a, s.m, q, d, mins, s.k, s.n, width, as);
      ASSERT_TRUE(want.ok());
      for (GroupTier t : supported_group_tiers())
        for (int threads : {0, 1, 2, 3})
          ASSERT_EQ(run(t, threads, *w, a, s.m, as, *want), "")
              << group_tier_name(t) << " threads " << threads << " M x K x N = " << s.m << " x " << s.k << " x " << s.n
              << " group " << c.group << " w" << static_cast<int>(c.bits) << " offset " << c.offset
              << (c.with_mins ? " with m" : "") << " a" << static_cast<int>(ab);
    }
}

// The groups' order decides the bits: three groups whose terms are 2^24, 1 and -2^24 (scales
// given, one code of 1 in each group against an activation code of 1) sum to 0 in the order
// 0, 1, 2 (2^24 + 1 rounds back to 2^24) and to 1 in any other order. Every tier and thread
// count must give the reference's 0; columns past the first strip carry the same pattern.
TEST(FusedQmatmul, GroupsAreSummedInIncreasingOrder) {
  const int64_t m = 2, k = 96, n = 40;
  std::vector<uint8_t> bytes(static_cast<size_t>(k * n), 0);
  std::vector<int32_t> q(bytes.size(), 0);
  for (int64_t g = 0; g < 3; ++g)
    for (int64_t j = 0; j < n; ++j) bytes[static_cast<size_t>(g * 32 * n + j)] = 1, q[static_cast<size_t>(g * 32 * n + j)] = 1;
  std::vector<float> d(static_cast<size_t>(3 * n));
  for (int64_t j = 0; j < n; ++j) d[static_cast<size_t>(j)] = 16777216.0f, d[static_cast<size_t>(n + j)] = 1.0f,
                                  d[static_cast<size_t>(2 * n + j)] = -16777216.0f;
  auto w = QuantWeights::import(bytes, d, k, n, WeightScheme{Bits::int8, 32, true, true});
  ASSERT_TRUE(w.ok()) << w.error().message;
  std::vector<float> a(static_cast<size_t>(m * k), 1.0f);  // activation codes 1, the scale 1
  a[static_cast<size_t>(k - 1)] = a[static_cast<size_t>(2 * k - 1)] = 127.0f;  // against weight code 0
  const ActScheme as{Bits::int8, true};
  auto want = reference::qmatmul_codes(a, m, q, d, {}, k, n, 32, as);
  ASSERT_TRUE(want.ok());
  ASSERT_EQ(*want, std::vector<float>(static_cast<size_t>(m * n), 0.0f));
  for (GroupTier t : supported_group_tiers())
    for (int threads : {1, 2}) ASSERT_EQ(run(t, threads, *w, a, m, as, *want), "") << group_tier_name(t);
}

// Every code at its limit, per-channel over a long K: the int32 sums at their largest
// (-128 x 127 x K on VNNI's biased path), still exact.
TEST(FusedQmatmul, ExtremeSumsStayExact) {
  const int64_t m = 2, k = 4096 + 3, n = 35;
  std::vector<uint8_t> bytes(static_cast<size_t>(k * n), static_cast<uint8_t>(-128));
  std::vector<int32_t> q(bytes.size(), -128);
  const std::vector<float> d(static_cast<size_t>(n), 0.75f);
  auto w = QuantWeights::import(bytes, d, k, n, WeightScheme{Bits::int8, 0, true, false});
  ASSERT_TRUE(w.ok()) << w.error().message;
  std::vector<float> a(static_cast<size_t>(m * k), 1.0f);
  for (int64_t j = 0; j < k; ++j) a[static_cast<size_t>(k + j)] = -2.0f;  // row 1 at -127
  const ActScheme as{Bits::int8, false};
  auto want = reference::qmatmul_codes(a, m, q, d, {}, k, n, k, as);
  ASSERT_TRUE(want.ok());
  for (GroupTier t : supported_group_tiers()) ASSERT_EQ(run(t, 0, *w, a, m, as, *want), "") << group_tier_name(t);
}

// The one override (driver/common/cpu_features.h): hidden features lower the best tier of
// every kernel family together, and the fused kernel then runs on the lower one.
TEST(FusedQmatmul, HiddenFeaturesLowerEveryFamilysTier) {
  const auto wf = random_matrix(64, 40, 5);
  const auto a = random_matrix(3, 64, 6);
  auto w = QuantWeights::quantise(wf, 64, 40, WeightScheme{Bits::int4, 32});
  ASSERT_TRUE(w.ok());
  const ActScheme as{Bits::int8, true};
  auto want = reference::qmatmul(a, wf, 3, 64, 40, WeightScheme{Bits::int4, 32}, as);
  ASSERT_TRUE(want.ok());
  {
    cpu::HiddenCpuFeatures no_avx512(cpu::kAvx512f | cpu::kAvx512vnni | cpu::kAmxInt8);
    EXPECT_NE(best_group_tier(), GroupTier::vnni);
    EXPECT_NE(best_act_tier(), ActTier::avx512);
    EXPECT_NE(ref::best_fp16_isa(), ref::Fp16Isa::avx512);
    EXPECT_NE(ref::best_isa(), ref::Isa::avx512_vnni);
    EXPECT_NE(ref::best_isa(), ref::Isa::amx);
    EXPECT_FALSE(group_tier_supported(GroupTier::vnni));
    EXPECT_EQ(run(best_group_tier(), 2, *w, a, 3, as, *want), "") << group_tier_name(best_group_tier());
    cpu::HiddenCpuFeatures none(cpu::kAvx2 | cpu::kAvx512f | cpu::kAvx512vnni | cpu::kAmxInt8);
    EXPECT_EQ(best_group_tier(), GroupTier::portable);
    EXPECT_EQ(best_act_tier(), ActTier::portable);
    EXPECT_EQ(ref::best_fp16_isa(), ref::Fp16Isa::generic);
  }
  EXPECT_EQ(best_group_tier(), supported_group_tiers().back());
}

// The thread rule is int8's (lib/ref/split.h): short M (up to 8 rows) takes a thread per
// kMinBBytesPerThread of packed B, so a B under 1 MiB stays on one thread and a 4.5 MiB one
// takes two; past short M the multiply-adds decide.
TEST(FusedQmatmul, ShortMThreadsByBBytesAsInt8Does) {
  struct Case {
    int64_t k, n, m;
    int want;  // threads on a machine of 2 or more CPUs
  };
  for (const Case& x : {Case{256, 512, 1, 1}, Case{2048, 2048, 1, 2}, Case{2048, 2048, 8, 2}, Case{2048, 2048, 64, 2}}) {
    const auto wf = random_matrix(x.k, x.n, 41);
    auto w = QuantWeights::quantise(wf, x.k, x.n, WeightScheme{Bits::int4, 32});
    ASSERT_TRUE(w.ok());
    auto p = pack_group_weights(*w, best_group_tier());
    ASSERT_TRUE(p.ok());
    ASSERT_EQ(x.want == 1, p->bytes() < static_cast<size_t>(ref::detail::kMinBBytesPerThread)) << p->bytes();
    const auto a = random_matrix(x.m, x.k, 42);
    auto qa = quantise_activations(a, x.m, x.k, ActScheme{});
    ASSERT_TRUE(qa.ok());
    std::vector<float> c(static_cast<size_t>(x.m * x.n));
    int used = 0;
    ASSERT_TRUE(fused_qmatmul(*qa, *p, c, {.threads = 0, .threads_used = &used}).ok());
    EXPECT_EQ(used, std::min(x.want, ref::detail::online_cpus())) << x.k << " x " << x.n << ", M = " << x.m;
  }
}

TEST(FusedQmatmul, Refusals) {
  const auto wf = random_matrix(64, 16, 3);
  auto w = QuantWeights::quantise(wf, 64, 16, WeightScheme{Bits::int8, 32});
  ASSERT_TRUE(w.ok());
  auto p = pack_group_weights(*w, GroupTier::portable);
  ASSERT_TRUE(p.ok());
  const auto a = random_matrix(2, 32, 4);
  auto qa = quantise_activations(a, 2, 32, ActScheme{});
  ASSERT_TRUE(qa.ok());
  std::vector<float> c(32);
  auto s = fused_qmatmul(*qa, *p, c, {});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message, "A has K = 32, the weights K = 64");
}

}  // namespace
}  // namespace ork::quant::detail
