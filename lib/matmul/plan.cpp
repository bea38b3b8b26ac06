// The matmul planner: shape -> tasks, pure arithmetic, tested with no device.
// Rules and their sources: docs/matmul-schedule.md; register meaning: docs/regcmd-contract.md.
#include "lib/matmul/plan.h"

#include <algorithm>
#include <cerrno>
#include <string>

#include "lib/matmul/plan_split.h"
#include "lib/matmul/plan_stacked.h"

namespace ork::matmul {

// The atoms are the NPU's (driver/common/npu_layout.h; docs/regcmd-contract.md section 2):
// int8 (K/16,M,16) bytes, fp16 (K/8,M,8) halves, int4 (K/32,M,32) nibbles; weights
// (N/32,K/32,32,32), (N/16,K/32,16,32), (N/64,K/32,64,32). Output without fp16 C: int32,
// fp32, int16 partials (int4).
int64_t element_bits(DType dtype) { return dtype_info(dtype).bits; }
int64_t weight_atom(DType dtype) { return hw::weight_atom(element_bits(dtype)); }
int64_t feature_atom(DType dtype) { return hw::feature_atom(element_bits(dtype)); }
int64_t output_atom(DType dtype) { return hw::output_atom(hw::output_element_bits(element_bits(dtype), false)); }
int64_t output_element_bytes(DType dtype) { return hw::output_element_bits(element_bits(dtype), false) / 8; }

namespace {

int64_t round_up(int64_t v, int64_t a) { return (v + a - 1) / a * a; }
int64_t ceil_div(int64_t v, int64_t d) { return (v + d - 1) / d; }
int64_t bits_to_bytes(int64_t elements, DType dtype) {
  return elements * element_bits(dtype) / 8;
}

// Rows of one 64-row feature group: the K-reduction schedule stores the tile in groups of 64
// (driver/common/cbuf_limits.h).
constexpr int64_t kRowGroup = hw::kRowGroup;
// FEATURE_GRAINS is a 10-bit field (CONV_CON2 13:4, docs/hardware.md section 4).
constexpr int64_t kFeatureGrainsMax = 1023;

}  // namespace

int64_t data_banks_for(int64_t mc, int64_t kp, DType dtype) {
  return hw::data_banks_for_rows(mc, bits_to_bytes(kp, dtype));
}

int64_t mg_max(int64_t kp, DType dtype) {
  // Whole 64-row groups of the largest tile that leaves >= 1 weight bank (cbuf_limits.h).
  return hw::kreduction_rows_max(bits_to_bytes(kp, dtype)) / kRowGroup;
}

int64_t fp16_kreduction_rows(int64_t kt) {
  const int64_t rows = std::min(hw::kreduction_rows_max(bits_to_bytes(kt, DType::fp16)), kMaxRowsPerTask);
  return kt >= kFp16RowLimitFromK ? std::min(rows, kFp16ExactRows) : rows;  // hardware.md 10.4
}

int64_t slice_width(DType dtype) { return dtype_info(dtype).slice_k; }
int64_t slice_width(DType dtype, int64_t kp) {
  const DTypeInfo& d = dtype_info(dtype);
  if (kp <= d.full_k) return kp;
  if (!d.evened_slices) return d.slice_k;
  // Evened out, the last slice the rest: as few slices as slice_k-wide ones take, no K padded
  // (zero padding to S equal slices would stream more bytes for no fewer tasks:
  // docs/execution.md "Fewer tasks"), every slice's R that of the widest (cbuf_limits.h).
  // Rounded up to a multiple of the NPU's cores where the narrower slices keep that R, so a
  // decode matmul's slices spread evenly, one share a core (7B's down: 9 slices of 2112, 3 a
  // core, where 7 of 2720 left one core 3 of 7 and took 1.8 % more modelled time a token).
  const auto width = [&](int64_t slices) { return round_up(ceil_div(kp, slices), kKAlign); };
  const int64_t fewest = ceil_div(kp, d.slice_k);
  const int64_t spread = width(round_up(fewest, int64_t{kMaxCores}));
  return resident_rows(spread) == resident_rows(d.slice_k) ? spread : width(fewest);
}
int64_t full_k_limit(DType dtype) { return dtype_info(dtype).full_k; }

int64_t resident_rows(int64_t kt) { return hw::resident_rows(kt); }

int64_t Plan::a_bytes() const { return bits_to_bytes(a_rows() * (stacked ? slice_k : kp), dtype); }
int64_t Plan::b_bytes() const { return bits_to_bytes(np * kp, dtype); }
int64_t Plan::out_atom() const { return npu_fp16_out() ? hw::output_atom(16) : output_atom(dtype); }
int64_t Plan::out_bytes() const { return hw::kAtomBytes / out_atom(); }
int64_t Plan::c_bytes_per_slice() const { return c_rows() * c_cols() * out_bytes(); }

int64_t Plan::a_offset(const Task& t) const {
  // Element (m0, k0) of (K/fa, a_rows, fa): 16-byte atoms, k0 is a multiple of the atom.
  // Stacked: A' holds each slice's K from its depth 0, so a task starts at depth 0.
  const int64_t k = stacked ? t.k0 - t.slice * slice_k : t.k0;
  return (k / feature_atom(dtype)) * a_rows() * hw::kAtomBytes + t.m0 * hw::kAtomBytes;
}

int64_t Plan::b_offset(const Task& t) const {
  // Slices before t.slice are all slice_k wide; inside a slice the task's kernels start at
  // column n0 and are n0 * kt elements in ([np/wa][kt/32][wa][32] is column-block-major).
  // Stacked: n0 counts C' columns (s * np + n), so its slice's columns start at slice * np.
  const int64_t slice_base = bits_to_bytes(np * slice_k * t.slice, dtype);
  const int64_t n = stacked ? t.n0 - t.slice * np : t.n0;
  return slice_base + bits_to_bytes(n * t.kt, dtype);
}

int64_t Plan::c_rows() const {
  if (!stacked) return mp;
  int64_t rows = 0;
  for (const Task& t : tasks) rows = std::max(rows, t.mc);
  return rows;
}

// Stacked: a task's rows from row 0 of its columns' surfaces (plan.h), its own bytes, as no
// two tasks share a column of C'.
int64_t Plan::c_offset(const Task& t) const {
  return (t.n0 / out_atom()) * c_rows() * hw::kAtomBytes + (stacked ? 0 : t.m0) * hw::kAtomBytes;
}

namespace {

std::string fmt_dim(const char* name, int64_t v, const char* problem) {
  return std::string(name) + " = " + std::to_string(v) + ": " + problem;
}

Status check_dimension(const char* name, int64_t v) {
  if (v < 1) {
    return make_error(-EINVAL, fmt_dim(name, v, "must be >= 1"));
  }
  if (v >= kNpuWindowBytes) {
    return make_error(-E2BIG, fmt_dim(name, v, "too large: its buffers exceed the 4 GiB NPU address window"));
  }
  return {};
}

// Byte counts of A, B, and C (all slices) against the 4 GiB window. Dimensions are < 2^32, so
// every product fits in unsigned __int128 and nothing overflows before the check.
Status check_buffers(const Shape& s, const Plan& p) {
  using U = unsigned __int128;
  const U a = U(p.mp) * U(p.kp) * U(element_bits(p.dtype)) / 8;
  const U b = U(p.kp) * U(p.np) * U(element_bits(p.dtype)) / 8;
  const U c = U(p.mp) * U(p.np) * U(p.out_bytes()) * U(p.slices) * U(p.stacked ? p.slices : 1);
  const U window = U(kNpuWindowBytes);
  const auto dims = [&](const char* what) {
    return std::string(what) + " (M = " + std::to_string(s.m) + ", K = " + std::to_string(s.k) +
           ", N = " + std::to_string(s.n) + ")";
  };
  if (a > window) return make_error(-E2BIG, dims("feature A of M x K exceeds the 4 GiB NPU address window"));
  if (b > window) return make_error(-E2BIG, dims("weights B of K x N exceed the 4 GiB NPU address window"));
  if (c > window) return make_error(-E2BIG, dims("output C of M x N exceeds the 4 GiB NPU address window"));
  if (a + b + c > window) {
    return make_error(-E2BIG, dims("A + B + C together exceed the 4 GiB NPU address window"));
  }
  return {};
}

Status check_options(const PlanOptions& o) {
  if (static_cast<size_t>(o.dtype) >= weights_dtypes().size()) {
    return make_error(-EINVAL, "dtype " + std::to_string(static_cast<int>(o.dtype)) + ": unknown");
  }
  if (o.fp16_out && !takes_c(dtype_info(o.dtype), kCodeFp16)) {
    return make_error(-EINVAL, std::string("fp16 output with dtype ") + dtype_name(o.dtype) +
                                   ": only fp16 inputs can give fp16 C (int8/int4 give int32)");
  }
  if (o.cores < 1 || o.cores > kMaxCores) {
    return make_error(-EINVAL, fmt_dim("cores", o.cores, ("must be 1.." + std::to_string(kMaxCores)).c_str()));
  }
  if (o.mc_cap < 0) return make_error(-EINVAL, fmt_dim("mc_cap", o.mc_cap, "must be >= 0 (0 = bank limit)"));
  if (o.slice_k != 0 && o.dtype != DType::int4)
    return make_error(-EINVAL, fmt_dim("slice_k", o.slice_k, "only int4 weights choose their K-slice width (0 = the dtype's)"));
  if (o.stack && o.dtype != DType::int4)
    return make_error(-EINVAL, "stacked K-slices: only int4 plans stack their slices (int16 partials)");
  if (o.slice_k != 0 && (o.slice_k < kInt4SliceK || o.slice_k > kInt4MaxSliceK || o.slice_k % kKAlign != 0)) {
    const std::string range = "must be a multiple of " + std::to_string(kKAlign) + " in " +
                              std::to_string(kInt4SliceK) + ".." + std::to_string(kInt4MaxSliceK);
    return make_error(-EINVAL, fmt_dim("int4 slice_k", o.slice_k, range.c_str()));
  }
  return {};
}

// K range of the plan: one full-K slice when kp fits one task, else slices of slice_width
// (int8: evened out from kp; int4: the weights' own width when given, which is also their
// full-K ceiling). The last slice is the rest; ceil_div(kp, width) is at most the count the
// width was evened over, and the rest is never empty.
void choose_slices(Plan& p, const PlanOptions& o) {
  const int64_t full = o.slice_k != 0 ? o.slice_k : full_k_limit(p.dtype);
  if (p.kp <= full) {
    p.slice_k = p.kp;
    p.slices = 1;
  } else {
    p.slice_k = o.slice_k != 0 ? o.slice_k : slice_width(p.dtype, p.kp);
    p.slices = ceil_div(p.kp, p.slice_k);
  }
  // int4 weights of their own width past the floor (PlanOptions::slice_k > 480: a ceiling):
  // the slices evened out, Plan::slice_k = round_up(ceil(kp / S), 32), and Plan::kp zero
  // padded to S x that, so every slice is full and all of them stack (docs/execution.md
  // "Stacked K-slices"). The width stays within the given one, which the weights' bound
  // allows at any aligned offset (int4_bound.h), and the padding is under 32 K a slice; zero
  // weights and zero A there add exactly 0 to every sum. 0 and the floor keep 480-wide
  // slices and a narrower last one, the packed-weight blobs' layout (layout_source.h
  // kWeightLayoutVersion).
  if (o.slice_k > kInt4SliceK && p.slices > 1) {
    p.slice_k = round_up(ceil_div(p.kp, p.slices), kKAlign);
    p.kp = p.slices * p.slice_k;
  }
}

// int8 and int4: full K on the K-reduction schedule (mg_max*64 rows, hardware.md 10.2); slices on
// the resident-row schedule (R rows; sched=1 on slices wedges: hardware.md 10.4).
int64_t integer_rows(Plan& p) {
  if (p.slices == 1) {
    p.schedule = Schedule::k_reduction;
    return std::min(hw::kreduction_rows_max(bits_to_bytes(p.kp, p.dtype)), kMaxRowsPerTask);
  }
  p.schedule = Schedule::resident_rows;
  return resident_rows(p.slice_k);  // 32 at 1537 .. 3072 (int8), 128 at 480 (int4)
}

// fp16: the schedule with more rows per weight pass, under the published M-tile experiment's two fp16 rules
// (docs/dtypes.md "fp16"): rule 1 caps K-reduction tasks at 8 rows from kt = 2048
// (fp16_kreduction_rows); rule 2, the single-core guard, is that this choice depends on
// kt alone, never on the core count, so one core gets the same guarded schedule as three.
int64_t fp16_rows(Plan& p, int64_t cap) {
  const int64_t kt = p.slice_k;
  const int64_t rr = std::min(resident_rows(kt), cap);
  const int64_t kr = p.slices == 1 ? std::min(fp16_kreduction_rows(kt), cap) : 0;  // Category B
  if (kr > 0 && kr >= rr) {
    p.schedule = Schedule::k_reduction;
    return kr;
  }
  p.schedule = Schedule::resident_rows;
  return rr;
}

// Rows per M-tile and the schedule, for the padded shape (docs/matmul-schedule.md).
void choose_tile(Plan& p, const PlanOptions& o) {
  choose_slices(p, o);
  const int64_t cap = o.mc_cap > 0 ? o.mc_cap : kMaxRowsPerTask;
  const int64_t mc = p.dtype == DType::fp16 ? fp16_rows(p, cap) : std::min(integer_rows(p), cap);
  p.mc = std::min(mc, p.mp);
}

Task make_task(const Plan& p, const Range& rows, const Range& cols, int64_t slice) {
  Task t;
  t.m0 = rows.start;
  t.mc = rows.len;
  t.n0 = cols.start;
  t.nt = cols.len;
  t.slice = slice;
  t.k0 = slice * p.slice_k;
  t.kt = std::min(p.slice_k, p.kp - t.k0);
  if (p.schedule == Schedule::k_reduction) {
    t.schedule = Schedule::k_reduction;
    t.data_banks = static_cast<uint32_t>(data_banks_for(t.mc, t.kt, p.dtype));
    t.weight_banks = static_cast<uint32_t>(kCbufBanks) - t.data_banks;
    t.feature_grains = static_cast<uint32_t>(
        std::min({t.mc + 1, resident_rows(t.kt), kFeatureGrainsMax}));
  } else {
    t.schedule = Schedule::resident_rows;
    t.feature_grains = static_cast<uint32_t>(t.mc + 1);
  }
  return t;
}

// One core's tasks: slice-major, then M-tile, then N-chunk (docs/matmul-schedule.md).
void add_core_tasks(Plan& p, int core, const std::vector<Range>& row_tiles, const Range& cols) {
  const int64_t units = cols.len / weight_atom(p.dtype);
  const int64_t chunks = ceil_div(cols.len, kMaxColumnsPerTask);
  const std::vector<Range> col_chunks = split_even(units, chunks, weight_atom(p.dtype), cols.start);
  for (int64_t s = 0; s < p.slices; ++s) {
    for (const Range& rows : row_tiles) {
      for (const Range& c : col_chunks) {
        Task t = make_task(p, rows, c, s);
        t.core = core;
        p.tasks.push_back(t);
      }
    }
  }
}

void build_tasks(Plan& p, int cores) {
  const int64_t wa = weight_atom(p.dtype);
  const std::vector<Range> tiles = split_fixed(p.mp, p.mc);
  const int64_t col_units = p.np / wa;
  if (col_units >= cores) {
    // Split by N: every core sees all rows, a contiguous column range.
    const std::vector<Range> ranges = split_even(col_units, cores, wa, 0);
    for (int c = 0; c < cores; ++c) add_core_tasks(p, c, tiles, ranges[c]);
    p.cores_used = cores;
  } else {
    // Split by M: contiguous runs of M-tiles per core, as even as possible.
    const int64_t used = std::min<int64_t>(cores, static_cast<int64_t>(tiles.size()));
    const std::vector<Range> runs = split_even(static_cast<int64_t>(tiles.size()), used, 1, 0);
    for (int64_t c = 0; c < used; ++c) {
      const std::vector<Range> mine(tiles.begin() + runs[c].start,
                                    tiles.begin() + runs[c].start + runs[c].len);
      add_core_tasks(p, static_cast<int>(c), mine, Range{0, p.np});
    }
    p.cores_used = static_cast<int>(used);
  }
  p.cols_per_task = 0;
  for (const Task& t : p.tasks) p.cols_per_task = std::max(p.cols_per_task, t.nt);
}

// Full K-slices (the last one is narrower when slice_k does not divide kp).
int64_t full_slices(const Plan& p) { return p.kp / p.slice_k; }

// Stacking needs two full slices or more, and a task of the rows of every full slice within
// the resident-row budget (the schedule of every K-slice task, which a stacked task keeps:
// docs/execution.md "Stacked K-slices"). Decode and a few rows only.
bool stackable(const Plan& p, const PlanOptions& o) {
  if (!o.stack || p.dtype != DType::int4 || p.slices < 2 || full_slices(p) < 2) return false;
  const int64_t rows = full_slices(p) * p.mp;
  const int64_t cap = o.mc_cap > 0 ? o.mc_cap : kMaxRowsPerTask;
  return rows <= std::min(resident_rows(p.slice_k), cap);
}

Task stacked_task(const Plan& p, int core, int64_t m0, int64_t mc, const Range& cols, int64_t slice) {
  Task t;
  t.core = core;
  t.m0 = m0;
  t.mc = mc;
  t.n0 = cols.start;
  t.nt = cols.len;
  t.slice = slice;
  t.k0 = slice * p.slice_k;
  t.kt = std::min(p.slice_k, p.kp - t.k0);
  t.schedule = Schedule::resident_rows;
  t.feature_grains = static_cast<uint32_t>(t.mc + 1);
  return t;
}

// The stacked tasks: the full slices' S x np columns of C' split over the cores, each core's
// range in tasks of at most kMaxColumnsPerTask columns, each task on the rows of the slices
// its columns belong to; then the narrower last slice's columns, split the same way.
void build_stacked(Plan& p, int cores) {
  const int64_t wa = weight_atom(p.dtype), full = full_slices(p);
  const int64_t units = full * p.np / wa;
  const int64_t parts = std::min<int64_t>(cores, units);
  const std::vector<Range> ranges = split_even(units, parts, wa, 0);
  const bool narrow = full < p.slices;
  const int64_t last_units = p.np / wa, last_parts = std::min<int64_t>(parts, last_units);
  const std::vector<Range> last = split_even(last_units, last_parts, wa, full * p.np);
  for (int64_t c = 0; c < parts; ++c) {
    const Range& r = ranges[static_cast<size_t>(c)];
    for (const Range& ch : split_even(r.len / wa, ceil_div(r.len, kMaxColumnsPerTask), wa, r.start)) {
      const int64_t s_lo = ch.start / p.np, s_hi = (ch.start + ch.len - 1) / p.np;
      p.tasks.push_back(stacked_task(p, static_cast<int>(c), s_lo * p.mp, (s_hi - s_lo + 1) * p.mp, ch, s_lo));
    }
    if (!narrow || c >= last_parts) continue;
    const Range& lr = last[static_cast<size_t>(c)];
    for (const Range& ch : split_even(lr.len / wa, ceil_div(lr.len, kMaxColumnsPerTask), wa, lr.start))
      p.tasks.push_back(stacked_task(p, static_cast<int>(c), full * p.mp, p.mp, ch, full));
  }
  p.stacked = true;
  p.cores_used = static_cast<int>(parts);
  p.cols_per_task = 0;
  for (const Task& t : p.tasks) p.cols_per_task = std::max(p.cols_per_task, t.nt);
}

// Column units each core of a fewest-task stacked plan takes: core c at most counts[c] tasks
// of `per_task` units, the cores with the smallest caps (the last ones) given an equal share
// of what is left first, so the load is as even as the caps allow.
std::vector<int64_t> fewest_task_shares(int64_t units, const std::vector<Range>& counts, int64_t per_task) {
  std::vector<int64_t> take(counts.size(), 0);
  int64_t left = units;
  for (size_t i = counts.size(); i-- > 0;) {
    const int64_t open = static_cast<int64_t>(i) + 1;
    take[i] = std::min(counts[i].len * per_task, ceil_div(left, open));
    left -= take[i];
  }
  take[0] += left;  // 0 whenever the caps hold `units` (T was chosen so that they do)
  return take;
}

}  // namespace

Status stack_in_fewest_tasks(Plan& p, int cores) {
  if (!p.stacked || full_slices(p) != p.slices)
    return make_error(-EINVAL, "the fewest-task layout needs a stacked plan whose every K-slice is full");
  if (cores < 1 || cores > kMaxCores)
    return make_error(-EINVAL, fmt_dim("cores", cores, ("must be 1.." + std::to_string(kMaxCores)).c_str()));
  const int64_t wa = weight_atom(p.dtype), per_task = kMaxColumnsPerTask / wa;
  const int64_t units = p.slices * p.np / wa, tasks = ceil_div(units, per_task);
  const int64_t parts = std::min<int64_t>(cores, tasks);
  const std::vector<Range> counts = split_even(tasks, parts, 1, 0);
  const std::vector<int64_t> take = fewest_task_shares(units, counts, per_task);
  p.tasks.clear();
  int64_t at = 0;
  for (int64_t c = 0; c < parts; ++c) {
    const int64_t mine = take[static_cast<size_t>(c)];
    if (mine == 0) continue;
    for (const Range& ch : split_even(mine, std::min(counts[static_cast<size_t>(c)].len, mine), wa, at * wa)) {
      const int64_t s_lo = ch.start / p.np, s_hi = (ch.start + ch.len - 1) / p.np;
      p.tasks.push_back(stacked_task(p, static_cast<int>(c), s_lo * p.mp, (s_hi - s_lo + 1) * p.mp, ch, s_lo));
    }
    at += mine;
  }
  p.cores_used = static_cast<int>(parts);
  p.cols_per_task = 0;
  for (const Task& t : p.tasks) p.cols_per_task = std::max(p.cols_per_task, t.nt);
  return {};
}

Result<Plan> make_plan(const Shape& shape, const PlanOptions& options) {
  if (Status s = check_options(options); !s) return s.error();
  for (auto [name, v] : {std::pair{"M", shape.m}, {"K", shape.k}, {"N", shape.n}}) {
    if (Status s = check_dimension(name, v); !s) return s.error();
  }
  Plan p;
  p.shape = shape;
  p.dtype = options.dtype;
  p.mp = shape.m;  // NC1HWC2 needs no M padding (docs/regcmd-contract.md section 2)
  p.kp = round_up(shape.k, kKAlign);
  p.np = round_up(shape.n, weight_atom(options.dtype));
  p.fp16_out = options.fp16_out;
  choose_tile(p, options);
  p.stacked = stackable(p, options);
  if (Status s = check_buffers(shape, p); !s) return s.error();
  if (p.stacked) {
    p.tasks.clear();
    build_stacked(p, options.cores);
  } else {
    build_tasks(p, options.cores);
  }
  return p;
}

}  // namespace ork::matmul
