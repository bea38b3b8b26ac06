// The CBUF and task-size limits of one RK3588 NPU core, as the published observations fix
// them: the one description the planner (lib/matmul/plan.cpp) plans with and the emulator
// (driver/emu/npu/cbuf.cpp) enforces, so the two can never disagree about what the silicon
// runs. Every figure, its source and what remains a guess: docs/emulator.md "CBUF limits".
//
// Sources: MTX = mtx512/rk3588-npu (src/npu_matmul.c, meson.build test list, commit
// 4723947); ORK = oRKLLM/ork-driver's published experiments (oRKLLM/ork-driver:AGENTS.md
// "Weight-DMA amortization" and its follow-up: the M-tile table and the wide-K wedges); RKT-M =
// Mesa src/gallium/drivers/rocket/rkt_ml.h.
#pragma once

#include <cstdint>

namespace ork::hw {

inline constexpr int64_t kCbufBanks = 12;             // RKT-M rkt_ml.h, MTX npu_hw.h
inline constexpr int64_t kCbufBankBytes = 32 * 1024;  // 384 KiB per core

// The most feature rows one task takes: CNA DATA_SIZE0's DATAIN_HEIGHT is 11 bits
// (driver/regs/rk3588_npu.json; docs/hardware.md "Field widths", RKT-M registers.xml).
inline constexpr int64_t kMaxRowsPerTask = (int64_t{1} << 11) - 1;  // 2047

// The K-reduction schedule stores a feature tile of more than 64 rows in whole 64-row
// groups (ORK: mg_max*64 rows exact and mg_max*64 + 1 wrong at K = 512 / 1024 / 2048 /
// 3584 / 4096, e.g. 321 rows at K = 1024 fail although 321 KiB fit 11 banks byte for byte;
// only whole 64-row groups, 6 x 64 KiB = 12 banks, explain it). A tile of at most 64 rows is
// stored as its rows: MTX runs fp16 1 x 4096 x 4096 with ceil(M*K*2 / 32 KiB) = 1 data bank
// (a 64-row group would be 512 KiB, more than the whole CBUF).
inline constexpr int64_t kRowGroup = 64;

constexpr int64_t stored_rows(int64_t mc) {
  return mc <= kRowGroup ? mc : (mc + kRowGroup - 1) / kRowGroup * kRowGroup;
}
// Data banks a feature tile of mc rows of `row_bytes` needs (0 rows: 0 banks).
constexpr int64_t data_banks_for_rows(int64_t mc, int64_t row_bytes) {
  return (stored_rows(mc) * row_bytes + kCbufBankBytes - 1) / kCbufBankBytes;
}
// The most rows whose tile leaves at least one weight bank (11 data banks): mg_max*64 when
// a 64-row group fits (704 / 320 / 128 / 64 / 64 int8 rows at K = 512 / 1024 / 2048 / 3584
// / 4096, ORK's table), else the rows of one short group that fit.
constexpr int64_t kreduction_rows_max(int64_t row_bytes) {
  if (row_bytes <= 0) return 0;
  const int64_t budget = (kCbufBanks - 1) * kCbufBankBytes;
  const int64_t groups = budget / (kRowGroup * row_bytes);
  if (groups >= 1) return groups * kRowGroup;
  return budget / row_bytes;  // < 64 rows
}

// The resident-row budget R = pow2_floor(2 * cbuf / K), K in elements, with cbuf = 49152
// (ORK's constant): the only value of the form that gives every published R, 32 at K = 2048
// (the K-slice tile) and 16 / 8 / 4 at K = 6144 / 8192 / 18944 (ORK's wide-K follow-up).
// (2 * 32768, an earlier reading of the sources, gives 8 / 8 / 2 there.) 2 * cbuf anywhere in
// [96 KiB, 128 KiB) fits the figures; the smallest is taken (never kinder than the silicon).
inline constexpr int64_t kResidentBudget = 2 * 49152;

constexpr int64_t resident_rows(int64_t kt) {
  if (kt <= 0 || kt > kResidentBudget) return 0;
  const int64_t budget = kResidentBudget / kt;
  int64_t r = 1;
  while (r * 2 <= budget) r *= 2;
  return r;
}

// The K-slice width the board has run: ORK's wide-K path (hardware.md 10.4), K-slices of 2048 on
// the resident-row schedule, bit-exact at K = 6144 / 8192 / 18944 with about 28 rows a tile
// (R(2048) = 32).
inline constexpr int64_t kMeasuredSliceK = 2048;

// The widest task K whose resident-row budget is still R(kt): R(W) = R(kt) for every W in
// (kResidentBudget / (2 R), kResidentBudget / R], so the widest is kResidentBudget / R(kt).
constexpr int64_t widest_k_with_rows_of(int64_t kt) {
  const int64_t r = resident_rows(kt);
  return r == 0 ? 0 : kResidentBudget / r;
}
// The widest int8 K-slice with the measured slice's rows: 3072 (R = 32 for 1537..3072). A model
// prediction, not a measurement: the resident-row budget is the one fact the model says binds
// a K-slice task, and the board has verified only 2048-wide slices (tests-hw checks 3008;
// docs/hardware.md section 9).
inline constexpr int64_t kWideSliceK = widest_k_with_rows_of(kMeasuredSliceK);
static_assert(kWideSliceK == 3072 && resident_rows(kWideSliceK) == resident_rows(kMeasuredSliceK) &&
              resident_rows(kWideSliceK + 1) < resident_rows(kMeasuredSliceK));

// Full K in one task past 4096 (ORK: every measured wide-K full-K task wedged, at mc = R =
// 16 at K = 6144, mc = 32 at 6144, mc = R = 8 at 8192, mc = 64 at 18944; MTX runs fp16
// 1 x 8192 x 8192 in one task: mc = 1 < R). Model: a task of kt > kMaxFullK wedges when
// mc >= R(kt); below R it runs (measured only at mc = 1: a guess for 1 < mc < R).
inline constexpr int64_t kMaxFullK = 4096;

constexpr bool wide_k_wedges(int64_t mc, int64_t kt) { return kt > kMaxFullK && mc >= resident_rows(kt); }

// fp16 on the K-reduction schedule (sched=1) is exact for tiles of at most 8 rows and wrong
// from 9 rows at K = 2048 (docs/hardware.md section 10): the planner keeps such tiles at 8 rows from
// kt >= 2048, the emulator reproduces the wrong rows there (docs/emulator.md).
inline constexpr int64_t kFp16ExactRows = 8;
inline constexpr int64_t kFp16RowLimitFromK = 2048;

}  // namespace ork::hw
