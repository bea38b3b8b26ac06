// The per-call host layout work of every dtype (layout_host.h). Formulas: docs/regcmd-contract.md
// section 2 (feature_index / output_index in layout.cpp are the same facts per element).
#include "lib/matmul/layout_host.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "driver/common/npu_layout.h"
#include "lib/matmul/layout_host_sum.h"
#include "lib/ref/workers.h"

namespace ork::matmul {
namespace {

// Every dtype's feature and output atom: 16 bytes (driver/common/npu_layout.h).
constexpr int64_t kHostAtom = hw::kAtomBytes;
static_assert(kHostAtom == 16);

constexpr int64_t kRowBlock = kHostRowBlock;

// The whole atoms of kRows rows (row r at rows + r * stride) of `surfaces` surfaces, each
// surface's atoms at out + s * step: the row count a constant, so each surface is kRows
// fixed 16-byte copies, no branch. With the row count a variable and the K tail tested per
// atom, fp16's A at 4 x 18944 (9,472 atoms) took 9 us a call, twice int8's, at about 1 ns an
// atom whatever its bytes (docs/matmul-schedule.md "fp16 at small M").
template <int kRows>
void pack_whole_atoms(const uint8_t* rows, int64_t stride, int64_t surfaces, int64_t step, uint8_t* out) {
  for (int64_t s = 0; s < surfaces; ++s, rows += kHostAtom, out += step)
#pragma GCC unroll 8
    for (int r = 0; r < kRows; ++r) std::memcpy(out + r * kHostAtom, rows + r * stride, kHostAtom);
}
using PackWholeFn = void (*)(const uint8_t*, int64_t, int64_t, int64_t, uint8_t*);
constexpr std::array<PackWholeFn, kRowBlock + 1> kPackWhole = {
    nullptr, pack_whole_atoms<1>, pack_whole_atoms<2>, pack_whole_atoms<3>, pack_whole_atoms<4>,
    pack_whole_atoms<5>, pack_whole_atoms<6>, pack_whole_atoms<7>, pack_whole_atoms<8>};

// Rows [m0, m1) of A (at most kRowBlock), row m at rows + (m - m0) * stride, into their atoms
// of every surface: the surfaces wholly inside the row, then the K tail's.
void pack_host_block(const uint8_t* rows, int64_t stride, int64_t row_bytes, int64_t m0, int64_t m1, int64_t mp,
                int64_t kp_bytes, uint8_t* out) {
  const int64_t surfaces = kp_bytes / kHostAtom, whole = std::min(surfaces, row_bytes / kHostAtom);
  kPackWhole[static_cast<size_t>(m1 - m0)](rows, stride, whole, mp * kHostAtom, out + m0 * kHostAtom);
  for (int64_t s = whole; s < surfaces; ++s) {
    const int64_t k0 = s * kHostAtom;
    const int64_t n = std::clamp<int64_t>(row_bytes - k0, 0, kHostAtom);
    uint8_t* dst = out + s * mp * kHostAtom + m0 * kHostAtom;
    const uint8_t* row = rows + k0;
    for (int64_t m = m0; m < m1; ++m, dst += kHostAtom, row += stride) {  // real values, then zeros up to kp
      if (n > 0) std::memcpy(dst, row, static_cast<size_t>(n));
      std::memset(dst + n, 0, static_cast<size_t>(kHostAtom - n));
    }
  }
}

// `len` int4 elements of the packed stream `a` from element `start` on, into whole bytes at
// dst (ceil(len/2) bytes, element 0 in the low nibble of dst[0]; an odd len's last high
// nibble 0). Element i is the low nibble of byte i/2 when i is even (int4.h), so an odd
// start shifts every byte by a nibble. Reads no byte past the one holding element start+len-1.
void copy_int4_run(const uint8_t* a, int64_t start, int64_t len, uint8_t* dst) {
  const int64_t whole = len / 2;
  const uint8_t* src = a + start / 2;
  if (start % 2 == 0) {
    std::memcpy(dst, src, static_cast<size_t>(whole));
    if (len % 2 != 0) dst[whole] = static_cast<uint8_t>(src[whole] & 0x0f);
    return;
  }
  // element 2j is the high nibble of src[j], element 2j+1 the low one of src[j+1]
  for (int64_t j = 0; j < whole; ++j) dst[j] = static_cast<uint8_t>((src[j] >> 4) | (src[j + 1] << 4));
  if (len % 2 != 0) dst[whole] = static_cast<uint8_t>(src[whole] >> 4);
}

// int4 row m of an odd K, realigned to whole bytes: ceil(K/2) bytes, the last high nibble 0
// (K padding). Row m starts at element m*K.
void realign_int4_row(const uint8_t* a, int64_t k, int64_t m, uint8_t* dst) { copy_int4_run(a, m * k, k, dst); }

// fn(first, last) on rows of an M-row matrix: two threads, a half of the rows each (whole
// 8-row blocks), when the work moves at least kHalvesMinBytes (read + written); below that
// one thread is quicker than the hand-off. The NPU is idle meanwhile. The hand-off wakes a
// kept worker that is usually asleep: a call's pack follows the last call's device time and
// its unpack this call's, both longer than the worker's polling (lib/ref/workers.cpp). So
// pack, unpack and the fp16 rounding share one threshold in bytes moved, whatever the dtype:
// the unpack's, int8's measured 8 MiB (C 4 MiB each way). The pack's own was 2 MiB (A 1 MiB
// each way), which fp16's A, twice int8's, crossed at M = 256 (1.9-2.1x int8's CPU time a
// call there); re-measured with the worker asleep, two threads packed no faster than one up
// to 8 MiB of A on a loaded 2-vCPU machine (ork_bench, "pack_a 2 threads";
// docs/matmul-schedule.md "Host cost per dtype").
constexpr int64_t kHalvesMinBytes = int64_t{8} << 20;
constexpr size_t kUnpackNearSlices = 16;

// A call's few pointers or task records on the stack (SlicePointers: up to kUnpackNearSlices,
// a decode shape's slices, every stacked plan at the 7B shapes: fifteen at 18944 x 3584), a
// vector past that, so such a call allocates nothing.
template <class T, size_t N>
struct NearOrFar {
  std::array<T, N> near{};
  std::vector<T> far;
  std::span<T> of(size_t n) {
    if (n <= near.size()) return {near.data(), n};
    far.resize(n);
    return {far.data(), n};
  }
};
using SlicePointers = NearOrFar<const uint8_t*, kUnpackNearSlices>;

template <class Fn>
void on_row_halves(int64_t m, int64_t bytes, int64_t min_bytes, Fn fn) {
  if (bytes < min_bytes || m < 2 * kRowBlock) return fn(int64_t{0}, m);  // one thread
  const int64_t half = m / 2 / kRowBlock * kRowBlock;
  std::atomic<int> next{0};
  ref::detail::run_claiming(2, [&](int) {  // a helper that comes late finds both halves taken
    for (int i; (i = next.fetch_add(1)) < 2;) i == 0 ? fn(int64_t{0}, half) : fn(half, m);
  });
}

template <class Native, class Out>
Status unpack_group_as(const Plan& p, std::span<const uint8_t* const> slices, bool first, Out* c) {
  // The slices' pointers as Native: on the stack for a decode shape's few, so a call
  // allocates nothing.
  std::array<const Native*, kUnpackNearSlices> near{};
  std::vector<const Native*> far(slices.size() > near.size() ? slices.size() : 0);
  const Native** s = slices.size() > near.size() ? far.data() : near.data();
  for (size_t i = 0; i < slices.size(); ++i) s[i] = reinterpret_cast<const Native*>(slices[i]);
  const auto count = static_cast<int64_t>(slices.size());
  const int64_t m = p.shape.m, n = p.shape.n;
  const auto bytes = static_cast<int64_t>((static_cast<size_t>(count) * sizeof(Native) + sizeof(Out)) *
                                          static_cast<size_t>(m * n));
  on_row_halves(m, bytes, kHalvesMinBytes,
                [&](int64_t r0, int64_t r1) { unpack_rows(s, count, p, c, first, r0, r1); });
  return {};
}

}  // namespace

void pack_atom_rows(const uint8_t* a, int64_t row_bytes, int64_t mp, int64_t kp_bytes, uint8_t* out, int64_t first,
                    int64_t last) {
  for (int64_t m0 = first; m0 < last; m0 += kRowBlock) {
    const int64_t m1 = std::min(last, m0 + kRowBlock);
    pack_host_block(a + m0 * row_bytes, row_bytes, row_bytes, m0, m1, mp, kp_bytes, out);
  }
}

void pack_int4_rows(const uint8_t* a, int64_t k, int64_t mp, int64_t kp, uint8_t* out, int64_t first, int64_t last) {
  if (k % 2 == 0) return pack_atom_rows(a, k / 2, mp, kp / 2, out, first, last);
  const int64_t bytes = (k + 1) / 2;
  std::vector<uint8_t> block(static_cast<size_t>(kRowBlock * bytes));
  for (int64_t m0 = first; m0 < last; m0 += kRowBlock) {
    const int64_t m1 = std::min(last, m0 + kRowBlock);
    for (int64_t m = m0; m < m1; ++m) realign_int4_row(a, k, m, block.data() + (m - m0) * bytes);
    pack_host_block(block.data(), bytes, bytes, m0, m1, mp, kp / 2, out);
  }
}

// The slice sum per ISA (layout_host_sum.h), the best this CPU has unless a test forced one.
#define ORK_UNPACK_ROWS(Native, Out)                                                                                   \
  void unpack_rows(const Native* const* s, int64_t count, const Plan& p, Out* c, bool first, int64_t r0, int64_t r1) { \
    unpack_rows_on(sum_isa(), s, count, p, c, first, r0, r1);                                                          \
  }
ORK_UNPACK_ROWS(int32_t, int32_t)
ORK_UNPACK_ROWS(int16_t, int32_t)
ORK_UNPACK_ROWS(float, float)
ORK_UNPACK_ROWS(uint16_t, uint16_t)
#undef ORK_UNPACK_ROWS

// The dtype table's pack_a_rows: int8 and fp16 rows are whole bytes (K and 2K of them); int4
// rows may start on a high nibble (odd K).
void pack_a_rows_bytes(const Plan& p, const uint8_t* a, uint8_t* out, int64_t first, int64_t last) {
  const int64_t bits = element_bits(p.dtype);
  pack_atom_rows(a, p.shape.k * bits / 8, p.mp, p.kp * bits / 8, out, first, last);
}
void pack_a_rows_int4(const Plan& p, const uint8_t* a, uint8_t* out, int64_t first, int64_t last) {
  pack_int4_rows(a, p.shape.k, p.mp, p.kp, out, first, last);
}

// The dtype table's unpack_c: int32 (int8), int16 partials widened (int4), and fp16's three
// outputs (fp32; fp16 the NPU converted; fp32 partials for an fp16 C the caller rounds).
Status unpack_c_int8_group(const Plan& p, std::span<const uint8_t* const> slices, bool copy, void* c,
                           std::span<float>) {
  return unpack_group_as<int32_t>(p, slices, copy, static_cast<int32_t*>(c));
}
Status unpack_c_int4_group(const Plan& p, std::span<const uint8_t* const> slices, bool copy, void* c,
                           std::span<float>) {
  return unpack_group_as<int16_t>(p, slices, copy, static_cast<int32_t*>(c));
}
Status unpack_c_fp16_group(const Plan& p, std::span<const uint8_t* const> slices, bool copy, void* c,
                           std::span<float> acc) {
  if (p.npu_fp16_out()) return unpack_group_as<uint16_t>(p, slices, copy, static_cast<uint16_t*>(c));
  if (!p.fp16_out) return unpack_group_as<float>(p, slices, copy, static_cast<float*>(c));
  if (Status s = check_size("fp32 partial sums of an fp16 C", static_cast<int64_t>(acc.size()), p.shape.m * p.shape.n); !s)
    return s;
  return unpack_group_as<float>(p, slices, copy, acc.data());
}

namespace {

// A stacked plan's A' (plan.h): row s*mp + m holds A[m, s*slice_k ..], zero past K, in its
// atoms (a_rows() rows; an atom is 32 int4 elements), each atom straight from A: a row that
// starts on a whole byte is 16-byte copies. Through a row-major copy of A' first, every call
// allocated and zeroed it (37 KB at 4 x 18944, fourteen slices) and touched it twice; its
// fresh pages' faults showed in the int4 call's profile (docs/matmul-schedule.md "Short
// blocks"). Stacked plans have at most the resident-row budget of rows (128 at
// slice_k 480), so one thread.
constexpr int64_t kAtomInt4 = kHostAtom * 2;
static_assert(kKAlign % kAtomInt4 == 0);  // slice_k is a multiple of kKAlign: whole atoms

// Row `row` of A' (len elements of A from element `start`, then zeros up to w) into its atoms.
void pack_stacked_row(const uint8_t* a, int64_t start, int64_t len, int64_t w, int64_t rows, int64_t row,
                      uint8_t* out) {
  const int64_t whole = len / kAtomInt4;
  uint8_t* dst = out + row * kHostAtom;
  const int64_t step = rows * kHostAtom;  // from one atom of the row to the next
  if (start % 2 == 0) {
    for (int64_t q = 0; q < whole; ++q) std::memcpy(dst + q * step, a + start / 2 + q * kHostAtom, kHostAtom);
  } else {
    for (int64_t q = 0; q < whole; ++q) copy_int4_run(a, start + q * kAtomInt4, kAtomInt4, dst + q * step);
  }
  for (int64_t q = whole; q < w / kAtomInt4; ++q) {  // the K tail: real values, then zeros
    std::memset(dst + q * step, 0, kHostAtom);
    const int64_t n = std::clamp<int64_t>(len - q * kAtomInt4, 0, kAtomInt4);
    if (n > 0) copy_int4_run(a, start + q * kAtomInt4, n, dst + q * step);
  }
}

Status pack_a_stacked(const Plan& p, const uint8_t* a, uint8_t* out) {
  const int64_t m = p.shape.m, k = p.shape.k, w = p.slice_k, rows = p.a_rows();
  for (int64_t s = 0; s < p.slices; ++s) {
    const int64_t k0 = s * w, len = std::min(w, k - k0);
    for (int64_t r = 0; r < m; ++r)
      pack_stacked_row(a, r * k + k0, len, w, rows, s * p.mp + r, out);
  }
  return {};
}

}  // namespace

namespace {

// A stacked plan's C' by task (plan.h): each task's first column and first row, ordered by
// column (no two tasks share a column), and the surfaces' depth (Plan::c_rows).
// 64 tasks on the stack: the 7B shapes' stacked plans have 7 to 16.
struct TaskStart {
  int64_t n0 = 0, m0 = 0;
};
constexpr size_t kNearTasks = 64;

struct StackedOutput {
  NearOrFar<TaskStart, kNearTasks> store;
  std::span<TaskStart> starts;
  int64_t depth = 0;
  explicit StackedOutput(const Plan& p) : starts(store.of(p.tasks.size())), depth(p.c_rows()) {
    for (size_t i = 0; i < p.tasks.size(); ++i) starts[i] = {p.tasks[i].n0, p.tasks[i].m0};
    std::sort(starts.begin(), starts.end(), [](TaskStart a, TaskStart b) { return a.n0 < b.n0; });
  }
  size_t holding(int64_t column) const {  // the task that wrote C' 's `column`
    const auto after = std::upper_bound(starts.begin(), starts.end(), column,
                                        [](int64_t c, TaskStart t) { return c < t.n0; });
    return static_cast<size_t>(after - starts.begin()) - 1;
  }
  // The same from a task at or before it (the pieces go left to right: a few steps at most).
  size_t holding_from(size_t t, int64_t column) const {
    while (t + 1 < starts.size() && starts[t + 1].n0 <= column) ++t;
    return t;
  }
};

// Columns [column, column + n) of C (int4, int32) from a stacked plan's C' at `out`, C's rows
// ldc elements apart: cut where a task's columns start in some slice's block, so that over a
// piece every slice's diagonal block is one task's rows, one row of surfaces depth x 16
// bytes apart; each piece the sum of an n-column plan's slices (its surfaces `depth` deep),
// straight to the slice sum on one thread (a stacked plan has at most 64 rows: under the
// two-thread threshold). Per piece only the pointers are new: through unpack_group_as, and
// with a division per slice and piece, the seven pieces at 1 x 18944 x 3584 cost 0.8 us a
// call more than one piece of the same bytes.
void unpack_stacked_columns(const Plan& p, const uint8_t* out, int64_t column, int64_t n, int32_t* c, int64_t ldc) {
  const StackedOutput tasks(p);
  NearOrFar<int64_t, kNearTasks + 2> cut_store;
  const std::span<int64_t> cuts = cut_store.of(tasks.starts.size() + 2);
  size_t cut_count = 0;
  cuts[cut_count++] = column;
  cuts[cut_count++] = column + n;
  for (const TaskStart& t : tasks.starts)
    if (const int64_t at = t.n0 % p.np; at > column && at < column + n) cuts[cut_count++] = at;
  std::sort(cuts.begin(), cuts.begin() + static_cast<std::ptrdiff_t>(cut_count));
  const auto last = std::unique(cuts.begin(), cuts.begin() + static_cast<std::ptrdiff_t>(cut_count));
  NearOrFar<const int16_t*, kUnpackNearSlices> pointers;
  const std::span<const int16_t*> diagonal = pointers.of(static_cast<size_t>(p.slices));
  NearOrFar<size_t, kUnpackNearSlices> task_store;  // per slice, the task of the piece's first column
  const std::span<size_t> task = task_store.of(static_cast<size_t>(p.slices));
  for (int64_t s = 0; s < p.slices; ++s) task[static_cast<size_t>(s)] = tasks.holding(s * p.np + column);
  const int64_t atom = p.out_atom(), block_surfaces = p.np / atom;
  const auto* base = reinterpret_cast<const int16_t*>(out);
  Plan view;
  view.shape = p.shape;
  view.dtype = p.dtype;
  view.mp = tasks.depth;
  view.kp = p.kp;
  view.slice_k = p.slice_k;
  view.slices = p.slices;
  const SumIsa isa = sum_isa();
  for (auto b = cuts.begin(); b + 1 < last; ++b) {
    const int64_t lo = *b, hi = *(b + 1), lo_surface = lo / atom;
    for (int64_t s = 0; s < p.slices; ++s) {
      size_t& t = task[static_cast<size_t>(s)];
      t = tasks.holding_from(t, s * p.np + lo);  // the task holding C' 's column s*np + lo
      const int64_t surface = s * block_surfaces + lo_surface;
      diagonal[static_cast<size_t>(s)] = base + (surface * tasks.depth + s * p.mp - tasks.starts[t].m0) * atom;
    }
    view.shape.n = hi - lo;
    view.np = (hi - lo + atom - 1) / atom * atom;
    unpack_rows_on(isa, diagonal.data(), p.slices, view, c + (lo - column), true, 0, p.shape.m, ldc);
  }
}

}  // namespace

Status unpack_c_stacked(const Plan& p, const uint8_t* out, void* c, std::span<float>) {
  if (!p.stacked || p.dtype != DType::int4)
    return make_error(-EINVAL, "unpack_c_stacked: the plan is not a stacked int4 plan");
  unpack_stacked_columns(p, out, 0, p.shape.n, static_cast<int32_t*>(c), p.shape.n);
  return {};
}

Status pack_a_native(const Plan& p, const void* a, std::span<uint8_t> out) {
  if (Status s = check_size("native A (bytes)", static_cast<int64_t>(out.size()), p.a_bytes()); !s) return s;
  if (p.stacked) return pack_a_stacked(p, static_cast<const uint8_t*>(a), out.data());
  const auto* src = static_cast<const uint8_t*>(a);
  const int64_t m = p.shape.m, k = p.shape.k;
  uint8_t* dst = out.data();
  const DTypeInfo& d = dtype_info(p.dtype);
  // Work weight: twice A's bytes (read once, written once).
  on_row_halves(m, m * k * d.bits / 4, kHalvesMinBytes, [&](int64_t f, int64_t l) { d.pack_a_rows(p, src, dst, f, l); });
  return {};
}

Status unpack_c_group(const Plan& p, std::span<const uint8_t* const> slices, int64_t first, void* c,
                      std::span<float> acc) {
  const auto count = static_cast<int64_t>(slices.size());
  if (count < 1 || first < 0 || first + count > p.slices)
    return make_error(-EINVAL, "unpack_c_group: slices " + std::to_string(first) + " + " + std::to_string(count) +
                                   " of a plan with " + std::to_string(p.slices));
  return dtype_info(p.dtype).unpack_c(p, slices, first == 0, c, acc);
}

Status unpack_c_columns(const Plan& p, std::span<const uint8_t* const> slices, int64_t first,
                        std::span<const ColumnPart> parts) {
  if (p.fp16_out && !p.npu_fp16_out()) return make_error(-EINVAL, "unpack_c_columns: an fp16 C of several slices");
  SlicePointers pointers;  // the slices' pointers shifted to a part's columns
  for (const ColumnPart& part : parts) {
    if (part.column % p.out_atom() != 0 || part.column < 0 || part.n < 1 || part.column + part.n > p.shape.n)
      return make_error(-EINVAL, "unpack_c_columns: columns " + std::to_string(part.column) + " + " +
                                     std::to_string(part.n) + " of " + std::to_string(p.shape.n) + ", surfaces " +
                                     std::to_string(p.out_atom()) + " wide");
    if (part.c == nullptr) continue;
    const int64_t np = (part.n + p.out_atom() - 1) / p.out_atom() * p.out_atom();
    if (p.stacked) {  // one output, C': the part's columns of every diagonal block, summed
      unpack_stacked_columns(p, slices[0], part.column, part.n, static_cast<int32_t*>(part.c), part.n);
      continue;
    }
    Plan view = p;
    view.shape.n = part.n;
    view.np = np;
    const int64_t skip = part.column / p.out_atom() * p.c_rows() * kHostAtom;  // bytes of the surfaces before
    const std::span<const uint8_t*> shifted = pointers.of(slices.size());
    for (size_t i = 0; i < slices.size(); ++i) shifted[i] = slices[i] + skip;
    if (Status s = unpack_c_group(view, shifted, first, part.c, {}); !s) return s;
  }
  return {};
}

Status round_c_fp16(const Plan& p, std::span<const float> acc, uint16_t* c) {
  const int64_t m = p.shape.m, n = p.shape.n;
  if (Status s = check_size("fp32 partial sums of an fp16 C", static_cast<int64_t>(acc.size()), m * n); !s) return s;
  const SumIsa isa = sum_isa();
  // Work weight: 4 bytes read and 2 written per element, the unpacker's threshold.
  on_row_halves(m, 6 * m * n, kHalvesMinBytes, [&](int64_t r0, int64_t r1) {
    round_to_fp16_on(isa, acc.data() + r0 * n, c + r0 * n, (r1 - r0) * n);
  });
  return {};
}

}  // namespace ork::matmul
