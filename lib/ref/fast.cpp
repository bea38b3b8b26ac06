// The fast int8 path's driver (fast.h): pack A once, then per chunk of B column panels pack
// the chunk and run the micro-kernel over every row block. Threads grab chunks from a shared
// counter, so each chunk's columns of C are written by one thread only. Packing is pack.cpp,
// the choice of tier isa.cpp, the micro-kernels kernel_*.cpp.
#include "lib/ref/fast.h"
#include "lib/ref/int4.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "lib/ref/kernels.h"
#include "lib/ref/pack.h"
#include "lib/ref/split.h"
#include "lib/ref/workers.h"

namespace ork::ref {
namespace {

using detail::AFormat;
using detail::Kernel;
using detail::pack_a;
using detail::pack_panels;
using detail::pack_panels_columns;
using detail::packed_a_bytes;
using detail::padded_groups;

// Scratch buffers kept across calls: a fresh multi-MiB buffer costs a page fault per 4 KiB
// on first touch (about as long as packing B itself), so packed panels and accumulators are
// reused. Buffers are returned on scope exit; the pool keeps at most a few of them.
class ScratchPool {
 public:
  struct Lease {
    ScratchPool* pool;
    std::unique_ptr<uint8_t[]> data;
    size_t bytes;
    Lease(ScratchPool* p, std::unique_ptr<uint8_t[]> d, size_t n) : pool(p), data(std::move(d)), bytes(n) {}
    Lease(Lease&&) = default;  // a moved-from lease holds no data and gives nothing back
    ~Lease() { pool->give(std::move(data), bytes); }
    template <class T> T* as() { return reinterpret_cast<T*>(data.get()); }
  };

  Lease take(size_t bytes) {
    std::unique_ptr<uint8_t[]> found;
    size_t found_bytes = 0;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      // The smallest buffer that fits: a big one taken for a small request would send the
      // next big request to a fresh allocation (page faults on first touch).
      size_t best = free_.size();
      for (size_t i = 0; i < free_.size(); ++i) {
        if (free_[i].second >= bytes && (best == free_.size() || free_[i].second < free_[best].second)) best = i;
      }
      if (best < free_.size()) {
        found = std::move(free_[best].first);
        found_bytes = free_[best].second;
        free_.erase(free_.begin() + static_cast<std::ptrdiff_t>(best));
      }
    }  // unlocked before any Lease exists: a Lease's destructor takes the lock
    if (!found) return Lease{this, std::make_unique_for_overwrite<uint8_t[]>(bytes), bytes};
    return Lease{this, std::move(found), found_bytes};
  }

 private:
  static constexpr size_t kMaxKept = 8;                      // buffers
  static constexpr size_t kMaxKeptBytes = size_t{64} << 20;  // per buffer: bigger ones go
  void give(std::unique_ptr<uint8_t[]> data, size_t bytes) {
    if (!data || bytes > kMaxKeptBytes) return;  // a moved-from lease, or too big to keep
    std::lock_guard<std::mutex> lock(mutex_);
    if (free_.size() < kMaxKept) free_.emplace_back(std::move(data), bytes);
  }
  std::mutex mutex_;
  std::vector<std::pair<std::unique_ptr<uint8_t[]>, size_t>> free_;
};

ScratchPool& scratch_pool() {
  static ScratchPool pool;
  return pool;
}

struct Job {
  const Kernel* kr;
  std::span<const int8_t> b;
  CLayout c;
  Dims d;
  const uint8_t* a_packed;
  int64_t groups;
  bool rows;  // the short-M rows kernel (kernels.h micro_rows) instead of full tiles
};

// The rows kernel when M is short enough and the CPU has the tier it is built for.
bool use_rows(const Kernel& kr, int64_t m, const FastOptions& o) {
  return o.short_path && kr.micro_rows != nullptr && m <= kr.short_m && isa_supported(kr.rows_isa);
}

// A packed for the job: the kernel's tiles, or rows (no padding rows) in the rows kernel's
// format for the rows kernel; `groups` is the panels' group count either way.
ScratchPool::Lease packed_a(const Kernel& kr, bool rows, std::span<const int8_t> a, Dims d, int64_t groups) {
  Kernel ak = kr;
  if (rows) {
    ak.mr = 1;
    ak.a_format = kr.rows_a_format;
    ak.a_unit = 0;
    ak.a_chunk_major = false;
  }
  auto lease = scratch_pool().take(packed_a_bytes(ak, d, groups));
  pack_a(ak, a, d, groups, lease.as<uint8_t>());
  return lease;
}

// dst[i] = t[i] + bias[i] modulo 2^32 (like the oracle), 8 at a time through fixed-size
// copies: GCC's -O2 vectoriser takes a loop of known length, not one of `len`.
void add_bias(int32_t* dst, const int32_t* t, const int32_t* bias, int64_t len) {
  int64_t i = 0;
  for (; i + 8 <= len; i += 8) {
    uint32_t x[8], y[8];
    std::memcpy(x, t + i, sizeof x);
    std::memcpy(y, bias + i, sizeof y);
    for (int j = 0; j < 8; ++j) x[j] += y[j];
    std::memcpy(dst + i, x, sizeof x);
  }
  for (; i < len; ++i) dst[i] = static_cast<int32_t>(static_cast<uint32_t>(t[i]) + static_cast<uint32_t>(bias[i]));
}

// Where one panel's columns go in C: runs that stay within one group of the layout (one run
// when row-major), worked out once per panel, so no division per row.
struct PanelRuns {
  struct Run {
    int64_t col, len, offset;  // first column in the panel, columns, element offset at row 0
  };
  Run runs[64];  // nr <= 64 columns: at most nr runs
  int count = 0;
  PanelRuns(const Job& job, int64_t p) {
    const CLayout& c = job.c;
    const int64_t n0 = p * job.kr->nr, cols = std::min<int64_t>(job.kr->nr, job.d.n - n0);
    for (int64_t col = 0; col < cols; ++count) {
      const int64_t n = n0 + col, in_group = n % c.group;
      const int64_t len = std::min(cols - col, c.group - in_group);
      runs[count] = {col, len, (n / c.group) * c.group_stride + in_group};
      col += len;
    }
  }
};

// Asks for the lines of C that store_rows will write for rows m0 .. m1-1, for writing: the
// misses then overlap the multiply of that block instead of stalling the store loop.
void prefetch_rows(const Job& job, const PanelRuns& pr, int64_t m0, int64_t m1) {
  for (int64_t m = m0; m < std::min(m1, job.d.m); ++m) {
    const int32_t* row = job.c.base + m * job.c.row_stride;
    for (int r = 0; r < pr.count; ++r) {
      const int32_t* first = row + pr.runs[r].offset;
      for (int64_t i = 0; i < pr.runs[r].len; i += 16) __builtin_prefetch(first + i, 1);  // one 64-byte line
      __builtin_prefetch(first + pr.runs[r].len - 1, 1);
    }
  }
}

// Rows m0 .. m1-1 of one panel's accumulated tiles (`acc` holds row m0) into C, adding the
// bias; rows past M (padding) are dropped.
void store_rows(const Job& job, const PanelRuns& pr, const int32_t* acc, const int32_t* bias, int64_t m0, int64_t m1) {
  const int nr = job.kr->nr;
  for (int64_t m = m0; m < std::min(m1, job.d.m); ++m) {
    const int32_t* t = acc + (m - m0) * nr;
    int32_t* row = job.c.base + m * job.c.row_stride;
    for (int r = 0; r < pr.count; ++r) {
      (job.kr->add_bias ? job.kr->add_bias : add_bias)(row + pr.runs[r].offset, t + pr.runs[r].col, bias + pr.runs[r].col,
                                                      pr.runs[r].len);
    }
  }
}

// Short M: one rows-kernel call per panel over all of K (B is read once whatever K's
// chunking, so there is nothing to keep in L1 for a second row block).
void compute_rows(const Job& job, const uint8_t* panels, const int32_t* bias, int64_t p0, int64_t p1) {
  const Kernel& kr = *job.kr;
  const int64_t panel_bytes = job.groups * kr.nr * 4;
  int32_t acc[detail::kMaxShortM * 64];  // short_m rows x nr <= 64 columns
  for (int64_t p = p0; p < p1; ++p) {
    kr.micro_rows(static_cast<int>(job.d.m), job.a_packed, job.groups * 4, panels + (p - p0) * panel_bytes, job.groups,
                  acc, false);
    store_rows(job, PanelRuns(job, p), acc, bias + (p - p0) * kr.nr, 0, job.d.m);
  }
}

// Panels p0 .. p1-1 of C from packed panels (`panels` and `bias` start at panel p0). Per
// panel, K is cut into chunks of chunk_groups so that the panel's B chunk stays in L1 while
// the loop walks every row block; the row blocks' partial tiles accumulate in `acc` (one
// panel's worth: M x nr int32). Each block goes to C right after its last chunk, its lines
// asked for before that block's multiply: a big C is not in cache, and a whole panel's
// column of C stored at once, in a loop with no multiply to overlap the misses, was a sixth
// of an M = 512 VNNI call (docs/cpu-reference.md).
void compute_panels(const Job& job, const uint8_t* panels, const int32_t* bias, int64_t p0, int64_t p1) {
  if (job.rows) return compute_rows(job, panels, bias, p0, p1);
  const Kernel& kr = *job.kr;
  const int64_t row_bytes = job.groups * 4;
  const int64_t panel_bytes = job.groups * kr.nr * 4;
  const int64_t blocks = (job.d.m + kr.mr - 1) / kr.mr, tile = int64_t{kr.mr} * kr.nr;
  auto acc_lease = scratch_pool().take(static_cast<size_t>(blocks * tile) * sizeof(int32_t));
  int32_t* const acc = acc_lease.as<int32_t>();
  if (kr.thread_begin) kr.thread_begin();
  for (int64_t p = p0; p < p1; ++p) {
    const uint8_t* panel = panels + (p - p0) * panel_bytes;
    const PanelRuns runs(job, p);
    for (int64_t g0 = 0; g0 < job.groups; g0 += kr.chunk_groups) {
      const int64_t gn = std::min<int64_t>(kr.chunk_groups, job.groups - g0);
      const bool last = g0 + gn >= job.groups;
      const bool to_c = last && kr.micro_to_c && runs.count == 1 && runs.runs[0].len == kr.nr;
      for (int64_t b = 0; b < blocks; ++b) {
        const uint8_t* ab = job.a_packed + detail::a_chunk_offset(kr, blocks * kr.mr, job.groups, b, g0);
        const int64_t m0 = b * kr.mr;
        if (last) prefetch_rows(job, runs, m0, m0 + kr.mr);
        if (to_c && m0 + kr.mr <= job.d.m) {  // a whole tile: straight from registers into C
          kr.micro_to_c(ab, panel + g0 * kr.nr * 4, gn, g0 > 0 ? acc + b * tile : nullptr,
                        job.c.base + m0 * job.c.row_stride + runs.runs[0].offset, job.c.row_stride,
                        bias + (p - p0) * kr.nr);
          continue;
        }
        kr.micro(ab, row_bytes, panel + g0 * kr.nr * 4, gn, acc + b * tile, g0 > 0);
        if (last) store_rows(job, runs, acc + b * tile, bias + (p - p0) * kr.nr, m0, m0 + kr.mr);
      }
    }
  }
  if (kr.thread_end) kr.thread_end();
}

// Packs panels p0 .. p1-1 of the caller's B, then computes them while they are in L2.
void run_panels(const Job& job, int64_t p0, int64_t p1) {
  const int64_t panel_bytes = job.groups * job.kr->nr * 4;
  // Scratch is fully written before it is read (pack_panels zeroes the padding itself).
  auto panel_lease = scratch_pool().take(static_cast<size_t>((p1 - p0) * panel_bytes));
  std::vector<int32_t> biases(static_cast<size_t>((p1 - p0) * job.kr->nr));
  pack_panels(*job.kr, job.b, job.d, p0, p1, job.groups, panel_lease.as<uint8_t>(), biases.data());
  if (job.rows && detail::rows_need_column_bias(*job.kr))  // the rows kernel's A is biased
    detail::column_bias(panel_lease.as<uint8_t>(), p1 - p0, job.groups, job.kr->nr, biases.data());
  compute_panels(job, panel_lease.as<uint8_t>(), biases.data(), p0, p1);
}

int choose_threads(const FastOptions& o, Dims d, int64_t panels, bool rows = false) {
  return detail::split_threads(o.threads, d.m * d.n * d.k, d.k * d.n, rows, panels);
}

using detail::for_panel_chunks;

Result<const Kernel*> kernel_of(std::optional<Isa> wanted) {
  const Isa isa = wanted.value_or(best_isa());
  if (!isa_supported(isa)) {
    return make_error(-EOPNOTSUPP, std::string("isa ") + isa_name(isa) + ": not supported by this CPU");
  }
  return &detail::kernel_for(isa);
}

Status check_threads(const FastOptions& options) {
  if (options.threads < 0) {
    return make_error(-EINVAL, "threads = " + std::to_string(options.threads) + ": must be >= 0");
  }
  return {};
}

}  // namespace

Status matmul_int8_fast(std::span<const int8_t> a, std::span<const int8_t> b,
                        std::span<int32_t> c, Dims d, const FastOptions& options) {
  if (Status s = check_operands(d, a.size(), b.size(), c.size()); !s) return s;
  auto kr = kernel_of(options.isa);
  if (!kr) return kr.error();
  if (Status s = check_threads(options); !s) return s;
  const int64_t groups = padded_groups(**kr, d.k);
  const bool rows = use_rows(**kr, d.m, options);
  auto a_lease = packed_a(**kr, rows, a, d, groups);
  const Job job{*kr, b, CLayout::row_major(c, d.n), d, a_lease.as<uint8_t>(), groups, rows};
  const int64_t panels = (d.n + (*kr)->nr - 1) / (*kr)->nr;
  const int threads = choose_threads(options, d, panels, rows);
  if (options.threads_used) *options.threads_used = threads;
  for_panel_chunks(threads, panels, [&job](int64_t p0, int64_t p1) { run_panels(job, p0, p1); });
  return {};
}

Status matmul_int4_fast(std::span<const int8_t> a, std::span<const int8_t> b,
                        std::span<int32_t> c, Dims d, const FastOptions& options) {
  if (Status s = check_operands(d, a.size(), b.size(), c.size()); !s) return s;
  if (Status s = check_int4_values("A", a); !s) return s;
  if (Status s = check_int4_values("B", b); !s) return s;
  return matmul_int8_fast(a, b, c, d, options);
}

Result<PackedB> pack_b_int8(std::span<const int8_t> b, int64_t k, int64_t n, BOrder order,
                            std::optional<Isa> isa) {
  if (k < 1 || n < 1) return make_error(-EINVAL, "pack_b_int8: K and N must be >= 1");
  if (b.size() != static_cast<size_t>(k * n)) {
    return make_error(-EINVAL, "pack_b_int8: B has " + std::to_string(b.size()) + " elements, K x N = " +
                                   std::to_string(k * n));
  }
  auto kr = kernel_of(isa);
  if (!kr) return kr.error();
  PackedB out;
  out.isa_ = (*kr)->isa;
  out.k_ = k;
  out.n_ = n;
  out.groups_ = padded_groups(**kr, k);
  const int64_t panels = (n + (*kr)->nr - 1) / (*kr)->nr;
  out.panels_.resize(static_cast<size_t>(panels * out.groups_ * (*kr)->nr * 4));
  out.bias_.resize(static_cast<size_t>(panels * (*kr)->nr));
  const Dims d{1, k, n};
  // Panels are independent: a big B is packed on the fast path's threads (the emulated
  // NPU packs a weight block inside the first call that uses it).
  const int64_t panel_bytes = out.groups_ * (*kr)->nr * 4;
  for_panel_chunks(choose_threads({}, {(*kr)->mr, k, n}, panels), panels, [&](int64_t p0, int64_t p1) {
    uint8_t* dst = out.panels_.data() + p0 * panel_bytes;  // zeroed by the resize above
    int32_t* bias = out.bias_.data() + p0 * (*kr)->nr;
    if (order == BOrder::row_major) pack_panels(**kr, b, d, p0, p1, out.groups_, dst, bias);
    else pack_panels_columns(**kr, b.data(), d, p0, p1, out.groups_, dst, bias);
  });
  if (detail::rows_need_column_bias(**kr)) {  // AMX: for short M
    out.rows_bias_.resize(out.bias_.size());
    detail::column_bias(out.panels_.data(), panels, out.groups_, (*kr)->nr, out.rows_bias_.data());
  }
  return out;
}

Status unpack_b_int8(const PackedB& b, std::span<int8_t> out) {
  if (b.k_ < 1) return make_error(-EINVAL, "unpack_b_int8: B was never packed (pack_b_int8)");
  if (out.size() != static_cast<size_t>(b.k_ * b.n_))
    return make_error(-EINVAL, "unpack_b_int8: out has " + std::to_string(out.size()) + " elements, K x N = " +
                                   std::to_string(b.k_ * b.n_));
  auto kr = kernel_of(b.isa_);
  if (!kr) return kr.error();
  // pack_panels' format: panel n / nr, then K group k / kg, then column n % nr, 4 bytes per
  // (group, column): kg int8 values, or two int16 (sign-extended int8, little-endian).
  const int kg = k_per_group(**kr), nr = (*kr)->nr;
  const int64_t panel_bytes = b.groups_ * nr * 4;
  for (int64_t k = 0; k < b.k_; ++k)
    for (int64_t n = 0; n < b.n_; ++n) {
      const int64_t at = (n / nr) * panel_bytes + ((k / kg) * nr + n % nr) * 4 + (k % kg) * (4 / kg);
      out[static_cast<size_t>(k * b.n_ + n)] = static_cast<int8_t>(b.panels_[static_cast<size_t>(at)]);
    }
  return Status::success();
}

Status matmul_int8_packed(std::span<const int8_t> a, int64_t m, const PackedB& b, std::span<int32_t> c,
                          const FastOptions& options) {
  if (b.k() >= 1 && m >= 1 && c.size() != static_cast<size_t>(m * b.n())) {  // names the bad size
    return check_operands({m, b.k(), b.n()}, a.size(), static_cast<size_t>(b.k() * b.n()), c.size());
  }
  return matmul_int8_packed(a, m, b, CLayout::row_major(c, b.n()), options);
}

namespace {

// The checks matmul_int8_packed and matmul_int8_packed_to share (C is the caller's).
Status check_packed_call(std::span<const int8_t> a, int64_t m, const PackedB& b, const FastOptions& options) {
  if (b.k() < 1) return make_error(-EINVAL, "matmul_int8_packed: B was never packed (pack_b_int8)");
  const Dims d{m, b.k(), b.n()};
  if (Status s = check_operands(d, a.size(), static_cast<size_t>(d.k * d.n), static_cast<size_t>(d.m * d.n)); !s)
    return s;
  if (options.isa && *options.isa != b.isa()) {
    return make_error(-EINVAL, std::string("matmul_int8_packed: B was packed for isa ") + isa_name(b.isa()) +
                                   ", not " + isa_name(*options.isa));
  }
  return check_threads(options);
}

}  // namespace

// Both multiplies with a PackedB after their checks: A packed for the kernel, the threads,
// then `chunk(job, panels, bias, p0, p1)` per chunk of panels on the thread that takes it.
struct PackedCall {
  template <class Chunk>
  static void run(std::span<const int8_t> a, Dims d, const PackedB& b, const CLayout& c, const FastOptions& o,
                  Chunk chunk) {
    const Kernel& kr = detail::kernel_for(b.isa_);
    const bool rows = use_rows(kr, d.m, o);
    auto a_lease = packed_a(kr, rows, a, d, b.groups_);
    const Job job{&kr, {}, c, d, a_lease.as<uint8_t>(), b.groups_, rows};
    const int64_t panels = (d.n + kr.nr - 1) / kr.nr, panel_bytes = b.groups_ * kr.nr * 4;
    const int32_t* bias = (rows && !b.rows_bias_.empty() ? b.rows_bias_ : b.bias_).data();
    const int threads = choose_threads(o, d, panels, rows);
    if (o.threads_used) *o.threads_used = threads;
    for_panel_chunks(threads, panels, [&](int64_t p0, int64_t p1) {
      chunk(job, b.panels_.data() + p0 * panel_bytes, bias + p0 * kr.nr, p0, p1);
    });
  }
};

Status matmul_int8_packed(std::span<const int8_t> a, int64_t m, const PackedB& b, const CLayout& c,
                          const FastOptions& options) {
  if (Status s = check_packed_call(a, m, b, options); !s) return s;
  if (c.base == nullptr || c.group < 1) return make_error(-EINVAL, "matmul_int8_packed: C layout without base or group");
  PackedCall::run(a, {m, b.k(), b.n()}, b, c, options, compute_panels);
  return {};
}

Status matmul_int8_packed_to(std::span<const int8_t> a, int64_t m, const PackedB& b, const ColumnSink& sink,
                             const FastOptions& options) {
  if (Status s = check_packed_call(a, m, b, options); !s) return s;
  if (!sink) return make_error(-EINVAL, "matmul_int8_packed_to: no sink");
  // for_panel_chunks hands out chunks of kPanelsPerGrab panels that start at multiples of it,
  // so a chunk's columns are one group of this layout: (m, n) at scratch[m * width + n - n0].
  PackedCall::run(a, {m, b.k(), b.n()}, b, {}, options,
                  [&sink](const Job& call, const uint8_t* panels, const int32_t* bias, int64_t p0, int64_t p1) {
                    const int64_t nr = call.kr->nr, width = detail::kPanelsPerGrab * nr;
                    auto scratch = scratch_pool().take(static_cast<size_t>(call.d.m * width) * sizeof(int32_t));
                    Job job = call;
                    job.c = CLayout{scratch.as<int32_t>(), width, width, 0};
                    compute_panels(job, panels, bias, p0, p1);
                    sink(p0 * nr, std::min(p1 * nr, call.d.n), scratch.as<int32_t>(), width);
                  });
  return {};
}

}  // namespace ork::ref
