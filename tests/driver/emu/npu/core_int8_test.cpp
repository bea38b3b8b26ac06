// int8 matmuls on the emulated core (driver/emu/npu/core.cpp, through whole tasks) against a
// plain loop: whole matrices, M-tiles and N-ranges addressed through FEATURE_DATA_ADDR /
// DCOMP_ADDR0 / DST_BASE_ADDR and strides.
#include "tests/driver/emu/npu/npu_fixture.h"

namespace ork::emu::testing {
namespace {

struct Case { size_t M, K, N, mc, nt; };

class Int8Matmul : public ::testing::TestWithParam<Case> {};

// Runs the whole product as tiles of mc rows x nt columns (one task each), as a planner
// would, and compares every cell.
TEST_P(Int8Matmul, TilesMatchAPlainLoop) {
  const Case p = GetParam();
  const auto a = random_i8(p.M * p.K, 1 + p.M);
  const auto b = random_i8(p.K * p.N, 2 + p.N);
  Device dev;
  auto [A, B, C] = alloc_int8(dev, a, b, p.M, p.K, p.N, 0xa5);
  for (size_t m0 = 0; m0 < p.M; m0 += p.mc) {
    for (size_t n0 = 0; n0 < p.N; n0 += p.nt) {
      TaskSpec t;
      t.mc = static_cast<uint32_t>(std::min(p.mc, p.M - m0));
      t.kt = static_cast<uint32_t>(p.K);
      t.nt = static_cast<uint32_t>(std::min(p.nt, p.N - n0));
      t.a = A.iova + m0 * 16;                    // element (m0, 0): (0)*M*16 + m0*16
      t.b = B.iova + n0 * p.K;                   // columns n0.. start at (n0/32)*32*K
      t.c = C.iova + (n0 / 4) * p.M * 16 + m0 * 16;
      t.a_surf = t.c_surf = static_cast<uint32_t>(p.M);
      k_reduction_banks(t);
      const ChainResult r = run_one(dev, one_task(t));
      ASSERT_EQ(r.status, CoreStatus::ok) << r.message;
      EXPECT_EQ(r.tasks_done, 1u);
      ASSERT_EQ(r.demands.size(), 1u);  // the timing model saw the task (tests/driver/emu/npu/task_demand_test.cpp)
      EXPECT_DOUBLE_EQ(r.modelled_ns, timing::task_alone_ns(r.demands[0]));
    }
  }
  const auto want = ref_matmul_i32(a, b, p.M, p.K, p.N);
  for (size_t m = 0; m < p.M; ++m)
    for (size_t n = 0; n < p.N; ++n)
      ASSERT_EQ(c_at<int32_t>(C.bytes, p.M, m, n), want[m * p.N + n]) << "first bad cell m=" << m << " n=" << n;
}

INSTANTIATE_TEST_SUITE_P(Shapes, Int8Matmul, ::testing::Values(
    Case{1, 32, 32, 1, 32},         // smallest
    Case{4, 64, 64, 4, 64},
    Case{37, 96, 160, 37, 160},     // odd rows, several K-surfaces and weight atoms
    Case{100, 128, 96, 40, 32},     // 3 M-tiles x 3 N-ranges, last M-tile short
    Case{130, 256, 128, 64, 64},    // 64-row groups
    Case{16, 4096, 64, 16, 64},     // the largest full K
    Case{704, 512, 64, 704, 64}));  // mg_max*64 at K = 512: exactly the data banks

TEST(Int8MatmulExtremes, SaturatedInputsAccumulateExactly) {
  // -128 * -128 * 4096 = 2^26: no int32 overflow, exact.
  const size_t M = 8, K = 4096, N = 32;
  std::vector<int8_t> a(M * K, -128), b(K * N, -128);
  Device dev;
  auto [A, B, C] = alloc_int8(dev, a, b, M, K, N);
  TaskSpec t{.mc = 8, .kt = 4096, .nt = 32, .a = A.iova, .b = B.iova, .c = C.iova, .a_surf = 8, .c_surf = 8};
  k_reduction_banks(t);
  ASSERT_EQ(run_one(dev, one_task(t)).status, CoreStatus::ok);
  for (size_t m = 0; m < M; ++m)
    for (size_t n = 0; n < N; ++n) ASSERT_EQ(c_at<int32_t>(C.bytes, M, m, n), 1 << 26);
}

}  // namespace
}  // namespace ork::emu::testing
