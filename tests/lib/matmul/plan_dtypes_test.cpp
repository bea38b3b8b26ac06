// The planner's fp16 and int4 rules (docs/dtypes.md), each with a test that fails without it.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "lib/matmul/plan.h"
#include "lib/matmul/plan_stacked.h"

namespace ork::matmul {
namespace {

Plan plan_dtypes_plan_of(Shape s, PlanOptions o) {
  auto p = make_plan(s, o);
  EXPECT_TRUE(p.ok()) << p.error().message;
  return p.ok() ? *p : Plan{};
}

// docs/hardware.md 10.4, fp16 rule 1: on the K-reduction schedule (sched=1) fp16 is exact for
// mc <= 8 and wrong from 9 at K = 2048. Without the cap in fp16_kreduction_rows the planner would
// pick 64-row K-reduction tiles at K = 2048 (64 > R = 32) and this test fails.
TEST(PlanFp16, Rule1KReductionTasksHaveAtMost8RowsFromK2048) {
  EXPECT_EQ(fp16_kreduction_rows(2016), 64);  // below 2048: the bank limit (1 group of 64)
  EXPECT_EQ(fp16_kreduction_rows(2048), 8);
  EXPECT_EQ(fp16_kreduction_rows(2816), 8);
  EXPECT_EQ(fp16_kreduction_rows(2848), 8);   // a 64-row group needs > 11 banks, 63 rows fit
  EXPECT_EQ(fp16_kreduction_rows(4096), 8);   // 44 rows of 8 KiB fit 11 banks (MTX: 1 row, 1 bank)
  for (int64_t k : {2048, 2080, 2816, 3000, 4096, 6144}) {
    for (int64_t m : {9, 64, 100, 2048}) {
      for (int cores = 1; cores <= 3; ++cores) {
        for (int64_t cap : {0, 4, 8, 16, 64}) {
          const Plan p = plan_dtypes_plan_of({m, k, 64}, {.dtype = DType::fp16, .cores = cores, .mc_cap = cap});
          for (const Task& t : p.tasks) {
            if (t.schedule == Schedule::k_reduction && t.kt >= kFp16RowLimitFromK) {
              EXPECT_LE(t.mc, kFp16ExactRows) << "M " << m << " K " << k << " cores " << cores << " cap " << cap;
            }
          }
        }
      }
    }
  }
}

// docs/hardware.md 10.4, fp16 rule 2 (the follow-up's single-core guard): the single-core path
// chose sched=1 at Kp >= 2048 where the multi-core path had a guard, and returned garbage for
// M > 8. Here the choice is a function of kt alone: one core gets exactly the plan rows and
// schedule of three, and that schedule obeys rule 1.
TEST(PlanFp16, Rule2SingleCoreGetsTheGuardedScheduleToo) {
  for (int64_t k : {1024, 2048, 4096}) {
    const Plan one = plan_dtypes_plan_of({100, k, 2048}, {.dtype = DType::fp16, .cores = 1});
    for (int cores = 2; cores <= 3; ++cores) {
      const Plan many = plan_dtypes_plan_of({100, k, 2048}, {.dtype = DType::fp16, .cores = cores});
      EXPECT_EQ(one.schedule, many.schedule) << "K " << k;
      EXPECT_EQ(one.mc, many.mc) << "K " << k;
    }
    for (const Task& t : one.tasks)
      if (t.schedule == Schedule::k_reduction && t.kt >= 2048) {
        EXPECT_LE(t.mc, 8);
      }
  }
}

// The fp16 table: schedule and rows per tile by K (docs/dtypes.md).
TEST(PlanFp16, TileTable) {
  struct Row {
    int64_t k, cap;
    Schedule sched;
    int64_t mc, slices, slice_k;
  };
  const Row rows[] = {
      {32, 0, Schedule::k_reduction, 2047, 1, 32},    // field limit
      {512, 0, Schedule::k_reduction, 320, 1, 512},   // 5 groups of 64 KiB
      {1024, 0, Schedule::k_reduction, 128, 1, 1024},
      {2016, 0, Schedule::k_reduction, 64, 1, 2016},
      {2048, 0, Schedule::resident_rows, 32, 1, 2048},  // K-reduction only 8 rows: R = 32 wins
      {2048, 8, Schedule::k_reduction, 8, 1, 2048},     // a cap of 8: both 8, K-reduction
      {4096, 0, Schedule::resident_rows, 16, 1, 4096},  // K-reduction only 8 rows: R = 16 wins
      {4128, 0, Schedule::resident_rows, 32, 3, 2048},  // K-slices of 2048, host fp32 sums
      {18944, 4, Schedule::resident_rows, 4, 10, 2048},
  };
  for (const Row& r : rows) {
    const Plan p = plan_dtypes_plan_of({4096, r.k, 32}, {.dtype = DType::fp16, .cores = 1, .mc_cap = r.cap});
    EXPECT_EQ(p.schedule, r.sched) << "K " << r.k;
    EXPECT_EQ(p.mc, r.mc) << "K " << r.k;
    EXPECT_EQ(p.slices, r.slices) << "K " << r.k;
    EXPECT_EQ(p.slice_k, r.slice_k) << "K " << r.k;
    for (const Task& t : p.tasks) {
      EXPECT_LE(t.kt, kMaxFullK);
      if (t.schedule == Schedule::resident_rows) {
        EXPECT_LE(t.mc, resident_rows(t.kt));
      }
      if (t.schedule == Schedule::k_reduction) {
        EXPECT_EQ(t.data_banks, static_cast<uint32_t>(data_banks_for(t.mc, t.kt, DType::fp16)));
        EXPECT_LE(t.data_banks, 11u);
      }
    }
  }
}

TEST(PlanFp16, Fp16OutputOnTheNpuOnlyWithOneSlice) {
  const Plan one = plan_dtypes_plan_of({5, 1000, 40}, {.dtype = DType::fp16, .fp16_out = true});
  EXPECT_TRUE(one.npu_fp16_out());
  EXPECT_EQ(one.out_atom(), 8);
  EXPECT_EQ(one.c_bytes_per_slice(), 5 * 48 * 2);
  const Plan wide = plan_dtypes_plan_of({5, 5000, 40}, {.dtype = DType::fp16, .fp16_out = true});
  EXPECT_FALSE(wide.npu_fp16_out());  // fp32 partials, rounded once on the host
  EXPECT_EQ(wide.out_atom(), 4);
  EXPECT_EQ(wide.c_bytes_per_slice(), 5 * 48 * 4);
  const Plan f32 = plan_dtypes_plan_of({5, 1000, 40}, {.dtype = DType::fp16});
  EXPECT_FALSE(f32.npu_fp16_out());
}

// int4: int16 partials saturate, so no task may sum more than 32767 / 64 products.
// Without the 480-wide slices a K = 4096 task would reach 4096 * 64 = 262144.
TEST(PlanInt4, NoTaskCanSaturateItsInt16Partials) {
  for (int64_t k : {32, 480, 481, 512, 1024, 4096, 18944}) {
    const Plan p = plan_dtypes_plan_of({7, k, 64}, {.dtype = DType::int4, .cores = 2});
    for (const Task& t : p.tasks) EXPECT_LE(t.kt * kInt4MaxProduct, 32767) << "K " << k;
    EXPECT_EQ(p.slices, (p.kp + 479) / 480) << "K " << k;
  }
}

// int4 weights of a given width past the floor: K past it in S = ceil(kp / width) slices of
// one even width, never wider than the given one, K zero padded to S x that (under 32 a
// slice): every task one whole slice deep, none narrower, so all of them stack; width 0 and
// the floor (480) keep 480-wide slices and a narrower last one (the packed-weight blobs' layout).
TEST(PlanInt4, AGivenWidthEvensTheSlicesAndPadsK) {
  for (int64_t width : {512, 640, 1376, 4096}) {
    for (int64_t k : {481, 1001, 1920, 1921, 3584, 4097, 18944}) {
      const int64_t kp = (k + 31) / 32 * 32;
      const Plan p = plan_dtypes_plan_of({2, k, 192}, {.dtype = DType::int4, .cores = 3, .slice_k = width});
      if (kp <= width) {
        EXPECT_EQ(p.slices, 1) << k;
        continue;
      }
      EXPECT_EQ(p.slices, (kp + width - 1) / width) << k << " at " << width;
      EXPECT_LE(p.slice_k, width) << k << " at " << width;
      EXPECT_EQ(p.slice_k % kKAlign, 0) << k << " at " << width;
      EXPECT_EQ(p.kp, p.slices * p.slice_k) << k << " at " << width;
      EXPECT_LT(p.kp - kp, p.slices * kKAlign) << k << " at " << width;
      for (const Task& t : p.tasks) EXPECT_EQ(t.kt, p.slice_k) << k << " at " << width;
      const Plan stacked = plan_dtypes_plan_of({2, k, 192}, {.dtype = DType::int4, .cores = 1, .slice_k = width, .stack = true});
      EXPECT_TRUE(stacked.stacked) << k << " at " << width;
      EXPECT_EQ(static_cast<int64_t>(stacked.tasks.size()), (p.slices * 192 + kMaxColumnsPerTask - 1) / kMaxColumnsPerTask)
          << k << " at " << width;
    }
  }
  for (int64_t width : {int64_t{0}, kInt4SliceK}) {
    const Plan floor = plan_dtypes_plan_of({1, 1500, 64}, {.dtype = DType::int4, .cores = 1, .slice_k = width});
    EXPECT_EQ(floor.kp, 1504);
    EXPECT_EQ(floor.slice_k, kInt4SliceK);
    EXPECT_EQ(floor.tasks.back().kt, 1504 - 3 * kInt4SliceK);
  }
}

// int4's own bank rule: data banks from the nibble-sized tile (int8's would be double).
TEST(PlanInt4, BankRuleUsesNibbleSizedTiles) {
  EXPECT_EQ(data_banks_for(64, 4096, DType::int4), 4);
  EXPECT_EQ(data_banks_for(64, 4096, DType::int8), 8);
  EXPECT_EQ(mg_max(480, DType::int4), 23);  // 23 groups of 64 x 240 bytes = 10.8 banks
  const Plan full = plan_dtypes_plan_of({4096, 480, 64}, {.dtype = DType::int4, .cores = 1});
  EXPECT_EQ(full.schedule, Schedule::k_reduction);
  EXPECT_EQ(full.mc, 1472);
  EXPECT_EQ(full.tasks[0].data_banks, 11u);
  EXPECT_EQ(full.tasks[0].weight_banks, 1u);
  const Plan sliced = plan_dtypes_plan_of({4096, 4096, 64}, {.dtype = DType::int4, .cores = 1});
  EXPECT_EQ(sliced.schedule, Schedule::resident_rows);
  EXPECT_EQ(sliced.mc, 128);  // R = pow2_floor(65536 / 480)
  EXPECT_EQ(sliced.b_bytes(), 4096 * 64 / 2);  // weight bytes K*N/2 (int4 capture)
}

// Every (row, column, slice) exactly once, for both dtypes, on shapes with edges.
TEST(PlanDTypes, ExactCover) {
  for (DType dt : {DType::fp16, DType::int4}) {
    for (int64_t m : {1, 9, 65, 129, 705}) {
      for (int64_t k : {32, 480, 512, 2048, 4128}) {
        for (int64_t n : {16, 80, 8224}) {
          for (int cores = 1; cores <= 3; ++cores) {
            const Plan p = plan_dtypes_plan_of({m, k, n}, {.dtype = dt, .cores = cores});
            std::map<std::tuple<int64_t, int64_t>, int64_t> cells;  // (slice, column unit) -> rows
            for (const Task& t : p.tasks) {
              EXPECT_EQ(t.n0 % weight_atom(dt), 0);
              EXPECT_LE(t.nt, kMaxColumnsPerTask);
              for (int64_t u = t.n0; u < t.n0 + t.nt; u += weight_atom(dt)) cells[{t.slice, u}] += t.mc;
            }
            EXPECT_EQ(static_cast<int64_t>(cells.size()), p.slices * p.np / weight_atom(dt));
            for (const auto& [key, rows] : cells) EXPECT_EQ(rows, m) << dtype_name(dt) << " " << m << "x" << k << "x" << n;
          }
        }
      }
    }
  }
}

// The fewest-task layout of a stacked plan (plan_stacked.h): ceil(S x np / 8192) tasks, every
// C' column of the S slices in exactly one task of at most 8192 columns, each task on the rows
// of the slices its columns belong to, at most one task more on a core than on another and the
// cores' columns as even as their tasks hold. 7B's down at decode (K = 18944 in 14 slices of
// 1376, N = 3584): 7 tasks on 3 cores where make_plan's split takes 9.
TEST(PlanInt4, StackedInTheFewestTasks) {
  struct Shape3 {
    int64_t m, k, n, width;
    int cores;
  };
  for (const Shape3& c : {Shape3{1, 18944, 3584, 1376, 3}, Shape3{1, 18944, 3584, 1376, 2}, Shape3{2, 2400, 7168, 0, 3},
                          Shape3{3, 3360, 8192, 0, 3}, Shape3{1, 3584, 18944, 1344, 3}, Shape3{1, 1440, 128, 0, 3}}) {
    auto plan = make_plan({c.m, c.k, c.n}, {.dtype = DType::int4, .cores = c.cores, .slice_k = c.width, .stack = true});
    ASSERT_TRUE(plan && plan->stacked) << c.k << " x " << c.n;
    const size_t before = plan->tasks.size();
    ASSERT_TRUE(stack_in_fewest_tasks(*plan, c.cores));
    const int64_t cols = plan->slices * plan->np, tasks = (cols + kMaxColumnsPerTask - 1) / kMaxColumnsPerTask;
    EXPECT_EQ(static_cast<int64_t>(plan->tasks.size()), tasks) << c.k << " x " << c.n;
    EXPECT_LE(plan->tasks.size(), before);
    std::vector<int64_t> per_core(3, 0), tasks_on(3, 0);
    int64_t next = 0;  // tasks in column order, every column once
    for (const Task& t : plan->tasks) {
      EXPECT_EQ(t.n0, next);
      next = t.n0 + t.nt;
      EXPECT_LE(t.nt, kMaxColumnsPerTask);
      EXPECT_EQ(t.kt, plan->slice_k);
      EXPECT_EQ(t.slice, t.n0 / plan->np);
      EXPECT_EQ(t.m0, t.slice * plan->mp);
      EXPECT_EQ(t.mc, ((t.n0 + t.nt - 1) / plan->np - t.slice + 1) * plan->mp);
      EXPECT_LE(t.mc, resident_rows(t.kt));
      per_core[static_cast<size_t>(t.core)] += t.nt;
      ++tasks_on[static_cast<size_t>(t.core)];
    }
    EXPECT_EQ(next, cols);
    const int used = plan->cores_used;
    EXPECT_EQ(used, std::min<int64_t>(c.cores, tasks));
    const auto [lo, hi] = std::minmax_element(tasks_on.begin(), tasks_on.begin() + used);
    EXPECT_LE(*hi - *lo, 1);
    // A core takes more columns than another (past one weight atom) only when the other's
    // tasks are full.
    for (int a = 0; a < used; ++a) {
      for (int b = 0; b < used; ++b) {
        if (per_core[static_cast<size_t>(a)] <= per_core[static_cast<size_t>(b)] + weight_atom(DType::int4)) continue;
        EXPECT_EQ(per_core[static_cast<size_t>(b)], tasks_on[static_cast<size_t>(b)] * kMaxColumnsPerTask);
      }
    }
  }
  EXPECT_EQ((*make_plan({1, 18944, 3584}, {.dtype = DType::int4, .slice_k = 1376, .stack = true})).tasks.size(), 9u);
  // Plans it does not take: not stacked, a narrower last slice (480-wide slices), cores.
  auto plain = make_plan({1, 18944, 3584}, {.dtype = DType::int4, .slice_k = 1376});
  ASSERT_TRUE(plain);
  EXPECT_FALSE(stack_in_fewest_tasks(*plain, 3));
  auto narrow = make_plan({1, 1000, 128}, {.dtype = DType::int4, .stack = true});
  ASSERT_TRUE(narrow && narrow->stacked);
  const Status n = stack_in_fewest_tasks(*narrow, 3);
  ASSERT_FALSE(n);
  EXPECT_NE(n.error().message.find("every K-slice is full"), std::string::npos);
  auto full = make_plan({1, 1440, 128}, {.dtype = DType::int4, .stack = true});
  ASSERT_TRUE(full);
  EXPECT_FALSE(stack_in_fewest_tasks(*full, 4));
}

// A stacked plan's C' by task (plan.h): surfaces as deep as the most rows a task has, each
// task's rows from row 0 of its own columns' surfaces, so no two tasks write the same atom,
// every atom within c_bytes_per_slice(), and each slice's rows of a column where the unpack
// looks for them. Make_plan's split (with a narrower last slice) and the fewest-task layout.
TEST(PlanInt4, StackedOutputIsStoredByTask) {
  struct Case {
    int64_t m, k, n, width;
    bool fewest;
  };
  for (const Case& c : {Case{1, 18944, 3584, 1344, true}, Case{1, 18944, 3584, 1344, false},
                        Case{4, 18944, 3584, 1376, true}, Case{2, 1000, 200, 0, false}, Case{3, 3360, 8192, 0, true}}) {
    auto plan = make_plan({c.m, c.k, c.n}, {.dtype = DType::int4, .slice_k = c.width, .stack = true});
    ASSERT_TRUE(plan && plan->stacked) << c.k << " x " << c.n;
    if (c.fewest) {
      ASSERT_TRUE(stack_in_fewest_tasks(*plan, 3));
    }
    int64_t depth = 0;
    for (const Task& t : plan->tasks) depth = std::max(depth, t.mc);
    ASSERT_EQ(plan->c_rows(), depth);
    EXPECT_LT(depth, plan->slices * plan->mp) << "C' keeps every slice's rows in every surface";
    const int64_t atom = plan->out_atom(), atoms = plan->c_bytes_per_slice() / 16;
    EXPECT_EQ(plan->c_bytes_per_slice(), depth * plan->slices * plan->np * 2);
    std::vector<int> owner(static_cast<size_t>(atoms), -1);
    for (size_t i = 0; i < plan->tasks.size(); ++i) {
      const Task& t = plan->tasks[i];
      EXPECT_EQ(plan->c_offset(t), t.n0 / atom * depth * 16);
      for (int64_t g = 0; g < t.nt / atom; ++g)
        for (int64_t r = 0; r < t.mc; ++r) {
          const int64_t at = plan->c_offset(t) / 16 + g * depth + r;
          ASSERT_LT(at, atoms);
          EXPECT_EQ(owner[static_cast<size_t>(at)], -1) << "atom " << at << " written twice";
          owner[static_cast<size_t>(at)] = static_cast<int>(i);
        }
    }
    // Slice s's row m of C' column j: written by the task holding j, at its row s*mp + m - m0.
    for (int64_t s = 0; s < plan->slices; ++s)
      for (int64_t j = s * plan->np; j < (s + 1) * plan->np; j += atom) {
        const auto t = std::find_if(plan->tasks.begin(), plan->tasks.end(),
                                    [&](const Task& x) { return j >= x.n0 && j < x.n0 + x.nt; });
        ASSERT_NE(t, plan->tasks.end());
        for (int64_t m = 0; m < plan->mp; ++m) {
          const int64_t row = s * plan->mp + m - t->m0;
          ASSERT_GE(row, 0);
          ASSERT_LT(row, t->mc);
          EXPECT_EQ(owner[static_cast<size_t>(j / atom * depth + row)], static_cast<int>(t - plan->tasks.begin()));
        }
      }
  }
  // 1 x 18944 x 3584 in fifteen slices of 1344, seven tasks of up to four slices: surfaces
  // 4 rows deep, not 15.
  auto decode = make_plan({1, 18944, 3584}, {.dtype = DType::int4, .slice_k = 1344, .stack = true});
  ASSERT_TRUE(decode && stack_in_fewest_tasks(*decode, 3));
  EXPECT_EQ(decode->c_rows(), 4);
}

}  // namespace
}  // namespace ork::matmul
