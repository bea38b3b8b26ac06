// The fp16 and int4 hardware limits (docs/hardware.md 10.4, docs/emulator.md, docs/dtypes.md): each
// shown with a hand-built plan that breaks it, run through the real emitter and kernel interface
// (run_plan_once_any), next to the planner's own plan for the shape, which is exact.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "driver/emu/kernel/fake_kernel.h"
#include "driver/kmd/kmd.h"
#include "lib/matmul/context.h"
#include "lib/matmul/int4_bound.h"
#include "lib/matmul/plan.h"
#include "driver/common/fp16.h"
#include "driver/common/int4.h"
#include "lib/ref/oracle.h"

namespace {

using namespace ork::matmul;

struct Fp16Operands {
  std::vector<uint16_t> a, w;
  std::vector<float> want;
};

Fp16Operands fp16_operands(int64_t m, int64_t k, int64_t n, int64_t slice_k) {
  std::mt19937 rng(static_cast<unsigned>(m * 31 + k * 7 + n));
  std::uniform_real_distribution<float> d(-2.0f, 2.0f);
  Fp16Operands o;
  o.a.resize(static_cast<size_t>(m * k));
  o.w.resize(static_cast<size_t>(k * n));
  for (auto& x : o.a) x = ork::float_to_half(d(rng));
  for (auto& x : o.w) x = ork::float_to_half(d(rng));
  o.want.resize(static_cast<size_t>(m * n));
  EXPECT_TRUE(ork::ref::matmul_fp16_sliced(o.a, o.w, o.want, {m, k, n}, slice_k).ok());
  return o;
}

Plan dtype_plan_for(DType dt, int64_t m, int64_t k, int64_t n, int cores = 1) {
  auto p = make_plan({m, k, n}, {.dtype = dt, .cores = cores, .mc_cap = 0});
  EXPECT_TRUE(p.ok()) << p.error().message;
  return *p;
}

// One K-reduction task of mc rows over the whole (single-slice) shape.
Plan one_kreduction_task(DType dt, int64_t m, int64_t k, int64_t n, uint32_t data_banks) {
  Plan p = dtype_plan_for(dt, m, k, n);
  Task t = p.tasks.front();
  t.m0 = 0;
  t.mc = m;
  t.n0 = 0;
  t.nt = p.np;
  t.schedule = Schedule::k_reduction;
  t.data_banks = data_banks;
  t.weight_banks = 12 - data_banks;
  t.feature_grains = static_cast<uint32_t>(std::min<int64_t>(m + 1, resident_rows(t.kt)));
  p.tasks = {t};
  p.mc = m;
  p.schedule = Schedule::k_reduction;
  return p;
}

int64_t bad_rows(const std::vector<float>& got, const std::vector<float>& want, int64_t n) {
  int64_t bad = 0;
  for (size_t r = 0; r < got.size() / static_cast<size_t>(n); ++r)
    bad += !std::equal(got.begin() + r * n, got.begin() + (r + 1) * n, want.begin() + r * n);
  return bad;
}

class DtypeLimits : public ::testing::TestWithParam<ork::driver::KmdKind> {
 protected:
  void SetUp() override {
    auto k = ork::driver::discover(fake_, GetParam());
    ASSERT_TRUE(k.ok()) << k.error().message;
    kmd_ = std::move(*k);
  }
  template <class A, class W, class C>
  ork::Status run(const Plan& p, const A& a, const W& w, C& c) {
    return run_plan_once_any(*kmd_, p, a.data(), w.data(), c.data());
  }
  ork::emu::FakeKernel fake_;
  std::unique_ptr<ork::driver::Kmd> kmd_;
};

// The M-tile experiment's fp16 rule 1 (docs/hardware.md 10.4): fp16 on the K-reduction schedule at
// K = 2048 is exact for 8 rows and wrong from 9 (the emulator: rows >= 8 read row r mod 8).
TEST_P(DtypeLimits, Fp16KReductionExactAt8RowsWrongAt9) {
  const int64_t k = 2048, n = 32;
  for (int64_t m : {8, 9}) {
    const Fp16Operands o = fp16_operands(m, k, n, k);
    std::vector<float> got(o.want.size());
    ASSERT_TRUE(run(one_kreduction_task(DType::fp16, m, k, n, 8), o.a, o.w, got).ok());
    if (m == 8) EXPECT_EQ(got, o.want);
    else EXPECT_EQ(bad_rows(got, o.want, n), 1) << "row 8 must compute with row 0's feature";
  }
}

// Rule 2 (docs/hardware.md 10.4): the single-core path of ork-driver before 4815fe6 used sched=1
// with 64-row tiles at Kp >= 2048 (the multi-core path had a guard) and returned garbage for M > 8.
// That plan, hand-built, is wrong here too; the planner's single-core plan is exact.
TEST_P(DtypeLimits, Fp16SingleCoreWithoutTheGuardIsGarbage) {
  const int64_t m = 64, k = 2048, n = 32;
  const Fp16Operands o = fp16_operands(m, k, n, k);
  std::vector<float> got(o.want.size());
  ASSERT_TRUE(run(one_kreduction_task(DType::fp16, m, k, n, 8), o.a, o.w, got).ok());
  EXPECT_EQ(bad_rows(got, o.want, n), m - 8);
  const Plan guarded = dtype_plan_for(DType::fp16, m, k, n, 1);
  ASSERT_TRUE(run(guarded, o.a, o.w, got).ok());
  EXPECT_EQ(got, o.want);
}

// fp16 at K = 4096: MTX runs 1 x 4096 x 4096 with one data bank (ceil(M*K*2 / 32 KiB)), so a
// tile of at most 64 rows takes its rows, not a 64-row group (docs/emulator.md "CBUF
// limits"); 8 rows (64 KiB) in one bank overflow and rows 0..3 read rows 4..7. The planner
// takes the resident-row schedule (R = 16 rows beats the K-reduction's 8).
TEST_P(DtypeLimits, Fp16FullK4096TakesItsRowsNotAGroup) {
  const int64_t k = 4096, n = 16;
  for (const int64_t m : {int64_t{1}, int64_t{8}}) {
    const Fp16Operands o = fp16_operands(m, k, n, k);
    std::vector<float> got(o.want.size());
    ASSERT_EQ(ork::matmul::data_banks_for(m, k, DType::fp16), m == 1 ? 1 : 2);
    ASSERT_TRUE(run(one_kreduction_task(DType::fp16, m, k, n, m == 1 ? 1 : 11), o.a, o.w, got).ok());
    EXPECT_EQ(got, o.want) << "m " << m;
  }
  const Fp16Operands o = fp16_operands(8, k, n, k);
  std::vector<float> got(o.want.size());
  ASSERT_TRUE(run(one_kreduction_task(DType::fp16, 8, k, n, 1), o.a, o.w, got).ok());
  EXPECT_EQ(bad_rows(got, o.want, n), 4);
  const Plan p = dtype_plan_for(DType::fp16, 8, k, n);
  ASSERT_EQ(p.schedule, Schedule::resident_rows);
  ASSERT_TRUE(run(p, o.a, o.w, got).ok());
  EXPECT_EQ(got, o.want);
}

// fp16 past 4096 in one task wedges with mc >= R (every dtype, docs/emulator.md); the
// planner slices. R(4128) = pow2_floor(98304 / 4128) = 16.
TEST_P(DtypeLimits, Fp16FullKPast4096Wedges) {
  const int64_t m = 16, k = 4128, n = 16;
  Plan p = dtype_plan_for(DType::fp16, m, k, n);
  ASSERT_EQ(p.slices, 3);
  const Fp16Operands o = fp16_operands(m, k, n, p.slice_k);
  std::vector<float> got(o.want.size());
  ASSERT_TRUE(run(p, o.a, o.w, got).ok());
  EXPECT_EQ(got, o.want);
  Task t = p.tasks.front();
  t.kt = p.kp;
  t.slice = 0;
  p.tasks = {t};
  p.slices = 1;
  p.slice_k = p.kp;
  auto s = run(p, o.a, o.w, got);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code, -ETIMEDOUT) << s.error().message;
}

// int4: a full-K task at K = 4096 of (-8) x (-8) sums 262144, saturated to 32767 in int16;
// the planner's 480-wide slices return the exact sum.
TEST_P(DtypeLimits, Int4PartialsSaturateUnlessSliced) {
  const int64_t m = 2, k = 4096, n = 64;
  const std::vector<uint8_t> a(static_cast<size_t>(m * k / 2), 0x88), w(static_cast<size_t>(k * n / 2), 0x88);
  std::vector<int32_t> got(static_cast<size_t>(m * n));
  Plan full = dtype_plan_for(DType::int4, m, k, n);
  ASSERT_GT(full.slices, 1);
  const uint64_t before = fake_.stats().int4_saturated_cells;
  ASSERT_TRUE(run(full, a, w, got).ok());
  EXPECT_EQ(got, std::vector<int32_t>(got.size(), 64 * k));
  EXPECT_EQ(fake_.stats().int4_saturated_cells, before);
  Task t = full.tasks.front();
  t.kt = full.kp;
  t.slice = 0;
  t.schedule = Schedule::resident_rows;
  full.tasks = {t};
  full.slices = 1;
  full.slice_k = full.kp;
  full.schedule = Schedule::resident_rows;
  ASSERT_TRUE(run(full, a, w, got).ok());
  EXPECT_EQ(got, std::vector<int32_t>(got.size(), 32767));
  EXPECT_EQ(fake_.stats().int4_saturated_cells - before, static_cast<uint64_t>(m * n));  // every cell seen
}

// Weights one past their bound at a 1024 slice: the emulated NPU clamps the partial and
// counts it (the fake kernel's int4_saturated_cells), so a plan that let a sum leave int16
// shows; the width int4_safe_slice_k chooses for them (992) clamps nothing and is exact.
TEST_P(DtypeLimits, Int4SaturationIsCountedNeverSilent) {
  const int64_t m = 2, k = 2048, n = 64;
  std::vector<uint8_t> w(static_cast<size_t>(k * n / 2), 0x44);  // all +4
  const std::vector<uint8_t> a(static_cast<size_t>(m * k / 2), 0x88);  // all -8
  ork::int4::put(w.data(), 1500 * n + 7, 5);
  auto width = int4_safe_slice_k(w, k, n);
  ASSERT_TRUE(width.ok()) << width.error().message;
  EXPECT_EQ(*width, 992);
  for (const int64_t slice_k : {int64_t{1024}, *width}) {
    auto p = make_plan({m, k, n}, {.dtype = DType::int4, .cores = 1, .slice_k = slice_k});
    ASSERT_TRUE(p.ok()) << p.error().message;
    std::vector<int32_t> got(static_cast<size_t>(m * n));
    const uint64_t before = fake_.stats().int4_saturated_cells;
    ASSERT_TRUE(run(*p, a, w, got).ok());
    const uint64_t counted = fake_.stats().int4_saturated_cells - before;
    const bool wide = slice_k == 1024;  // slice 1 of column 7 sums to -32776
    EXPECT_EQ(got[7], wide ? -65536 : -65544) << slice_k;
    EXPECT_EQ(got[6], -65536) << slice_k;
    EXPECT_EQ(counted, wide ? static_cast<uint64_t>(m) : 0u) << slice_k;
  }
}

INSTANTIATE_TEST_SUITE_P(BothInterfaces, DtypeLimits,
                         ::testing::Values(ork::driver::KmdKind::rknpu, ork::driver::KmdKind::rocket),
                         [](const auto& info) { return std::string(ork::driver::kmd_kind_name(info.param)); });

// Accuracy: fp16 results against a float64 dot product of the same halves. Bound (docs/
// dtypes.md): |c - exact| <= 1.01 * K * 2^-24 * sum_k |a_k b_k| for fp32 C (K - 1 fp32 adds
// per cell in any slice grouping, each relative error <= 2^-24); fp16 C adds half an fp16 ulp,
// 2^-11 |c|.
TEST(Fp16Accuracy, WithinTheDocumentedBoundOfFloat64) {
  ork::emu::FakeKernel fake;
  auto kmd = ork::driver::discover(fake, ork::driver::KmdKind::rknpu);
  ASSERT_TRUE(kmd.ok());
  for (int64_t k : {96, 2048, 6144}) {
    const int64_t m = 3, n = 16;
    const Plan p = dtype_plan_for(DType::fp16, m, k, n);
    const Fp16Operands o = fp16_operands(m, k, n, p.slice_k);
    std::vector<float> got(o.want.size());
    ASSERT_TRUE(run_plan_once_any(**kmd, p, o.a.data(), o.w.data(), got.data()).ok());
    EXPECT_EQ(got, o.want);
    auto ph = make_plan({m, k, n}, {.dtype = DType::fp16, .cores = 1, .fp16_out = true});
    std::vector<uint16_t> half(o.want.size());
    ASSERT_TRUE(run_plan_once_any(**kmd, *ph, o.a.data(), o.w.data(), half.data()).ok());
    for (int64_t r = 0; r < m; ++r)
      for (int64_t c = 0; c < n; ++c) {
        double exact = 0, mag = 0;
        for (int64_t i = 0; i < k; ++i) {
          const double x = double(ork::half_to_float(o.a[r * k + i])) * ork::half_to_float(o.w[i * n + c]);
          exact += x;
          mag += std::fabs(x);
        }
        const double bound = 1.01 * double(k) * std::ldexp(1.0, -24) * mag;
        const double got32 = got[r * n + c];
        EXPECT_LE(std::fabs(got32 - exact), bound) << "K " << k << " cell " << r << "," << c;
        const double got16 = ork::half_to_float(half[r * n + c]);
        EXPECT_LE(std::fabs(got16 - exact), bound + std::ldexp(std::fabs(got32), -11)) << "K " << k;
      }
  }
}

}  // namespace
