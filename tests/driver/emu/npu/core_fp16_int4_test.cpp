// fp16 (fp32 and fp16 output) on the emulated core (driver/emu/npu/core.cpp) against the
// defined accumulation order, the fp16 M-scheduler rule, int4 with int16 saturation (the half
// conversions: tests/driver/common/fp16_test.cpp).
#pragma GCC optimize("fp-contract=off")  // the reference below must not fuse either

#include <bit>
#include <cmath>

#include "driver/common/fp16.h"
#include "tests/driver/emu/npu/npu_fixture.h"

namespace ork::emu::testing {
namespace {

std::vector<uint16_t> random_halves(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-2.0f, 2.0f);
  std::vector<uint16_t> v(n);
  for (auto& h : v) h = float_to_half(d(rng));
  return v;
}

// The defined order: acc = 0; for k ascending: acc = acc + a*b (fp32, no FMA).
std::vector<float> ref_f16(const std::vector<uint16_t>& a, const std::vector<uint16_t>& b, size_t M, size_t K, size_t N) {
  std::vector<float> c(M * N);
  for (size_t m = 0; m < M; ++m)
    for (size_t n = 0; n < N; ++n) {
      float acc = 0.0f;
      for (size_t k = 0; k < K; ++k) acc = acc + half_to_float(a[m * K + k]) * half_to_float(b[k * N + n]);
      c[m * N + n] = acc;
    }
  return c;
}

struct F16Run {
  Device dev;
  Bo *A, *B, *C;
  size_t M, K, N;
  F16Run(const std::vector<uint16_t>& a, const std::vector<uint16_t>& b, size_t m, size_t k, size_t n) : M(m), K(k), N(n) {
    A = &dev.alloc(M * K * 2);
    B = &dev.alloc(K * N * 2);
    C = &dev.alloc(M * N * 4, 0x5a);
    std::memcpy(A->bytes.data(), pack_a_f16(a, M, K).data(), A->bytes.size());
    std::memcpy(B->bytes.data(), pack_b_f16(b, K, N).data(), B->bytes.size());
  }
  TaskSpec task(bool fp16_out) const {
    TaskSpec t{.type = Type::fp16, .mc = uint32_t(M), .kt = uint32_t(K), .nt = uint32_t(N), .a = A->iova, .b = B->iova,
               .c = C->iova, .a_surf = uint32_t(M), .c_surf = uint32_t(M), .fp16_out = fp16_out};
    return t;
  }
};

TEST(Fp16, Fp32OutputIsBitExactToTheDefinedOrder) {
  const size_t M = 8, K = 1024, N = 48;
  const auto a = random_halves(M * K, 1), b = random_halves(K * N, 2);
  F16Run r(a, b, M, K, N);
  TaskSpec t = r.task(false);
  k_reduction_banks(t);
  ASSERT_EQ(run_one(r.dev, one_task(t)).status, CoreStatus::ok);
  const auto want = ref_f16(a, b, M, K, N);
  for (size_t m = 0; m < M; ++m)
    for (size_t n = 0; n < N; ++n)
      ASSERT_EQ(std::bit_cast<uint32_t>(c_at<float>(r.C->bytes, M, m, n)), std::bit_cast<uint32_t>(want[m * N + n]))
          << m << "," << n;
}

// MTX's own tests (mtx512/rk3588-npu meson.build): fp16 1 x 4096 x 4096 with data banks =
// ceil(M*K*2 / 32 KiB) = 1, and fp16 -> fp16 1 x 8192 x 8192 in one task (K past 4096 with
// mc = 1 < R = 8). N is cut to 32 here: the bank rule and the wedge rule do not depend on N.
TEST(Fp16, MtxShapesRunWithTheirBankSplit) {
  for (const size_t K : {size_t{4096}, size_t{8192}}) {
    const size_t M = 1, N = 32;
    const auto a = random_halves(M * K, 5), b = random_halves(K * N, 6);
    F16Run r(a, b, M, K, N);
    TaskSpec t = r.task(K == 8192);
    t.data_banks = 1;  // MTX gen_matmul_fp16: fd_banks = ceil(fd_bytes / 32 KiB)
    t.weight_banks = 11;
    const ChainResult res = run_one(r.dev, one_task(t));
    ASSERT_EQ(res.status, CoreStatus::ok) << "K " << K << ": " << res.message;
    const auto want = ref_f16(a, b, M, K, N);
    for (size_t n = 0; n < N; ++n) {
      if (K == 8192)
        ASSERT_EQ(c_at<uint16_t>(r.C->bytes, M, 0, n), float_to_half(want[n])) << n;
      else
        ASSERT_EQ(std::bit_cast<uint32_t>(c_at<float>(r.C->bytes, M, 0, n)), std::bit_cast<uint32_t>(want[n])) << n;
    }
  }
}

TEST(Fp16, OrderMattersAndIsAscendingK) {
  // 4096 * 4096 = 2^24 first, then 31 products of 1: each 2^24 + 1 rounds back to 2^24
  // (ties to even). Any other order (pairwise, reversed) would give 2^24 + 31 or so.
  const size_t M = 1, K = 32, N = 16;
  std::vector<uint16_t> a(K, float_to_half(1.0f)), b(K * N, float_to_half(1.0f));
  a[0] = float_to_half(4096.0f);
  for (size_t n = 0; n < N; ++n) b[n] = float_to_half(4096.0f);
  F16Run r(a, b, M, K, N);
  ASSERT_EQ(run_one(r.dev, one_task(r.task(false))).status, CoreStatus::ok);
  for (size_t n = 0; n < N; ++n) EXPECT_EQ(c_at<float>(r.C->bytes, M, 0, n), 16777216.0f);
}

TEST(Fp16, Fp16OutputRoundsTheAccumulatorToNearestEven) {
  const size_t M = 4, K = 256, N = 32;
  const auto a = random_halves(M * K, 3), b = random_halves(K * N, 4);
  F16Run r(a, b, M, K, N);
  ASSERT_EQ(run_one(r.dev, one_task(r.task(true))).status, CoreStatus::ok);
  const auto want = ref_f16(a, b, M, K, N);
  for (size_t m = 0; m < M; ++m)
    for (size_t n = 0; n < N; ++n) ASSERT_EQ(c_at<uint16_t>(r.C->bytes, M, m, n), float_to_half(want[m * N + n]));
}

TEST(Fp16, KReductionScheduleIsWrongFromRow9AtK2048) {
  const size_t K = 2048, N = 16;
  for (size_t M : {8, 9, 12}) {
    const auto a = random_halves(M * K, 5), b = random_halves(K * N, 6);
    F16Run r(a, b, M, K, N);
    TaskSpec t = r.task(false);
    k_reduction_banks(t);
    ASSERT_EQ(run_one(r.dev, one_task(t)).status, CoreStatus::ok);
    const auto want = ref_f16(a, b, M, K, N);
    for (size_t m = 0; m < M; ++m) {
      // Model: rows >= 8 compute with the feature of row m % 8.
      const size_t src = m < 8 ? m : m % 8;
      for (size_t n = 0; n < N; ++n) ASSERT_EQ(c_at<float>(r.C->bytes, M, m, n), want[src * N + n]) << M << " " << m;
    }
    if (M > 8) {
      EXPECT_NE(c_at<float>(r.C->bytes, M, M - 1, 0), want[(M - 1) * N]) << M;  // really wrong
    }
  }
}

TEST(Fp16, BelowK2048AndOnResidentRowsNineRowsAreExact) {
  for (auto [K, k_red] : {std::pair{size_t{1024}, true}, std::pair{size_t{2048}, false}}) {
    const size_t M = 16, N = 16;
    const auto a = random_halves(M * K, 7), b = random_halves(K * N, 8);
    F16Run r(a, b, M, K, N);
    TaskSpec t = r.task(false);
    if (k_red) k_reduction_banks(t);
    ASSERT_EQ(run_one(r.dev, one_task(t)).status, CoreStatus::ok);
    const auto want = ref_f16(a, b, M, K, N);
    for (size_t m = 0; m < M; ++m)
      for (size_t n = 0; n < N; ++n) ASSERT_EQ(c_at<float>(r.C->bytes, M, m, n), want[m * N + n]);
  }
}

TEST(Int4, MatchesAPlainLoopAndSaturatesToInt16) {
  const size_t M = 6, K = 1024, N = 128;
  auto a = random_i8(M * K, 9, -8, 7), b = random_i8(K * N, 10, -8, 7);
  for (size_t k = 0; k < K; ++k) {  // row 4: +64 per k -> 65536 -> 32767; row 5: -> -32768
    a[4 * K + k] = -8;
    a[5 * K + k] = 7;
    b[k * N + 0] = -8;
  }
  Device dev;
  Bo& A = dev.alloc(M * K / 2);
  Bo& B = dev.alloc(K * N / 2);
  Bo& C = dev.alloc(M * N * 2, 0x5a);
  std::memcpy(A.bytes.data(), pack_a_i4(a, M, K).data(), A.bytes.size());
  std::memcpy(B.bytes.data(), pack_b_i4(b, K, N).data(), B.bytes.size());
  TaskSpec t{.type = Type::int4, .mc = M, .kt = K, .nt = N, .a = A.iova, .b = B.iova, .c = C.iova, .a_surf = M, .c_surf = M};
  k_reduction_banks(t);
  const ChainResult r = run_one(dev, one_task(t));
  ASSERT_EQ(r.status, CoreStatus::ok) << r.message;
  const auto want = ref_matmul_i32(a, b, M, K, N);
  for (size_t m = 0; m < M; ++m)
    for (size_t n = 0; n < N; ++n)
      ASSERT_EQ(c_at<int16_t>(C.bytes, M, m, n), std::clamp(want[m * N + n], -32768, 32767)) << m << "," << n;
  EXPECT_EQ(c_at<int16_t>(C.bytes, M, 4, 0), 32767);
  EXPECT_EQ(c_at<int16_t>(C.bytes, M, 5, 0), -32768);
}

}  // namespace
}  // namespace ork::emu::testing
