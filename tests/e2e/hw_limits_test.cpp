// The emulated NPU enforces what the silicon does (docs/hardware.md 10, docs/regcmd-contract.md
// section 4): each limit is shown with a hand-built plan that breaks it, run through the
// real emitter and kernel interface, and the planner is shown never to produce one.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "driver/emu/kernel/fake_kernel.h"
#include "driver/kmd/kmd.h"
#include "lib/matmul/context.h"
#include "lib/matmul/plan.h"
#include "lib/ref/oracle.h"
#include "tests/e2e/sweep_cases.h"

namespace {

using namespace ork::matmul;

struct Operands {
  std::vector<int8_t> a, w;
  std::vector<int32_t> want;
};

Operands operands(int64_t m, int64_t k, int64_t n) {
  std::mt19937 rng(static_cast<unsigned>(m * 31 + k * 7 + n));
  Operands o;
  o.a.resize(static_cast<size_t>(m * k));
  o.w.resize(static_cast<size_t>(k * n));
  for (auto& x : o.a) x = static_cast<int8_t>(rng());
  for (auto& x : o.w) x = static_cast<int8_t>(rng());
  o.want.resize(static_cast<size_t>(m * n));
  EXPECT_TRUE(ork::ref::matmul_int8(o.a, o.w, o.want, {m, k, n}).ok());
  return o;
}

Plan hw_plan_for(int64_t m, int64_t k, int64_t n) {
  auto p = make_plan({m, k, n}, {.dtype = DType::int8, .cores = 1, .mc_cap = 0});
  EXPECT_TRUE(p.ok()) << p.error().message;
  return *p;
}

class HwLimits : public ::testing::TestWithParam<ork::driver::KmdKind> {
 protected:
  void SetUp() override {
    auto k = ork::driver::discover(fake_, GetParam());
    ASSERT_TRUE(k.ok()) << k.error().message;
    kmd_ = std::move(*k);
  }
  ork::Status run(const Plan& p, const Operands& o, std::vector<int32_t>& got, EmitOptions emit = {}) {
    got.assign(o.want.size(), 0);
    return run_plan_once(*kmd_, p, o.a, o.w, got, emit);
  }
  // The device works after a failure: the planner's own plan for the shape is exact.
  void expect_device_usable(int64_t m, int64_t k, int64_t n) {
    const Operands o = operands(m, k, n);
    std::vector<int32_t> got;
    ASSERT_TRUE(run(hw_plan_for(m, k, n), o, got).ok());
    EXPECT_EQ(got, o.want);
  }
  uint64_t resets() const {
    uint64_t r = 0;
    for (auto x : fake_.stats().resets) r += x;
    return r;
  }

  ork::emu::FakeKernel fake_;
  std::unique_ptr<ork::driver::Kmd> kmd_;
};

TEST_P(HwLimits, FullKTaskPast4096Wedges) {
  const int64_t m = 64, k = 6144, n = 32;
  Plan p = hw_plan_for(m, k, n);
  p.slices = 1;
  p.slice_k = p.kp;
  p.tasks = {Task{.core = 0, .m0 = 0, .mc = m, .n0 = 0, .nt = n, .k0 = 0, .kt = p.kp, .slice = 0,
                  .schedule = Schedule::k_reduction, .data_banks = 11, .weight_banks = 1,
                  .feature_grains = static_cast<uint32_t>(resident_rows(p.kp))}};
  const uint64_t before = resets();
  std::vector<int32_t> got;
  auto s = run(p, operands(m, k, n), got);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code, -ETIMEDOUT) << s.error().message;
  EXPECT_GT(resets(), before);
  expect_device_usable(m, k, n);
}

// A K-slice task of one row more than R wedges: at K = 6144 (two slices of 3072) and 8960
// (3008 + 3008 + 2944), R = 32 for every slice width up to 3072 (cbuf_limits.h kWideSliceK).
TEST_P(HwLimits, KSliceTaskOverTheResidentRowBudgetWedges) {
  for (int64_t k : {6144, 8960}) {
    SCOPED_TRACE(::testing::Message() << "K " << k);
    const int64_t m = 33, n = 32;
    Plan p = hw_plan_for(m, k, n);
    ASSERT_GT(p.slices, 1);
    ASSERT_GT(p.slice_k, ork::hw::kMeasuredSliceK);
    ASSERT_EQ(p.mc, 32);
    std::vector<Task> merged;
    for (const Task& t : p.tasks)
      if (t.m0 == 0) {
        Task u = t;
        u.mc = m;
        u.feature_grains = static_cast<uint32_t>(m + 1);
        merged.push_back(u);
      }
    p.tasks = merged;
    p.mc = m;
    std::vector<int32_t> got;
    auto s = run(p, operands(m, k, n), got);
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.error().code, -ETIMEDOUT) << s.error().message;
    expect_device_usable(m, k, n);
  }
}

// The M-tile experiment's table (docs/hardware.md 10.2): mc = mg_max*64 exact, mg_max*64 + 1
// miscomputes, at every K.
TEST_P(HwLimits, OneRowPastTheBankLimitMiscomputes) {
  for (int64_t k : {512, 1024, 2048, 3584, 4096}) {
    SCOPED_TRACE("K = " + std::to_string(k));
    const int64_t limit = mg_max(k, DType::int8) * 64;
    const int64_t n = 32;
    const Plan exact = hw_plan_for(limit, k, n);
    ASSERT_EQ(exact.tasks.size(), 1u);
    const Operands ok_operands = operands(limit, k, n);
    std::vector<int32_t> got;
    ASSERT_TRUE(run(exact, ok_operands, got).ok());
    EXPECT_EQ(got, ok_operands.want);

    const int64_t m = limit + 1;
    Plan p = hw_plan_for(m, k, n);
    Task t = p.tasks.front();
    t.mc = m;
    t.data_banks = 11;  // ORK's 0x1040 formula clamps at 0x1b = 1 weight, 11 data banks
    t.weight_banks = 1;
    p.tasks = {t};
    p.mc = m;
    const Operands o = operands(m, k, n);
    ASSERT_TRUE(run(p, o, got).ok());
    EXPECT_NE(got, o.want) << "an overflowing feature tile must not compute right";
  }
}

TEST_P(HwLimits, SixteenThousandColumnsInOneTask) {
  const int64_t m = 2, k = 32, n = 16384;
  Plan p = hw_plan_for(m, k, n);
  Task t = p.tasks.front();
  t.n0 = 0;
  t.nt = n;
  p.tasks = {t};
  const Operands o = operands(m, k, n);
  std::vector<int32_t> got;
  // The library refuses it: the fields cannot hold it.
  auto refused = run(p, o, got);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("does not fit"), std::string::npos) << refused.error().message;
  // Written anyway (fields truncated as registers keep them), it comes out wrong: the DPU
  // channel field keeps 13 bits (16383 & 0x1fff = 8191), so the task computes columns
  // 0..8191 exactly and never writes 8192.. (they read back as the output buffer's fresh
  // contents, zeros). An emulator that ran nothing would get the first half wrong.
  ASSERT_TRUE(run(p, o, got, {.truncate_fields = true}).ok());
  EXPECT_NE(got, o.want);
  int64_t right = 0, unwritten = 0, nonzero_past = 0;
  for (int64_t r = 0; r < m; ++r)
    for (int64_t c = 0; c < n; ++c) {
      const size_t i = static_cast<size_t>(r * n + c);
      if (c < 8192) {
        right += got[i] == o.want[i];
      } else {
        unwritten += got[i] == 0;
        nonzero_past += o.want[i] != 0;
      }
    }
  EXPECT_EQ(right, m * 8192) << "the first 8192 columns are computed";
  EXPECT_EQ(unwritten, m * 8192) << "columns 8192.. are never written";
  EXPECT_GT(nonzero_past, m * 8000) << "so zeros there are wrong, not right by chance";
  expect_device_usable(m, k, n);
}

INSTANTIATE_TEST_SUITE_P(BothInterfaces, HwLimits,
                         ::testing::Values(ork::driver::KmdKind::rknpu, ork::driver::KmdKind::rocket),
                         [](const auto& info) { return std::string(ork::driver::kmd_kind_name(info.param)); });

// The planner never produces a task the silicon rejects, for any shape of the sweep
// and every core count. The limits are the published figures written out here, not the
// library's constants (a wrong constant in lib/ or driver/common would pass a check against
// itself): DATAIN_HEIGHT 11 bits (M <= 2047 per task) and DPU channel 13 bits (N <= 8192),
// docs/hardware.md section 5; 12 CBUF banks of 32 KiB (Mesa rkt_ml.h); full K <= 4096 per task
// and the M-tile table 704 / 320 / 128 / 64 / 64 rows at K = 512 / 1024 / 2048 / 3584 / 4096,
// feature tiles over 64 rows stored in whole 64-row groups (ORK's published M-tile
// experiment, docs/matmul-schedule.md); resident rows R = 32 at K = 2048 (the same).
int64_t published_mtile_rows(int64_t kt) {
  switch (kt) {
    case 512: return 704;
    case 1024: return 320;
    case 2048: return 128;
    case 3584: return 64;
    case 4096: return 64;
    default: return 2047;
  }
}

TEST(PlannerNeverBreaksALimit, AcrossTheSweep) {
  // Deliberately not hw::kCbufBankBytes: the published figure, independent of the library.
  constexpr int64_t kBankBytes = 32 * 1024;
  for (int64_t m : ork::test::kSweepM)
    for (int64_t k : ork::test::kSweepK)
      for (int64_t n : ork::test::kSweepN)
        for (int cores : ork::test::kSweepCores) {
          auto p = make_plan({m, k, n}, {.dtype = DType::int8, .cores = cores, .mc_cap = 0});
          ASSERT_TRUE(p.ok()) << p.error().message;
          for (const Task& t : p->tasks) {
            ASSERT_LE(t.nt, 8192);
            ASSERT_LE(t.mc, 2047);
            if (t.schedule == Schedule::k_reduction) {
              ASSERT_LE(t.kt, 4096);
              ASSERT_LE(t.mc, published_mtile_rows(t.kt)) << "kt " << t.kt;
              ASSERT_GE(t.weight_banks, 1u);
              ASSERT_LE(t.data_banks + t.weight_banks, 12u);
              const int64_t stored = t.mc <= 64 ? t.mc : (t.mc + 63) / 64 * 64;  // int8: 1 byte a cell
              ASSERT_GE(int64_t{t.data_banks} * kBankBytes, stored * t.kt) << "mc " << t.mc << " kt " << t.kt;
            } else {
              if (t.kt == 2048) {
                ASSERT_LE(t.mc, 32);
              }
              ASSERT_EQ(t.data_banks + t.weight_banks, 0u);
            }
          }
        }
}

}  // namespace
