// The matmul planner: pure arithmetic from a shape to tasks, tested as such. No device,
// no allocation beyond the plan itself. The emitter (emit.h) turns a Plan into regcmd.
// Rules and their sources: docs/matmul-schedule.md and docs/regcmd-contract.md.
#pragma once

#include "driver/common/cbuf_limits.h"
#include "driver/common/npu_cores.h"
#include "driver/common/npu_layout.h"
#include "driver/common/npu_window.h"
#include <cstdint>
#include <string>
#include <vector>

#include "driver/common/result.h"
#include "lib/matmul/dtype.h"

namespace ork::matmul {

// Per-dtype atoms (docs/regcmd-contract.md section 2), by driver/common/npu_layout.h.
// Feature and output atoms are 16 bytes.
int64_t element_bits(DType dtype);         // the dtype table's bits (dtype.h)
int64_t weight_atom(DType dtype);          // kernels per weight block: 32 int8, 16 fp16, 64 int4
int64_t feature_atom(DType dtype);         // K elements per 16-byte feature atom: 16 / 8 / 32
int64_t output_atom(DType dtype);          // N elements per 16-byte output atom: 4 (int32/fp32), 8 (int16)
int64_t output_element_bytes(DType dtype); // 4 int32 / fp32, 2 int16 partials (int4)
inline constexpr int64_t kKAlign = hw::kKBlock;  // K padding of every dtype (weight block is [..][32])
inline constexpr int64_t kNpuWindowBytes = static_cast<int64_t>(hw::kNpuWindowBytes);  // driver/common/npu_window.h

// Hardware constants (docs/regcmd-contract.md, docs/emulator.md "CBUF limits"). The
// CBUF's are driver/common/cbuf_limits.h, shared with the emulator.
inline constexpr int64_t kCbufBanks = hw::kCbufBanks;
inline constexpr int64_t kCbufBankBytes = hw::kCbufBankBytes;
inline constexpr int64_t kMaxRowsPerTask = hw::kMaxRowsPerTask;  // DATAIN_HEIGHT (cbuf_limits.h)
inline constexpr int64_t kMaxColumnsPerTask = 8192;   // DPU DATA_CUBE_CHANNEL is 13 bits (N-1)
inline constexpr int64_t kMaxFullK = hw::kMaxFullK;   // full K past 4096 wedges (cbuf_limits.h)
// fp16's K-slice width, the one the board has verified (hardware.md 10.4; cbuf_limits.h).
inline constexpr int64_t kSliceK = hw::kMeasuredSliceK;
// int8 K-slices: the fewest of at most this width, evened out (slice_width). The widest whose
// resident-row budget is the measured 2048's (R = 32; cbuf_limits.h kWideSliceK): a model
// prediction the board has yet to confirm (docs/hardware.md section 9, tests-hw/test_wide_slices).
inline constexpr int64_t kInt8MaxSliceK = hw::kWideSliceK;
static_assert(kInt8MaxSliceK % kKAlign == 0, "int8 K-slices are whole K blocks");
// fp16 on the K-reduction schedule: exact up to 8 rows, from kt >= 2048 (cbuf_limits.h).
inline constexpr int64_t kFp16ExactRows = hw::kFp16ExactRows;
inline constexpr int64_t kFp16RowLimitFromK = hw::kFp16RowLimitFromK;
// int4 x int4 tasks write int16 partials that saturate (docs/emulator.md "CORE"): with
// |a*b| <= 64 ((-8)*(-8)), a task of kt <= 511 can never reach 32767; 480 = the largest
// multiple of 32 below. int4 K-slices (and the int4 full-K ceiling) are 480 wide.
// That is the floor: weights whose own bound allows more (int4_bound.h) are sliced wider, up
// to the K one task of any dtype takes (cbuf_limits.h kMaxFullK), the width chosen when they
// are packed and kept with them (PlanOptions::slice_k).
inline constexpr int64_t kInt4MaxProduct = 64;
inline constexpr int64_t kInt4SliceK = 480;
inline constexpr int64_t kInt4MaxSliceK = kMaxFullK;
inline constexpr int kMaxCores = hw::kNpuCores;  // driver/common/npu_cores.h

enum class Schedule {
  k_reduction,    // sched=1: full-K M-tile, 0x1040 bank split, rows up to mg_max*64
  resident_rows,  // sched=0: K-slice, CBUF_CON0 = 0, rows up to R = pow2_floor(98304/kt) (cbuf_limits.h)
};

struct Shape {
  int64_t m = 0, k = 0, n = 0;
};

struct PlanOptions {
  DType dtype = DType::int8;
  int cores = kMaxCores;  // 1..3
  int64_t mc_cap = 0;     // cap on rows per M-tile (e.g. 31, the old cap); 0 = bank limit
  bool fp16_out = false;  // fp16 only: C in fp16 (DPU FP32TOFP16 on one slice, else host RNE)
  // int4 only: the K-slice width (and full-K ceiling) the weights were packed with, a
  // multiple of kKAlign in [kInt4SliceK, kInt4MaxSliceK], chosen from their bound
  // (int4_bound.h); 0 = the dtype's (480). The native layout depends on it.
  int64_t slice_k = 0;
  // int4 only: run the full K-slices stacked (Plan::stacked), when they fit: each task then
  // multiplies the rows of several slices by the columns of several slices in one pass.
  bool stack = false;
};

struct Task {
  int core = 0;
  int64_t m0 = 0, mc = 0;  // rows
  int64_t n0 = 0, nt = 0;  // columns, in padded coordinates (n0 aligned to the weight atom)
  int64_t k0 = 0, kt = 0;  // K range (padded)
  int64_t slice = 0;       // index of the K-slice; its partial sums go to output `slice`
                           // (stacked plans: the slice of its first column; one output)
  Schedule schedule = Schedule::k_reduction;
  uint32_t data_banks = 0, weight_banks = 0;  // CBUF_CON0; 0/0 on resident_rows
  uint32_t feature_grains = 0;                // CONV_CON2 FEATURE_GRAINS (a hint)
};

// Buffers a plan needs (bytes), and where each task's operands sit in them. Weights are
// packed per K-slice: slice s holds [np/wa][slice_k/32][wa][32] (wa = weight atom, 32 for
// int8, 16 for fp16, 64 for int4), so a task's weights are one contiguous range.
//
// Stacked (int4; docs/execution.md "Stacked K-slices"): the S full slices' weights, slice
// after slice, are exactly the weights of one slice_k-deep matmul of S x np columns (column
// s*np + n is slice s's column n), so one task takes columns of several slices. A becomes
// A' of S x mp rows and slice_k depth (row s*mp + m = A[m, s*slice_k ..], zero past K) and
// C' one output of S x mp rows and S x np columns, int16: a task multiplies the rows of
// the slices its columns belong to, and C[m, n] = sum over s of C'[s*mp + m, s*np + n] (the
// diagonal blocks; the rest is written and never read). A task's m0 and n0 are then rows of
// A' / C' and columns of C'. A last, narrower slice keeps tasks of its own (its weights are
// shallower), on its rows and columns of A' and C'. C' is stored by task, not as S x mp rows
// a surface: its surfaces are c_rows() deep, the most rows one task multiplies, and a task
// writes its rows from row 0 of its own columns' surfaces, so C'[s*mp + m, J] sits at row
// s*mp + m - m0 of the task holding column J (c_offset). With every slice's rows in every
// surface, a decode's unpack read one 16-byte atom per 15 x 16 bytes of C' at 1 x 18944 x 3584
// (1.6 MB, fifteen slices, seven tasks) where it now reads one per 4 x 16 (430 KB: a task
// spans up to four slices; docs/execution.md "Stacked K-slices").
//
// The members are in two runs: what only planning and building a context read first, then
// what a cached call reads (packing A, unpacking C: the shape, the padded sizes, the slices,
// the dtype), 72 bytes together, so that a context can keep them in one and a bit cache
// lines of its own (context.h Context; docs/library.md "What grows with the model's size").
struct Plan {
  int64_t mc = 0;              // rows per M-tile
  int64_t cols_per_task = 0;
  int cores_used = 1;
  Schedule schedule = Schedule::k_reduction;  // of every task (docs/dtypes.md per dtype)
  std::vector<Task> tasks;     // grouped by core, in submission order within a core
  // Read by every call from here on.
  Shape shape;                 // as the user gave it
  int64_t mp = 0, kp = 0, np = 0;  // padded shape (zero padding, never visible in C)
  int64_t slice_k = 0;         // K per slice (== kp when full-K)
  int64_t slices = 1;          // number of K-slices (1 when full-K)
  DType dtype = DType::int8;
  bool fp16_out = false;       // the caller wants fp16 C (fp16 plans only)
  bool stacked = false;        // the slices run stacked (above)

  // What the NPU writes: fp16 only when one slice (the DPU converts once, FP32TOFP16_EN);
  // with several slices fp32 partials, added on the host and rounded once (docs/dtypes.md).
  bool npu_fp16_out() const { return fp16_out && slices == 1; }
  int64_t out_atom() const;        // C2 of the NPU output: 4 (int32/fp32), 8 (int16/fp16)
  int64_t out_bytes() const;       // bytes per NPU output element: 4, or 2 (int16/fp16)

  int64_t a_rows() const { return stacked ? slices * mp : mp; }  // rows of the feature buffer
  int64_t c_rows() const;  // rows of an output surface: mp; stacked, the most rows a task has
  int64_t c_cols() const { return stacked ? slices * np : np; }  // columns of an output buffer
  int64_t a_bytes() const;             // feature, native layout, a_rows() x kp (stacked: x slice_k)
  int64_t b_bytes() const;             // weights, all slices
  int64_t c_bytes_per_slice() const;   // NPU output of one slice, mp x np x out_bytes() (stacked: all, C')
  int64_t b_offset(const Task& t) const;   // byte offset of t's weights in the B buffer
  int64_t a_offset(const Task& t) const;   // byte offset of element (m0, k0) in A
  int64_t c_offset(const Task& t) const;   // byte offset of (m0, n0) in t's slice output (stacked: of (0, n0))
};

// One part of a C written straight to its own output, no M x N C between (execute_any's
// `columns`, lib/matmul/layout_host.h unpack_c_columns): C's columns [column, column + n) to
// `c` (M x n, row-major, execute_any's C formats); `c` null: not unpacked. A fused matmul's
// members each take theirs (lib/exec/fusion.h).
struct ColumnPart {
  int64_t column = 0, n = 0;
  void* c = nullptr;
};

// Rows of the largest 64-row-group count whose feature tile leaves >= 1 weight bank
// (int8 K-reduction schedule). 704 / 320 / 128 / 64 / 64 at K = 512 / 1024 / 2048 / 3584 / 4096.
int64_t mg_max(int64_t kp, DType dtype);
// Data banks a feature tile of mc rows x kp needs on the K-reduction schedule.
int64_t data_banks_for(int64_t mc, int64_t kp, DType dtype);
// Resident-row budget R = pow2_floor(2 * 49152 / kt) (driver/common/cbuf_limits.h).
int64_t resident_rows(int64_t kt);

// fp16 rows per task on the K-reduction schedule at task K `kt`: the bank limit, and at
// kt >= 2048 at most 8 (docs/hardware.md 10.4: exact mc <= 8, wrong from 9). 0 = the schedule
// cannot hold even one 64-row group (fp16 kt > 2816).
int64_t fp16_kreduction_rows(int64_t kt);
// The widest K-slice of a dtype when K does not fit one task: 3072 (int8), 2048 (fp16), 480
// (int4); the dtype table's slice_k.
int64_t slice_width(DType dtype);
// The K-slice width of a plan of padded K `kp` (PlanOptions::slice_k 0): kp when it fits one
// task; int8 (the table's evened_slices) the fewest slices of at most slice_width, in a
// multiple of the cores, evened out: S = ceil(kp / 3072) rounded up to a multiple of 3, slices
// of round_up(ceil(kp / S), 32), the last the rest (narrower, K not padded: 8960 = 3008 +
// 3008 + 2944; 18944 = 8 x 2112 + 2048); fp16 and int4 slice_width, the last the rest.
int64_t slice_width(DType dtype, int64_t kp);
// The widest K one task of `dtype` takes without slicing: 4096 (int8, fp16), 480 (int4); the
// dtype table's full_k.
int64_t full_k_limit(DType dtype);

Result<Plan> make_plan(const Shape& shape, const PlanOptions& options);

}  // namespace ork::matmul
