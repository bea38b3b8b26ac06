// The CBUF model: the bank limit mg_max*64 (exact) vs mg_max*64 + 1 (wrong rows), full-K
// past 4096 with mc >= R and resident rows past R wedging, and the 13-bit DPU channel count.
#include "driver/emu/npu/cbuf.h"
#include "tests/driver/emu/npu/npu_fixture.h"

namespace ork::emu::testing {
namespace {

struct CbufProduct {
  Device dev;
  Bo* A;
  Bo* B;
  Bo* C;
  size_t M, K, N;
  std::vector<int8_t> a, b;
  CbufProduct(size_t m, size_t k, size_t n) : M(m), K(k), N(n) {
    a = random_i8(M * K, static_cast<uint32_t>(M * 7 + K));
    b = random_i8(K * N, static_cast<uint32_t>(K * 3 + N));
    const Int8Bos bos = alloc_int8(dev, a, b, M, K, N, 0x5a);
    A = &bos.A;
    B = &bos.B;
    C = &bos.C;
  }
  TaskSpec task() const {
    return TaskSpec{.mc = static_cast<uint32_t>(M), .kt = static_cast<uint32_t>(K), .nt = static_cast<uint32_t>(N),
                    .a = A->iova, .b = B->iova, .c = C->iova,
                    .a_surf = static_cast<uint32_t>(M), .c_surf = static_cast<uint32_t>(M)};
  }
  // Rows whose every cell matches the plain loop.
  std::vector<bool> rows_right() const {
    const auto want = ref_matmul_i32(a, b, M, K, N);
    std::vector<bool> ok(M, true);
    for (size_t m = 0; m < M; ++m)
      for (size_t n = 0; n < N; ++n) ok[m] = ok[m] && c_at<int32_t>(C->bytes, M, m, n) == want[m * N + n];
    return ok;
  }
  bool untouched() const {
    for (uint8_t v : C->bytes)
      if (v != 0x5a) return false;
    return true;
  }
};

struct Limit { size_t K, rows; };  // docs/hardware.md 10.2: mg_max*64 at each K
class BankLimit : public ::testing::TestWithParam<Limit> {};

TEST_P(BankLimit, MgMaxRowsAreExact) {
  const Limit p = GetParam();
  CbufProduct pr(p.rows, p.K, 32);
  TaskSpec t = pr.task();
  k_reduction_banks(t);
  ASSERT_LE(t.data_banks, 11u);
  ASSERT_GE(t.weight_banks, 1u);
  ASSERT_EQ(run_one(pr.dev, one_task(t)).status, CoreStatus::ok);
  const auto ok = pr.rows_right();
  for (size_t m = 0; m < pr.M; ++m) ASSERT_TRUE(ok[m]) << "row " << m;
}

TEST_P(BankLimit, OneRowMoreMiscomputesDeterministically) {
  const Limit p = GetParam();
  CbufProduct pr(p.rows + 1, p.K, 32);
  TaskSpec t = pr.task();
  t.data_banks = 11;  // ORK's clamp 0x1b: the most data banks a task can have
  t.weight_banks = 1;
  const auto entries = one_task(t);
  const ChainResult r = run_one(pr.dev, entries);
  ASSERT_EQ(r.status, CoreStatus::ok) << r.message;  // silently wrong, like the silicon
  const auto ok = pr.rows_right();
  EXPECT_FALSE(ok[0]) << "row 0 is overwritten by the wrapped group";
  EXPECT_TRUE(ok[p.rows]) << "the last row reads back its own data";
  const std::vector<uint8_t> first = pr.C->bytes;
  std::fill(pr.C->bytes.begin(), pr.C->bytes.end(), 0);
  ASSERT_EQ(run_one(pr.dev, entries).status, CoreStatus::ok);
  EXPECT_EQ(pr.C->bytes, first);
}

INSTANTIATE_TEST_SUITE_P(PublishedMTileTable, BankLimit, ::testing::Values(
    Limit{512, 704}, Limit{1024, 320}, Limit{2048, 128}, Limit{3584, 64}, Limit{4096, 64}));

TEST(Cbuf, TheWrappedGroupLandsOnTheFirstRows) {
  // K = 512, 705 rows, 11 data banks = 360448 bytes = 704 rows: group 11 (row 704 and 63
  // zero pad rows) wraps onto rows 0..63. Row 0 computes with row 704's feature, rows
  // 1..63 with zeros, every other row is right.
  CbufProduct pr(705, 512, 32);
  TaskSpec t = pr.task();
  t.data_banks = 11;
  t.weight_banks = 1;
  ASSERT_EQ(run_one(pr.dev, one_task(t)).status, CoreStatus::ok);
  const auto want = ref_matmul_i32(pr.a, pr.b, pr.M, pr.K, pr.N);
  for (size_t n = 0; n < pr.N; ++n) {
    ASSERT_EQ(c_at<int32_t>(pr.C->bytes, pr.M, 0, n), want[704 * pr.N + n]);
    for (size_t m = 1; m < 64; ++m) ASSERT_EQ(c_at<int32_t>(pr.C->bytes, pr.M, m, n), 0) << m;
    for (size_t m = 64; m < 705; ++m) ASSERT_EQ(c_at<int32_t>(pr.C->bytes, pr.M, m, n), want[m * pr.N + n]) << m;
  }
}

TEST(Cbuf, FullKPast4096Wedges) {
  CbufProduct pr(16, 4128, 32);
  TaskSpec t = pr.task();
  k_reduction_banks(t);
  const ChainResult r = run_one(pr.dev, one_task(t));
  EXPECT_EQ(r.status, CoreStatus::wedged);
  EXPECT_EQ(r.tasks_done, 0u);
  EXPECT_NE(r.message.find("K = 4128"), std::string::npos) << r.message;
  EXPECT_TRUE(pr.untouched());
}

// Every wide-K full-K task ORK measured wedged (K = 6144 at mc = 16 = R and 32, K = 8192
// at mc = 8 = R, K = 18944 at mc = 64): mc >= R = pow2_floor(98304 / K) wedges past 4096.
TEST(Cbuf, WideKWedgesAtThePublishedPoints) {
  // (K = 18944 cannot be written with the checked packer: DATAIN_CHANNEL_REAL is 14 bits.)
  const std::pair<size_t, size_t> wedges[] = {{6144, 16}, {6144, 32}, {8192, 8}};
  for (auto [k, m] : wedges) {
    CbufProduct pr(m, k, 32);
    TaskSpec t = pr.task();
    k_reduction_banks(t);
    const ChainResult r = run_one(pr.dev, one_task(t));
    EXPECT_EQ(r.status, CoreStatus::wedged) << "K " << k << " mc " << m;
    EXPECT_TRUE(pr.untouched());
  }
  EXPECT_EQ(resident_rows(6144), 16u);
  EXPECT_EQ(resident_rows(8192), 8u);
  EXPECT_EQ(resident_rows(18944), 4u);
}

// Below R a wide-K task runs: MTX runs M = 1 at K = 8192 (fp16, tests/driver/emu/npu/core_fp16_int4_test.cpp);
// here int8 at K = 6144 with 8 rows < R = 16 (the model's guess between 1 and R - 1).
TEST(Cbuf, WideKBelowRRuns) {
  CbufProduct pr(8, 6144, 32);
  TaskSpec t = pr.task();
  k_reduction_banks(t);
  ASSERT_EQ(t.data_banks, 2u);  // 8 x 6 KiB = 48 KiB
  const ChainResult r = run_one(pr.dev, one_task(t));
  ASSERT_EQ(r.status, CoreStatus::ok) << r.message;
  const auto ok = pr.rows_right();
  for (size_t m = 0; m < pr.M; ++m) ASSERT_TRUE(ok[m]) << m;
}

TEST(Cbuf, ResidentRowsUpToRAreExact) {
  CbufProduct pr(32, 2048, 32);  // R = pow2_floor(98304 / 2048) = 32
  const ChainResult r = run_one(pr.dev, one_task(pr.task()));  // CBUF_CON0 = 0
  ASSERT_EQ(r.status, CoreStatus::ok) << r.message;
  const auto ok = pr.rows_right();
  for (size_t m = 0; m < pr.M; ++m) ASSERT_TRUE(ok[m]) << m;
}

TEST(Cbuf, ResidentRowsPastRWedge) {
  CbufProduct pr(33, 2048, 32);
  const ChainResult r = run_one(pr.dev, one_task(pr.task()));
  EXPECT_EQ(r.status, CoreStatus::wedged);
  EXPECT_NE(r.message.find("33 rows > R = 32"), std::string::npos) << r.message;
  EXPECT_TRUE(pr.untouched());
}

// The planner's wide int8 K-slices (docs/hardware.md section 9: up to 3072, where R is still
// 32): a 3008-wide slice task (K = 8960 in three) runs 32 rows exactly and wedges at 33, as at
// 2048; one 32 wider than 3072 has R = 16, so its 32-row tile wedges.
TEST(Cbuf, WideSliceRowsFollowTheResidentRowBudget) {
  ASSERT_EQ(resident_rows(3008), 32u);
  ASSERT_EQ(resident_rows(3072), 32u);
  ASSERT_EQ(resident_rows(3104), 16u);
  {
    CbufProduct pr(32, 3008, 32);
    const ChainResult r = run_one(pr.dev, one_task(pr.task()));
    ASSERT_EQ(r.status, CoreStatus::ok) << r.message;
    const auto ok = pr.rows_right();
    for (size_t m = 0; m < pr.M; ++m) ASSERT_TRUE(ok[m]) << m;
  }
  for (auto [k, m] : {std::pair<size_t, size_t>{3008, 33}, {3104, 32}}) {
    CbufProduct pr(m, k, 32);
    const ChainResult r = run_one(pr.dev, one_task(pr.task()));
    EXPECT_EQ(r.status, CoreStatus::wedged) << "K " << k << " mc " << m;
    EXPECT_NE(r.message.find(std::to_string(m) + " rows > R = " + std::to_string(resident_rows(k))), std::string::npos)
        << r.message;
    EXPECT_TRUE(pr.untouched());
  }
}

TEST(Cbuf, RawN16384WritesOnly8192Columns) {
  // DATA_CUBE_CHANNEL keeps 13 bits: 16383 -> 8191, so 8192 columns are written and the
  // rest of C is never touched (ORK observed N = 16384 silently wrong).
  CbufProduct pr(4, 32, 16384);
  TaskSpec t = pr.task();
  k_reduction_banks(t);
  const ChainResult r = run_one(pr.dev, one_task(t));
  ASSERT_EQ(r.status, CoreStatus::ok) << r.message;
  const auto want = ref_matmul_i32(pr.a, pr.b, pr.M, pr.K, pr.N);
  for (size_t m = 0; m < pr.M; ++m) {
    for (size_t n = 0; n < 8192; ++n) ASSERT_EQ(c_at<int32_t>(pr.C->bytes, pr.M, m, n), want[m * pr.N + n]);
    for (size_t n = 8192; n < 16384; ++n) ASSERT_EQ(c_at<int32_t>(pr.C->bytes, pr.M, m, n), 0x5a5a5a5a);
  }
}

}  // namespace
}  // namespace ork::emu::testing
