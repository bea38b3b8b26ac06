// The per-call layout loops of every dtype (lib/matmul/layout_host.h) against the index
// functions of layout.h, element by element: A packed (K tails, odd K int4 rows that start on
// a high nibble, the two-thread split at a row that is not a multiple of 8) and a slice
// group's outputs added in one pass exactly as slice-by-slice unpacking adds them (int32
// modulo 2^32, fp32 in slice order), copied or added to C.
#include <gtest/gtest.h>

#include <bit>
#include <cstring>
#include <random>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "driver/common/cpu_features.h"
#include "driver/common/fp16.h"
#include "driver/common/int4.h"
#include "lib/matmul/layout.h"
#include "lib/matmul/layout_host.h"
#include "lib/matmul/layout_host_sum.h"

namespace ork::matmul {
namespace {

Plan layout_host_plan_of(Shape s, DType dt, bool fp16_out = false) {
  auto p = make_plan(s, {.dtype = dt, .cores = 3, .mc_cap = 0, .fp16_out = fp16_out});
  EXPECT_TRUE(p.ok()) << p.error().message;
  return *p;
}

std::vector<uint8_t> random_bytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> v(n);
  for (auto& b : v) b = static_cast<uint8_t>(rng() | 0x11);  // no zero nibble: padding shows
  return v;
}

// Native A byte by byte from the index functions (the specification).
std::vector<uint8_t> spec_a(const Plan& p, const std::vector<uint8_t>& a) {
  std::vector<uint8_t> out(static_cast<size_t>(p.a_bytes()), 0);
  const int64_t m_rows = p.shape.m, k_len = p.shape.k;
  for (int64_t m = 0; m < m_rows; ++m)
    for (int64_t k = 0; k < k_len; ++k) {
      const int64_t at = feature_index(p.dtype, m, k, p.mp), i = m * k_len + k;
      if (p.dtype == DType::int8) out[at] = a[i];
      if (p.dtype == DType::fp16) std::memcpy(&out[2 * at], &a[2 * i], 2);
      if (p.dtype == DType::int4) int4::put(out.data(), at, int4::value_at(a.data(), i));
    }
  return out;
}

size_t a_input_bytes(const Plan& p) {
  const int64_t e = p.shape.m * p.shape.k;
  return static_cast<size_t>(p.dtype == DType::fp16 ? 2 * e : p.dtype == DType::int4 ? (e + 1) / 2 : e);
}

void expect_pack(Shape s, DType dt) {
  const Plan p = layout_host_plan_of(s, dt);
  const auto a = random_bytes(a_input_bytes(p), static_cast<uint32_t>(s.m * 7 + s.k));
  std::vector<uint8_t> out(static_cast<size_t>(p.a_bytes()), 0xee);  // stale bytes must all go
  ASSERT_TRUE(pack_a_native(p, a.data(), out).ok());
  const auto want = spec_a(p, a);
  for (size_t i = 0; i < want.size(); ++i)
    ASSERT_EQ(out[i], want[i]) << dtype_name(dt) << " " << s.m << "x" << s.k << " byte " << i;
}

TEST(LayoutHost, PackAFollowsTheIndexFunctionsForEveryDtype) {
  for (DType dt : {DType::int8, DType::fp16, DType::int4})
    for (Shape s : {Shape{1, 1, 8}, Shape{3, 17, 8}, Shape{9, 100, 8}, Shape{5, 4100, 8}}) expect_pack(s, dt);
  expect_pack({7, 999, 8}, DType::int4);  // odd K: rows 1, 3, 5 start on a high nibble
  expect_pack({2, 1, 8}, DType::int4);    // one element a row
}

// A stacked plan's A' (plan.h): row s*mp + m holds A[m, s*slice_k ..], zero past K, packed as
// a slice_k-deep feature of a_rows() rows; byte by byte from the index function. K = 999 at
// width 512: rows start on odd elements (odd m), the last slice is 487 wide (odd); at 480 the
// last is 39 wide, its atoms from the third on wholly past K (zeros); K = 2048 at 1024: whole
// bytes everywhere.
void expect_stacked_pack(Shape s, int64_t width) {
  auto p = make_plan(s, {.dtype = DType::int4, .cores = 1, .slice_k = width, .stack = true});
  ASSERT_TRUE(p.ok()) << p.error().message;
  ASSERT_TRUE(p->stacked);
  const auto a = random_bytes(a_input_bytes(*p), static_cast<uint32_t>(s.m * 5 + s.k));
  std::vector<uint8_t> want(static_cast<size_t>(p->a_bytes()), 0);
  for (int64_t sl = 0; sl < p->slices; ++sl)
    for (int64_t m = 0; m < s.m; ++m)
      for (int64_t j = 0; j < p->slice_k && sl * p->slice_k + j < s.k; ++j)
        int4::put(want.data(), feature_index(DType::int4, sl * p->mp + m, j, p->a_rows()),
                  int4::value_at(a.data(), m * s.k + sl * p->slice_k + j));
  std::vector<uint8_t> out(want.size(), 0xee);  // stale bytes must all go
  ASSERT_TRUE(pack_a_native(*p, a.data(), out).ok());
  for (size_t i = 0; i < want.size(); ++i) ASSERT_EQ(out[i], want[i]) << s.m << "x" << s.k << " byte " << i;
}

TEST(LayoutHost, PackAStackedFollowsTheIndexFunction) {
  for (int64_t m : {1, 2, 3, 16}) {
    expect_stacked_pack({m, 999, 64}, 512);
    expect_stacked_pack({m, 999, 64}, 480);
    expect_stacked_pack({m, 2048, 64}, 1024);
  }
}

TEST(LayoutHost, PackASplitsBigMatricesOverTwoThreadsExactly) {
  expect_pack({67, 131073, 8}, DType::int4);  // >= 8 MiB moved, odd K and M: the threaded split
  expect_pack({37, 60000, 8}, DType::fp16);
  expect_pack({45, 100000, 8}, DType::int8);
}

// At the two-thread threshold's edges (layout_host.cpp: A's bytes read and written, 8 MiB),
// one row under it, at it and one over (odd M: the second half starts on a whole 8-row
// block, not at M/2), for each dtype; the claiming hand-off gives a half to whichever thread
// comes first, so the bytes must not depend on who packed them.
TEST(LayoutHost, PackAAtTheTwoThreadThresholdsEdgesIsExact) {
  for (auto [dt, k] : {std::pair{DType::int8, int64_t{32768}}, {DType::fp16, int64_t{16384}}, {DType::int4, int64_t{65536}}})
    for (int64_t m : {127, 128, 129}) expect_pack({m, k, 8}, dt);  // m * k * bits / 4 = 8 MiB at m = 128
}

// Every row count of a block, 1..8 (layout_host.cpp: the whole atoms of a block copied with
// its row count a constant), alone (M = R) and after a whole block (M = 8 + R), K with whole
// atoms only and with a tail atom, every dtype. A copy that dropped or repeated a row, or
// wrote a short block's atoms at another row's place, fails here.
TEST(LayoutHost, PackABlocksOfEveryRowCountAreExact) {
  for (DType dt : {DType::int8, DType::fp16, DType::int4})
    for (int64_t r = 1; r <= kHostRowBlock; ++r)
      for (int64_t m : {r, kHostRowBlock + r})
        for (int64_t k : {256, 300}) {
          SCOPED_TRACE(testing::Message() << dtype_name(dt) << " " << m << " x " << k);
          expect_pack({m, k, 8}, dt);
        }
}

// The group's slices summed element by element through output_index, slice by slice.
template <class Native, class Out>
std::vector<Out> spec_unpack(const Plan& p, const std::vector<std::vector<Native>>& s, std::vector<Out> c, bool first) {
  for (int64_t m = 0; m < p.shape.m; ++m)
    for (int64_t n = 0; n < p.shape.n; ++n) {
      Out& d = c[static_cast<size_t>(m * p.shape.n + n)];
      for (size_t j = 0; j < s.size(); ++j) {
        const auto v = static_cast<Out>(s[j][static_cast<size_t>(output_index(p.out_atom(), m, n, p.mp))]);
        if constexpr (std::is_same_v<Out, float>) d = (first && j == 0) ? v : d + v;
        else d = (first && j == 0) ? v : static_cast<Out>(static_cast<uint32_t>(d) + static_cast<uint32_t>(v));
      }
    }
  return c;
}

template <class Native, class Out>
void expect_group(Shape shape, DType dt, int64_t first_slice, int64_t count, bool fp16_out = false) {
  const Plan p = layout_host_plan_of(shape, dt, fp16_out);
  ASSERT_LE(first_slice + count, p.slices);
  std::mt19937 rng(static_cast<uint32_t>(shape.m + shape.n + count));
  std::vector<std::vector<Native>> s(static_cast<size_t>(count), std::vector<Native>(static_cast<size_t>(c_elements_per_slice(p))));
  for (auto& v : s)
    for (auto& x : v) {
      if constexpr (std::is_same_v<Native, float>) x = std::bit_cast<float>(static_cast<uint32_t>(rng() & 0xbfffffffu));
      else x = static_cast<Native>(rng());
    }
  std::vector<Out> c(static_cast<size_t>(shape.m * shape.n));
  for (auto& x : c) x = static_cast<Out>(rng() % 1000);
  const auto want = spec_unpack(p, s, c, first_slice == 0);
  std::vector<const uint8_t*> ptrs;
  for (auto& v : s) ptrs.push_back(reinterpret_cast<const uint8_t*>(v.data()));
  std::vector<float> acc;
  Out* target = c.data();
  if (fp16_out && !p.npu_fp16_out()) {
    acc.assign(c.begin(), c.end());
    target = reinterpret_cast<Out*>(acc.data());
  }
  ASSERT_TRUE(unpack_c_group(p, ptrs, first_slice, c.data(), acc).ok());
  for (size_t i = 0; i < want.size(); ++i) {
    if constexpr (std::is_same_v<Out, float>) ASSERT_EQ(std::bit_cast<uint32_t>(target[i]), std::bit_cast<uint32_t>(want[i])) << i;
    else ASSERT_EQ(target[i], want[i]) << i;
  }
}

// Every slice-sum path this CPU runs (layout_host_sum.h), each forced in turn: the portable
// loop always, AVX2 and AVX-512 where the CPU has them.
std::vector<SumIsa> isas_here() {
  std::vector<SumIsa> out;
  for (SumIsa isa : {SumIsa::portable, SumIsa::avx2, SumIsa::avx512})
    if (sum_isa_supported(isa)) out.push_back(isa);
  return out;
}

struct ForcedIsa {
  explicit ForcedIsa(SumIsa isa) { EXPECT_TRUE(force_sum_isa(isa).ok()) << sum_isa_name(isa); }
  ~ForcedIsa() { unforce_sum_isa(); }
};

TEST(LayoutHost, Int4SlicesAddInOnePassOnEveryIsa) {
  ASSERT_EQ(isas_here().front(), SumIsa::portable);
  for (SumIsa isa : isas_here()) {
    SCOPED_TRACE(sum_isa_name(isa));
    ForcedIsa forced(isa);
    EXPECT_EQ(sum_isa(), isa);
    // N = 40: five surfaces (two pairs and one alone on AVX-512); M = 21: two 8-row blocks
    // and five rows one by one; N = 35: a tail of 3 columns.
    expect_group<int16_t, int32_t>({21, 1500, 40}, DType::int4, 0, 4);
    expect_group<int16_t, int32_t>({21, 1500, 40}, DType::int4, 1, 3);
    expect_group<int16_t, int32_t>({16, 1499, 35}, DType::int4, 0, 4);
    expect_group<int16_t, int32_t>({16, 1499, 35}, DType::int4, 2, 2);
    expect_group<int16_t, int32_t>({1, 2048, 2048}, DType::int4, 0, 5);   // decode
    // Bands of 64 surfaces (layout_host_sum.cpp; AVX-512 only where C's rows are a multiple
    // of 4 KiB apart, N = 3072 here, else surface pairs): N = 1045 is two whole bands, one of
    // two surfaces and a tail of 5 columns; N = 1035 ends in a band of one surface; M = 13 and
    // 21 end in a part block.
    expect_group<int16_t, int32_t>({21, 1500, 1045}, DType::int4, 0, 4);
    expect_group<int16_t, int32_t>({13, 1500, 1035}, DType::int4, 1, 3);
    expect_group<int16_t, int32_t>({13, 1500, 3072}, DType::int4, 1, 3);
    expect_group<int16_t, int32_t>({40, 4800, 9000}, DType::int4, 0, 10);  // two threads
    expect_group<float, float>({11, 4100, 13}, DType::fp16, 0, 3);
    expect_group<int32_t, int32_t>({9, 8960, 13}, DType::int8, 1, 2);  // 3008 + 3008 + 2944
  }
}

// The rows-outer loops (C's rows not a multiple of 4 KiB apart), AVX-512's across surface
// pairs and AVX2's one surface at a time (layout_host_i16.cpp): every slice count 1..5
// (K = 480 a slice), a group from slice 0 (copied) and a later one (added to C), M with and
// without a part block (1, 7, 9, 23), N from one surface (8) through an odd last surface (24,
// 200) and column tails (13, 333) to more surfaces than either prefetch distance (200, 333:
// 25 and 41 surfaces, against 16); the portable path runs the same cases.
TEST(LayoutHost, Int4RowsAcrossSurfacePairsAreExactForEverySliceCount) {
  for (SumIsa isa : isas_here()) {
    SCOPED_TRACE(sum_isa_name(isa));
    ForcedIsa forced(isa);
    for (int64_t slices = 1; slices <= 5; ++slices)
      for (int64_t m : {1, 7, 9, 23})
        for (int64_t n : {8, 13, 24, 200, 333}) {
          SCOPED_TRACE(testing::Message() << m << " x " << n << ", " << slices << " slices");
          expect_group<int16_t, int32_t>({m, 480 * slices, n}, DType::int4, 0, slices);
          if (slices > 1) expect_group<int16_t, int32_t>({m, 480 * slices, n}, DType::int4, 1, slices - 1);
        }
    expect_group<int16_t, int32_t>({45, 4800, 9000}, DType::int4, 0, 10);  // two threads, a part block
  }
}

// Blocks of fewer than 8 rows, every count 1..7 (`short_rows_i16_avx2` on AVX2 and AVX-512,
// one kernel per row count, each slice's atoms of P surfaces read at once: P = 8 at one row,
// 4 at two, else 2): M = R alone (surfaces of R x 16 bytes, a stream) and after a whole block
// (M = 8 + R: surfaces over 128 bytes apart, as a stacked plan's diagonal blocks at M < 8
// are), over 2 surfaces (one pair), 3 (a pair and one alone), 11 (groups of P, then a pair
// and one alone at every R) and 41 with a column tail, copied and added to C. A kernel that
// dropped a row, a surface of a group, a pair's second surface or the last surface alone
// fails here.
TEST(LayoutHost, Int4PartBlocksOfEveryRowCountAreExact) {
  for (SumIsa isa : isas_here()) {
    SCOPED_TRACE(sum_isa_name(isa));
    ForcedIsa forced(isa);
    for (int64_t r = 1; r < kHostRowBlock; ++r)
      for (int64_t m : {r, kHostRowBlock + r})
        for (int64_t n : {16, 24, 88, 333}) {
          SCOPED_TRACE(testing::Message() << m << " x " << n);
          expect_group<int16_t, int32_t>({m, 480 * 3, n}, DType::int4, 0, 3);
          expect_group<int16_t, int32_t>({m, 480 * 3, n}, DType::int4, 1, 2);
        }
  }
}

// int32 and fp32 outputs (int8, fp16) in blocks of fewer than 8 rows, every count 1..7
// (layout_host_sum.cpp, short_rows32: P surfaces at a time, P = 8 at one row down to 1 at
// five to seven, then the last surfaces alone), on every ISA: M = R alone and after a whole
// block (M = 8 + R), N of 4 surfaces, 9 (a remainder after whole groups of P at every R) and
// 83 with a column tail; three slices copied, two added to C. A kernel that dropped a row,
// a surface of a group or a remainder surface, or added out of slice order, fails here.
TEST(LayoutHost, Int32AndFp32PartBlocksOfEveryRowCountAreExact) {
  for (SumIsa isa : isas_here()) {
    SCOPED_TRACE(sum_isa_name(isa));
    ForcedIsa forced(isa);
    for (int64_t r = 1; r < kHostRowBlock; ++r)
      for (int64_t m : {r, kHostRowBlock + r})
        for (int64_t n : {16, 36, 333}) {
          SCOPED_TRACE(testing::Message() << m << " x " << n);
          expect_group<int32_t, int32_t>({m, 8960, n}, DType::int8, 0, 3);  // 3008 + 3008 + 2944
          expect_group<int32_t, int32_t>({m, 8960, n}, DType::int8, 1, 2);
          expect_group<float, float>({m, 4100, n}, DType::fp16, 0, 3);  // 2048 + 2048 + 4
          expect_group<float, float>({m, 4100, n}, DType::fp16, 1, 2);
        }
  }
}

// From M = 256 a surface is 4 KiB or more and both loops take 32 rows a visit of a surface
// (layout_host_i16.cpp, visit_rows): M = 256 is eight whole visits; 300 ends in a visit of
// 12 rows (a block and a part block of 4); 263 in a part block of 7 alone; two threads
// (N = 9000 moves past the 8 MiB threshold) split the rows mid-visit.
TEST(LayoutHost, Int4RowsInVisitsOfAPageAreExact) {
  for (SumIsa isa : isas_here()) {
    SCOPED_TRACE(sum_isa_name(isa));
    ForcedIsa forced(isa);
    for (int64_t m : {256, 263, 300})
      for (int64_t n : {24, 48, 333}) {  // 3, 6 and 41 surfaces: AVX2's visit takes them in pairs
        SCOPED_TRACE(testing::Message() << m << " x " << n);
        expect_group<int16_t, int32_t>({m, 480 * 3, n}, DType::int4, 0, 3);
        expect_group<int16_t, int32_t>({m, 480 * 3, n}, DType::int4, 1, 2);
      }
    expect_group<int16_t, int32_t>({300, 1440, 9000}, DType::int4, 0, 3);
  }
}

// The same loops without PREFETCHW (a CPU that lacks it: C's lines are then not prefetched),
// the best this CPU has and AVX2's (AVX-512 hidden too).
TEST(LayoutHost, Int4RowsAcrossSurfacePairsAreExactWithoutPrefetchw) {
  for (uint32_t above : {0u, uint32_t{cpu::kAvx512f | cpu::kAvx512bw | cpu::kAvx512vl}}) {
    cpu::HiddenCpuFeatures hidden(cpu::kPrefetchw | above);
    SCOPED_TRACE(sum_isa_name(sum_isa()));
    for (int64_t slices : {1, 3})
      for (int64_t n : {24, 333}) expect_group<int16_t, int32_t>({23, 480 * slices, n}, DType::int4, 0, slices);
  }
}

TEST(LayoutHost, ForcingAnIsaThisCpuLacksIsAnError) {
  for (SumIsa isa : {SumIsa::avx2, SumIsa::avx512})
    if (!sum_isa_supported(isa)) {
      auto s = force_sum_isa(isa);
      ASSERT_FALSE(s.ok());
      EXPECT_NE(s.error().message.find(sum_isa_name(isa)), std::string::npos);
    }
  EXPECT_TRUE(force_sum_isa(SumIsa::portable).ok());
  unforce_sum_isa();
}

TEST(LayoutHost, Int4SlicesAddInOnePassModulo2To32) {
  expect_group<int16_t, int32_t>({5, 1500, 9}, DType::int4, 0, 4);    // N tail, copy then adds
  expect_group<int16_t, int32_t>({5, 1500, 9}, DType::int4, 1, 3);    // a later group: added to C
  expect_group<int16_t, int32_t>({40, 4800, 9000}, DType::int4, 0, 10);  // >= 8 MiB moved: two threads
}

TEST(LayoutHost, Fp32SlicesAddInSliceOrder) {
  expect_group<float, float>({3, 4100, 13}, DType::fp16, 0, 3);
  expect_group<float, float>({3, 4100, 13}, DType::fp16, 2, 1);
  expect_group<float, float>({40, 6000, 15000}, DType::fp16, 0, 3);  // two threads
  expect_group<float, float>({3, 4100, 13}, DType::fp16, 0, 3, true);  // fp16 C: into the fp32 partials
}

TEST(LayoutHost, Int32AndFp16OutputsCopyOrAdd) {
  expect_group<int32_t, int32_t>({3, 8960, 13}, DType::int8, 0, 3);  // 3 slices
  expect_group<int32_t, int32_t>({3, 8960, 13}, DType::int8, 1, 2);
  expect_group<int32_t, int32_t>({1, 64, 2050}, DType::int8, 0, 1);  // decode
  expect_group<uint16_t, uint16_t>({3, 64, 21}, DType::fp16, 0, 1, true);  // one slice: the NPU's fp16
}

// fp32 values that probe fp16 rounding: every 4099th bit pattern of all 2^32 (every exponent,
// both signs, NaNs, infinities), and around every half: the half itself, the midpoint to the
// next (a tie: nearest even decides) and one fp32 ulp either side of both.
std::vector<float> fp16_rounding_probes() {
  std::vector<float> v;
  for (uint64_t b = 0; b < (uint64_t{1} << 32); b += 4099) v.push_back(std::bit_cast<float>(static_cast<uint32_t>(b)));
  for (uint32_t h = 0; h < 0x7c00; ++h)
    for (uint32_t sign : {0u, 0x80000000u}) {
      const uint32_t lo = std::bit_cast<uint32_t>(half_to_float(static_cast<uint16_t>(h)));
      const uint32_t hi = std::bit_cast<uint32_t>(half_to_float(static_cast<uint16_t>(h + 1)));
      const uint32_t mid = std::bit_cast<uint32_t>((std::bit_cast<float>(lo) + std::bit_cast<float>(hi)) / 2);
      for (uint32_t x : {lo, lo + 1, mid - 1, mid, mid + 1}) v.push_back(std::bit_cast<float>(x | sign));
    }
  for (int bit = 0; bit < 23; ++bit) {  // every NaN payload bit, both signs, quiet and signalling
    v.push_back(std::bit_cast<float>(0x7f800000u | (1u << bit)));
    v.push_back(std::bit_cast<float>(0xffc00000u | (1u << bit)));
  }
  return v;
}

void expect_rounding_on(SumIsa isa, const std::vector<float>& in) {
  std::vector<uint16_t> out(in.size() + 1, 0xdead);
  round_to_fp16_on(isa, in.data(), out.data(), static_cast<int64_t>(in.size()));
  for (size_t i = 0; i < in.size(); ++i)
    ASSERT_EQ(out[i], float_to_half(in[i])) << sum_isa_name(isa) << " fp32 0x" << std::hex << std::bit_cast<uint32_t>(in[i]);
  EXPECT_EQ(out[in.size()], 0xdead) << "written past the end";
  // An unaligned run whose length is no multiple of a vector: the tail takes the scalar path.
  std::vector<uint16_t> odd(38, 0xdead);
  round_to_fp16_on(isa, in.data() + 1, odd.data() + 1, 37);
  for (size_t i = 0; i < 37; ++i) ASSERT_EQ(odd[i + 1], float_to_half(in[i + 1])) << sum_isa_name(isa) << " tail " << i;
  EXPECT_EQ(odd[0], 0xdead);
}

TEST(LayoutHost, Fp16RoundingIsTheConverterOnEveryIsa) {
  const auto in = fp16_rounding_probes();
  for (SumIsa isa : isas_here()) expect_rounding_on(isa, in);
#if defined(__x86_64__)
  // A caller's MXCSR with flush-to-zero and denormals-are-zero (-ffast-math sets both) must
  // not change a bit: the vector paths round as the scalar converter still.
  const unsigned saved = _mm_getcsr();
  _mm_setcsr(saved | 0x8040u);
  for (SumIsa isa : isas_here()) expect_rounding_on(isa, in);
  _mm_setcsr(saved);
#endif
}

TEST(LayoutHost, Fp16CFromSumsIsRoundedOnceOnEveryIsa) {
  // 40 x 40000: 9.6 MB moved, two threads; 3 x 13: one.
  for (Shape s : {Shape{3, 4100, 13}, Shape{40, 4100, 40000}}) {
    const Plan p = layout_host_plan_of(s, DType::fp16, true);
    ASSERT_GT(p.slices, 1);
    std::mt19937 rng(7);
    std::vector<float> acc(static_cast<size_t>(s.m * s.n));
    for (auto& x : acc) x = std::bit_cast<float>(static_cast<uint32_t>(rng()));
    for (SumIsa isa : isas_here()) {
      ForcedIsa forced(isa);
      std::vector<uint16_t> c(acc.size(), 0xdead);
      ASSERT_TRUE(round_c_fp16(p, acc, c.data()).ok());
      for (size_t i = 0; i < acc.size(); ++i) ASSERT_EQ(c[i], float_to_half(acc[i])) << sum_isa_name(isa) << " " << i;
    }
    std::vector<uint16_t> c(acc.size());
    auto bad = round_c_fp16(p, std::span<const float>(acc).first(acc.size() - 1), c.data());
    ASSERT_FALSE(bad.ok());
    EXPECT_NE(bad.error().message.find("fp32 partial sums"), std::string::npos);
  }
}

TEST(LayoutHost, GroupOutsideThePlanIsAnError) {
  const Plan p = layout_host_plan_of({2, 1500, 9}, DType::int4);
  std::vector<int16_t> s(static_cast<size_t>(c_elements_per_slice(p)));
  std::vector<const uint8_t*> ptrs(static_cast<size_t>(p.slices + 1), reinterpret_cast<const uint8_t*>(s.data()));
  std::vector<int32_t> c(18);
  auto st = unpack_c_group(p, ptrs, 0, c.data(), {});
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.error().message.find("unpack_c_group"), std::string::npos);
  const Plan h = layout_host_plan_of({2, 4100, 9}, DType::fp16, true);  // fp16 C from 3 slices needs the partials
  std::vector<float> f(static_cast<size_t>(c_elements_per_slice(h)));
  std::vector<const uint8_t*> one{reinterpret_cast<const uint8_t*>(f.data())};
  EXPECT_FALSE(unpack_c_group(h, one, 0, c.data(), {}).ok());
}

}  // namespace
}  // namespace ork::matmul
