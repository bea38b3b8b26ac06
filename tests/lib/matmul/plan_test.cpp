// The planner as arithmetic: the M-tile experiment's table (docs/hardware.md 10.2), the bank rule
// at every K, coverage of every (m, n, slice) cell, the contract's limits, ordering, knobs and
// errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "lib/matmul/plan.h"

namespace ork::matmul {
namespace {

Plan plan_plan_of(int64_t m, int64_t k, int64_t n, int cores = 3, int64_t mc_cap = 0) {
  Result<Plan> r = make_plan({m, k, n}, {.dtype = DType::int8, .cores = cores, .mc_cap = mc_cap});
  EXPECT_TRUE(r.ok()) << r.error().message;
  return r.ok() ? r.value() : Plan{};
}

// Banks written from the rule's definition, independently of plan.cpp's closed form: a
// tile of more than 64 rows takes whole 64-row groups, one of at most 64 rows its rows
// (docs/emulator.md "CBUF limits": ORK's M-tile table, MTX's 1 x 4096 x 4096 in one bank).
int64_t banks_by_definition(int64_t groups, int64_t kp) {
  const int64_t bytes = groups * 64 * kp;
  return (bytes + 32767) / 32768;
}
int64_t banks_for_rows(int64_t rows, int64_t kp) {
  const int64_t stored = rows <= 64 ? rows : (rows + 63) / 64 * 64;
  return (stored * kp + 32767) / 32768;
}

TEST(PlanTable, ReproducesThePublishedMTileTable) {
  // docs/hardware.md 10.2, the "mg_max x 64 (exact)" column.
  const std::vector<std::pair<int64_t, int64_t>> table = {
      {512, 704}, {1024, 320}, {2048, 128}, {3584, 64}, {4096, 64}};
  for (auto [k, rows] : table) {
    EXPECT_EQ(mg_max(k, DType::int8) * 64, rows) << "K = " << k;
    EXPECT_EQ(plan_plan_of(4100, k, 2048).mc, rows) << "K = " << k;
  }
}

TEST(PlanTable, BankRuleAtEveryK) {
  for (int64_t k = 32; k <= 4096; k += 32) {
    const int64_t mg = mg_max(k, DType::int8);
    ASSERT_GE(mg, 1) << "K = " << k;
    EXPECT_LE(banks_by_definition(mg, k), 11) << "K = " << k;
    EXPECT_GT(banks_by_definition(mg + 1, k), 11) << "K = " << k << ": mg_max is not the largest";
    for (int64_t g = 1; g <= mg + 1; ++g) {
      EXPECT_EQ(data_banks_for(g * 64, k, DType::int8), banks_by_definition(g, k));
      EXPECT_EQ(data_banks_for(g * 64 - 63, k, DType::int8), banks_for_rows(g * 64 - 63, k));
    }
    const Plan p = plan_plan_of(4100, k, 96, 1);
    EXPECT_EQ(p.mc, std::min<int64_t>(mg * 64, 2047)) << "K = " << k;
    for (const Task& t : p.tasks) {
      const int64_t need = banks_for_rows(t.mc, k);
      EXPECT_EQ(t.data_banks, need) << "K = " << k << " mc = " << t.mc;
      EXPECT_EQ(t.data_banks + t.weight_banks, 12u);
      EXPECT_GE(t.weight_banks, 1u);
    }
  }
}

TEST(PlanTable, EqualsOrkClosedFormAtMultiplesOf512) {
  // docs/hardware.md section 9: 0x1040 = max(base - slope*(mg-1), 0x1b), s = K/512,
  // base = 177 - 15*(s-1), slope = 15*s; fields WEIGHT_BANK 7:4, DATA_BANK 3:0.
  for (int64_t k = 512; k <= 4096; k += 512) {
    const int64_t s = k / 512, base = 177 - 15 * (s - 1), slope = 15 * s;
    for (int64_t mg = 1; mg <= mg_max(k, DType::int8); ++mg) {
      const int64_t ork = std::max<int64_t>(base - slope * (mg - 1), 0x1b);
      const int64_t data = data_banks_for(mg * 64, k, DType::int8);
      EXPECT_EQ(((12 - data) << 4) | data, ork) << "K = " << k << " mg = " << mg;
    }
  }
}

TEST(PlanTable, ResidentRows) {
  // R = pow2_floor(2 * 49152 / K): every published figure (docs/emulator.md "CBUF limits").
  EXPECT_EQ(resident_rows(2048), 32);   // the K-slice tile (ORK: R = 32 at Kp = 2048)
  EXPECT_EQ(resident_rows(6144), 16);   // ORK wide-K follow-up: 16 @ K6144
  EXPECT_EQ(resident_rows(8192), 8);    // 8 @ K8192
  EXPECT_EQ(resident_rows(18944), 4);   // 4 @ K18944
  EXPECT_EQ(resident_rows(32), 2048);
  EXPECT_EQ(resident_rows(480), 128);   // the int4 slice
}

// Every (m, n) cell of every slice covered exactly once: checked on the grid that all task
// boundaries span (exact, and small even for M = 4100, N = 16384).
void expect_exact_cover(const Plan& p, const std::string& where) {
  std::set<int64_t> mb{0, p.mp}, nb{0, p.np};
  for (const Task& t : p.tasks) {
    mb.insert({t.m0, t.m0 + t.mc});
    nb.insert({t.n0, t.n0 + t.nt});
  }
  const std::vector<int64_t> ms(mb.begin(), mb.end()), ns(nb.begin(), nb.end());
  std::vector<int> count((ms.size() - 1) * (ns.size() - 1) * p.slices, 0);
  for (const Task& t : p.tasks) {
    ASSERT_GE(t.slice, 0);
    ASSERT_LT(t.slice, p.slices) << where;
    for (size_t i = 0; i + 1 < ms.size(); ++i) {
      if (ms[i] < t.m0 || ms[i] >= t.m0 + t.mc) continue;
      for (size_t j = 0; j + 1 < ns.size(); ++j) {
        if (ns[j] < t.n0 || ns[j] >= t.n0 + t.nt) continue;
        ++count[(t.slice * (ms.size() - 1) + i) * (ns.size() - 1) + j];
      }
    }
  }
  for (size_t c = 0; c < count.size(); ++c) ASSERT_EQ(count[c], 1) << where << " grid cell " << c;
}

void expect_within_limits(const Plan& p, const std::string& where) {
  for (const Task& t : p.tasks) {
    ASSERT_GE(t.mc, 1) << where;
    ASSERT_LE(t.mc, 2047) << where;
    ASSERT_GE(t.nt, 32) << where;
    ASSERT_LE(t.nt, 8192) << where;
    ASSERT_EQ(t.n0 % 32, 0) << where;
    ASSERT_EQ(t.nt % 32, 0) << where;
    ASSERT_EQ(t.kt % 32, 0) << where;
    ASSERT_EQ(t.k0, t.slice * p.slice_k) << where;
    ASSERT_EQ(t.kt, std::min(p.slice_k, p.kp - t.k0)) << where;
    ASSERT_LT(t.core, p.cores_used) << where;
    if (t.schedule == Schedule::k_reduction) {
      ASSERT_EQ(p.slices, 1) << where;
      ASSERT_LE(t.kt, 4096) << where;
      ASSERT_LE(t.data_banks, 11u) << where;
      ASSERT_GE(t.weight_banks, 1u) << where;
      ASSERT_EQ(t.data_banks + t.weight_banks, 12u) << where;
      ASSERT_LE(banks_for_rows(t.mc, t.kt), t.data_banks) << where;
      ASSERT_EQ(t.feature_grains, std::min<int64_t>({t.mc + 1, resident_rows(t.kt), 1023}));
    } else {
      ASSERT_GT(p.kp, 4096) << where;
      ASSERT_EQ(t.data_banks, 0u) << where;
      ASSERT_EQ(t.weight_banks, 0u) << where;
      ASSERT_LE(t.kt, kInt8MaxSliceK) << where;
      ASSERT_LE(t.mc, resident_rows(t.kt)) << where;
      ASSERT_LE(t.mc, 32) << where;
      ASSERT_EQ(t.feature_grains, static_cast<uint32_t>(t.mc + 1)) << where;
    }
  }
}

// Grouped by core; within a core slice-major, then M-tile, then N-chunk.
void expect_order(const Plan& p, const std::string& where) {
  for (size_t i = 1; i < p.tasks.size(); ++i) {
    const Task& a = p.tasks[i - 1];
    const Task& b = p.tasks[i];
    ASSERT_LE(a.core, b.core) << where;
    if (a.core == b.core) {
      ASSERT_LT(std::tie(a.slice, a.m0, a.n0), std::tie(b.slice, b.m0, b.n0)) << where;
    }
  }
}

TEST(PlanSweep, CoverageLimitsOrderOverEdgeShapes) {
  const int64_t ms[] = {1, 2, 63, 64, 65, 127, 128, 129, 704, 705, 2047, 2048, 4100};
  const int64_t ks[] = {32, 96, 512, 1024, 2048, 3584, 4096, 4128, 6144, 8192, 18944};
  const int64_t ns[] = {32, 96, 2048, 8192, 8224, 16384};
  for (int64_t m : ms) {
    for (int64_t k : ks) {
      for (int64_t n : ns) {
        for (int cores = 1; cores <= 3; ++cores) {
          const std::string where = "M=" + std::to_string(m) + " K=" + std::to_string(k) +
                                    " N=" + std::to_string(n) + " cores=" + std::to_string(cores);
          const Plan p = plan_plan_of(m, k, n, cores);
          ASSERT_EQ(p.kp, (k + 31) / 32 * 32) << where;
          ASSERT_EQ(p.np, (n + 31) / 32 * 32) << where;
          ASSERT_EQ(p.mp, m) << where;
          ASSERT_EQ(p.slices, p.kp <= 4096 ? 1 : (p.kp + kInt8MaxSliceK - 1) / kInt8MaxSliceK) << where;
          expect_within_limits(p, where);
          expect_exact_cover(p, where);
          expect_order(p, where);
        }
      }
    }
  }
}

TEST(PlanCores, SplitByNIsEvenAndContiguous) {
  const Plan p = plan_plan_of(100, 512, 96 + 32 * 7, 3);  // np/32 = 10 units over 3 cores: 4, 3, 3
  ASSERT_EQ(p.cores_used, 3);
  std::vector<int64_t> width(3, 0), first(3, -1);
  for (const Task& t : p.tasks) {
    EXPECT_EQ(t.m0, 0);
    EXPECT_EQ(t.mc, 100);
    if (first[t.core] < 0) first[t.core] = t.n0;
    width[t.core] += t.nt;
  }
  EXPECT_EQ(width, (std::vector<int64_t>{128, 96, 96}));
  EXPECT_EQ(first, (std::vector<int64_t>{0, 128, 224}));
}

TEST(PlanCores, SplitByMWhenNIsNarrow) {
  const Plan p = plan_plan_of(4100, 512, 64, 3);  // np/32 = 2 < 3 cores; mc 704 -> 6 tiles
  ASSERT_EQ(p.cores_used, 3);
  std::vector<int64_t> rows(3, 0);
  for (const Task& t : p.tasks) {
    EXPECT_EQ(t.nt, 64);
    rows[t.core] += t.mc;
  }
  EXPECT_EQ(rows, (std::vector<int64_t>{1408, 1408, 4100 - 2816}));
  const Plan one = plan_plan_of(1, 512, 32, 3);  // one tile: one core used
  EXPECT_EQ(one.cores_used, 1);
  EXPECT_EQ(one.tasks.size(), 1u);
}

TEST(PlanCores, NChunksAtMost8192) {
  const Plan p = plan_plan_of(1, 2048, 16384, 1);
  ASSERT_EQ(p.tasks.size(), 2u);
  EXPECT_EQ(p.tasks[0].nt, 8192);
  EXPECT_EQ(p.tasks[1].n0, 8192);
  const Plan q = plan_plan_of(1, 2048, 8224, 1);  // 257 units -> 129 + 128
  ASSERT_EQ(q.tasks.size(), 2u);
  EXPECT_EQ(q.tasks[0].nt, 129 * 32);
  EXPECT_EQ(q.tasks[1].nt, 128 * 32);
  EXPECT_EQ(q.cols_per_task, 129 * 32);
}

TEST(PlanWideK, SlicesEvenedOut) {
  const Plan p = plan_plan_of(40, 4100, 64, 1);  // kp = 4128: 2080 + 2048 (not 2048, 2048, 32)
  ASSERT_EQ(p.slices, 2);
  EXPECT_EQ(p.slice_k, 2080);
  EXPECT_EQ(p.kp, 4128);
  EXPECT_EQ(p.mc, 32);
  ASSERT_EQ(p.tasks.size(), 4u);  // 2 slices x 2 M-tiles (32 + 8)
  EXPECT_EQ(p.tasks[0].mc, 32);
  EXPECT_EQ(p.tasks[1].mc, 8);
  EXPECT_EQ(p.tasks[2].kt, 2048);
  EXPECT_EQ(p.tasks[2].k0, 2080);
  EXPECT_EQ(p.tasks[2].schedule, Schedule::resident_rows);
  EXPECT_EQ(p.tasks[3].feature_grains, 9u);
  const Plan down = plan_plan_of(1, 8960, 1536, 1);  // Qwen2.5-1.5B's down: 3008 + 3008 + 2944
  ASSERT_EQ(down.slices, 3);
  EXPECT_EQ(down.slice_k, 3008);
  EXPECT_EQ(down.kp, 8960);
  EXPECT_EQ(down.tasks.back().kt, 2944);
}

// The int8 slice-width rule (plan.h slice_width): past full K, the fewest slices of at most
// kInt8MaxSliceK (the widest with the measured 2048's resident rows, cbuf_limits.h), all but the last
// round_up(ceil(kp / S), 32) wide and the last the rest (narrower, never empty); K unpadded
// beyond 32; each slice's tile within R of its width. fp16 keeps 2048 and a narrower last.
TEST(PlanWideK, Int8SliceWidthRule) {
  ASSERT_EQ(kInt8MaxSliceK, 3072);
  ASSERT_EQ(resident_rows(kInt8MaxSliceK), resident_rows(ork::hw::kMeasuredSliceK));
  for (int64_t k = 4097; k <= 40000; k += 29) {
    const std::string where = "K=" + std::to_string(k);
    const Plan p = plan_plan_of(64, k, 64, 1);
    const int64_t kp = (k + 31) / 32 * 32;
    const int64_t s = (kp + kInt8MaxSliceK - 1) / kInt8MaxSliceK;
    ASSERT_EQ(p.kp, kp) << where;
    ASSERT_EQ(p.slices, s) << where;
    ASSERT_EQ(p.slice_k, ((kp + s - 1) / s + 31) / 32 * 32) << where;
    ASSERT_LE(p.slice_k, kInt8MaxSliceK) << where;
    ASSERT_EQ(slice_width(DType::int8, kp), p.slice_k) << where;
    for (const Task& t : p.tasks) {
      ASSERT_EQ(t.kt, t.slice + 1 < s ? p.slice_k : kp - (s - 1) * p.slice_k) << where;
      ASSERT_GT(t.kt, 0) << where;
      ASSERT_EQ(t.kt % 32, 0) << where;
      ASSERT_LE(t.mc, resident_rows(t.kt)) << where;
      ASSERT_EQ(t.mc, 32) << where;
    }
  }
  auto fp16 = make_plan({1, 8960, 64}, {.dtype = DType::fp16, .cores = 1});
  ASSERT_TRUE(fp16);
  EXPECT_EQ(fp16->slice_k, kSliceK);
  EXPECT_EQ(fp16->slices, 5);
  EXPECT_EQ(slice_width(DType::fp16, 8960), kSliceK);
}

TEST(PlanKnobs, McCapHonoured) {
  for (int64_t k : {512, 2048, 8192}) {
    const Plan p = plan_plan_of(1000, k, 2048, 2, 31);
    EXPECT_EQ(p.mc, 31) << "K = " << k;
    for (const Task& t : p.tasks) EXPECT_LE(t.mc, 31);
  }
  EXPECT_EQ(plan_plan_of(1000, 8192, 64, 1, 16).mc, 16);
  EXPECT_EQ(plan_plan_of(1000, 512, 64, 1, 5000).mc, 704);  // a cap above the limit changes nothing
}

TEST(PlanOffsets, MatchLayoutFormulas) {
  const Plan p = plan_plan_of(100, 6144, 96, 1);  // wide K: 2 slices of 3072, N split none
  ASSERT_EQ(p.slices, 2);
  for (const Task& t : p.tasks) {
    EXPECT_EQ(p.a_offset(t), (t.k0 / 16) * 100 * 16 + t.m0 * 16);
    EXPECT_EQ(p.b_offset(t), t.slice * 96 * 3072 + t.n0 * t.kt);
    EXPECT_EQ(p.c_offset(t), (t.n0 / 4) * 100 * 16 + t.m0 * 16);
  }
  const Plan q = plan_plan_of(5, 64, 96, 3);  // split by N: n0 = 0, 32, 64
  ASSERT_EQ(q.tasks.size(), 3u);
  EXPECT_EQ(q.b_offset(q.tasks[2]), 64 * 64);
  EXPECT_EQ(q.c_offset(q.tasks[2]), 16 * 5 * 16);
  EXPECT_EQ(q.a_bytes(), 5 * 64);
  EXPECT_EQ(q.b_bytes(), 64 * 96);
  EXPECT_EQ(q.c_bytes_per_slice(), 5 * 96 * 4);
}

std::string error_of(Shape s, PlanOptions o = {}) {
  Result<Plan> r = make_plan(s, o);
  EXPECT_FALSE(r.ok());
  return r.ok() ? "" : r.error().message;
}

TEST(PlanErrors, NameTheProblem) {
  EXPECT_EQ(error_of({0, 32, 32}), "M = 0: must be >= 1");
  EXPECT_EQ(error_of({1, -5, 32}), "K = -5: must be >= 1");
  EXPECT_EQ(error_of({1, 32, 0}), "N = 0: must be >= 1");
  EXPECT_NE(error_of({int64_t{1} << 40, 32, 32}).find("M = 1099511627776: too large"), std::string::npos);
  EXPECT_NE(error_of({1, INT64_MAX, 32}).find("K = 9223372036854775807"), std::string::npos);
  EXPECT_NE(error_of({1 << 20, 1 << 13, 32}).find("feature A of M x K"), std::string::npos);
  EXPECT_NE(error_of({1, 1 << 17, 1 << 16}).find("weights B of K x N"), std::string::npos);
  EXPECT_NE(error_of({1 << 16, 32, 1 << 15}).find("output C"), std::string::npos);
  // Each buffer fits, the three together do not: 2 GiB of A + 4 GiB of C + 8 MiB of B.
  EXPECT_NE(error_of({1 << 19, 4096, 2048}).find("A + B + C together"), std::string::npos);
  EXPECT_EQ(error_of({1, 32, 32}, {.cores = 0}), "cores = 0: must be 1..3");
  EXPECT_EQ(error_of({1, 32, 32}, {.cores = 4}), "cores = 4: must be 1..3");
  EXPECT_NE(error_of({1, 32, 32}, {.mc_cap = -1}).find("mc_cap = -1"), std::string::npos);
  EXPECT_NE(error_of({1, 32, 32}, {.dtype = DType::int8, .fp16_out = true}).find("fp16 output with dtype int8"),
            std::string::npos);
  EXPECT_NE(error_of({1, 32, 32}, {.dtype = DType::int4, .fp16_out = true}).find("fp16 output with dtype int4"),
            std::string::npos);
  EXPECT_NE(error_of({1, 32, 32}, {.dtype = static_cast<DType>(9)}).find("dtype 9: unknown"), std::string::npos);
}

TEST(PlanDTypes, AtomsAndBanks) {
  EXPECT_EQ(weight_atom(DType::int8), 32);
  EXPECT_EQ(weight_atom(DType::fp16), 16);
  EXPECT_EQ(weight_atom(DType::int4), 64);
  EXPECT_EQ(feature_atom(DType::int8), 16);
  EXPECT_EQ(feature_atom(DType::fp16), 8);
  EXPECT_EQ(feature_atom(DType::int4), 32);
  // fp16 elements are 2 bytes: a 64-row group at K = 2048 is 256 KiB = 8 banks.
  EXPECT_EQ(data_banks_for(64, 2048, DType::fp16), 8);
  EXPECT_EQ(mg_max(2048, DType::fp16), 1);
  EXPECT_EQ(data_banks_for(64, 2048, DType::int4), 2);
}

}  // namespace
}  // namespace ork::matmul
