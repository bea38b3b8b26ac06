// The fast int8 path (fast.h): pack A once, then per chunk of B column panels pack the chunk
// and run the micro-kernel over every row block. Threads grab chunks from a shared counter,
// so each chunk's columns of C are written by one thread only.
#include "lib/ref/fast.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <functional>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#if defined(__aarch64__)
#include <asm/hwcap.h>  // HWCAP_ASIMDDP
#include <sys/auxv.h>
#endif

#include "lib/ref/kernels.h"
#include "lib/ref/workers.h"

namespace ork::ref {

const char* isa_name(Isa isa) {
  switch (isa) {
    case Isa::generic: return "generic";
    case Isa::sse2: return "sse2";
    case Isa::avx2: return "avx2";
    case Isa::avx512_vnni: return "avx512_vnni";
    case Isa::amx: return "amx";
    case Isa::sdot: return "sdot";
  }
  return "unknown";
}

bool isa_supported(Isa isa) {
  if (isa == Isa::generic) return true;
#if defined(__x86_64__)
  __builtin_cpu_init();
  switch (isa) {
    case Isa::generic: return true;
    case Isa::sse2: return true;  // part of x86-64
    case Isa::avx2: return __builtin_cpu_supports("avx2");
    case Isa::avx512_vnni:
      return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
             __builtin_cpu_supports("avx512vnni");
    case Isa::amx: return detail::amx_usable();
    case Isa::sdot: return false;
  }
#elif defined(__aarch64__)
  // The kernel's view of the CPU (ID_AA64ISAR0_EL1.DP, arch/arm64/include/uapi/asm/hwcap.h):
  // set on every core of a big.LITTLE system or on none (the RK3588's A76 and A55 both have it).
  if (isa == Isa::sdot) return (getauxval(AT_HWCAP) & HWCAP_ASIMDDP) != 0;
#endif
  return false;
}

// Ordered from the slowest to the fastest: best_isa() is the last one supported.
std::vector<Isa> supported_isas() {
  std::vector<Isa> out;
  for (Isa isa : {Isa::generic, Isa::sse2, Isa::avx2, Isa::avx512_vnni, Isa::amx, Isa::sdot}) {
    if (isa_supported(isa)) out.push_back(isa);
  }
  return out;
}

Isa best_isa() { return supported_isas().back(); }

namespace detail {

const Kernel& kernel_for(Isa isa) {
#if defined(__x86_64__)
  switch (isa) {
    case Isa::generic: break;
    case Isa::sse2: return sse2_kernel();
    case Isa::avx2: return avx2_kernel();
    case Isa::avx512_vnni: return vnni_kernel();
    case Isa::amx: return amx_kernel();
    case Isa::sdot: break;
  }
#elif defined(__aarch64__)
  if (isa == Isa::sdot) return sdot_kernel();
#endif
  (void)isa;
  return generic_kernel();
}

}  // namespace detail

namespace {

using detail::AFormat;
using detail::Kernel;

// Below this many multiply-adds a second thread costs more to start than it saves.
constexpr int64_t kMinMacsPerThread = int64_t{1} << 22;
// Panels per unit of work: 4 x 32 columns x K = 512 KiB of packed B at K = 2048 (fits L2).
constexpr int64_t kPanelsPerGrab = 4;

// Bytes of packed A: rows padded to a multiple of mr, `groups` 4-byte groups each.
size_t packed_a_bytes(const Kernel& kr, Dims d, int64_t groups) {
  return static_cast<size_t>((d.m + kr.mr - 1) / kr.mr * kr.mr * groups * 4);
}

// A as rows of `groups` 4-byte groups in the kernel's format into `out` (packed_a_bytes),
// padded with the encoding of zero (0, or 0x80 for biased uint8) up to the group count and
// up to a multiple of mr rows, so the kernel always reads whole tiles. `out` is scratch: it
// is filled first only when there is padding (a 128-row tile at K = 2048 has none).
void pack_a(const Kernel& kr, std::span<const int8_t> a, Dims d, int64_t groups, uint8_t* out) {
  const int64_t row_bytes = groups * 4;
  const int64_t rows = (d.m + kr.mr - 1) / kr.mr * kr.mr;
  const uint8_t zero = kr.a_format == AFormat::u8_biased ? 0x80 : 0;
  const int64_t written = kr.a_format == AFormat::int16_pairs ? 2 * d.k : d.k;  // bytes per row
  if (rows != d.m || written != row_bytes) std::memset(out, zero, packed_a_bytes(kr, d, groups));
  for (int64_t m = 0; m < d.m; ++m) {
    const int8_t* src = a.data() + m * d.k;
    uint8_t* dst = out + m * row_bytes;
    switch (kr.a_format) {
      case AFormat::u8_biased:
        for (int64_t k = 0; k < d.k; ++k) dst[k] = static_cast<uint8_t>(src[k]) ^ 0x80u;
        break;
      case AFormat::s8:
        if (kr.a_tiled) {
          // [m/mr][K/64][mr][64]: one tile of mr rows x 64 K bytes is contiguous, so tile
          // loads do not hit the same few L1 sets (a row stride of K bytes would).
          uint8_t* block = out + (m / kr.mr) * kr.mr * row_bytes + (m % kr.mr) * 64;
          for (int64_t k0 = 0; k0 < d.k; k0 += 64) {
            std::memcpy(block + (k0 / 64) * kr.mr * 64, src + k0, static_cast<size_t>(std::min<int64_t>(64, d.k - k0)));
          }
        } else {
          std::memcpy(dst, src, static_cast<size_t>(d.k));
        }
        break;
      case AFormat::int16_pairs:
        for (int64_t k = 0; k < d.k; ++k) {
          const int16_t v = src[k];
          std::memcpy(dst + 2 * k, &v, sizeof v);
        }
        break;
    }
  }
}

// Columns 0 .. cols-1 of four K rows as one 4-byte quad per column, 16 columns per step with
// SSE2 byte/word unpacks (baseline x86-64; none elsewhere). Returns how many columns it did.
int64_t interleave_quads(const int8_t* const* r, int64_t cols, uint32_t* out) {
  int64_t c = 0;
#if defined(__SSE2__)
  for (; c + 16 <= cols; c += 16) {
    const auto load = [&](int t) { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(r[t] + c)); };
    const __m128i r0 = load(0), r1 = load(1), r2 = load(2), r3 = load(3);
    const __m128i p01_lo = _mm_unpacklo_epi8(r0, r1), p01_hi = _mm_unpackhi_epi8(r0, r1);
    const __m128i p23_lo = _mm_unpacklo_epi8(r2, r3), p23_hi = _mm_unpackhi_epi8(r2, r3);
    auto* o = reinterpret_cast<__m128i*>(out + c);
    _mm_storeu_si128(o + 0, _mm_unpacklo_epi16(p01_lo, p23_lo));  // columns 0-3
    _mm_storeu_si128(o + 1, _mm_unpackhi_epi16(p01_lo, p23_lo));  // 4-7
    _mm_storeu_si128(o + 2, _mm_unpacklo_epi16(p01_hi, p23_hi));  // 8-11
    _mm_storeu_si128(o + 3, _mm_unpackhi_epi16(p01_hi, p23_hi));  // 12-15
  }
#else
  (void)r, (void)cols, (void)out;  // the scalar loop of the caller does every column
#endif
  return c;
}

// Panels p0 .. p1-1 of B (nr columns each) as [panel][groups][nr][4 bytes], zero padded.
// bias[(p - p0) * nr + c] is what the tile needs added: -128 * (column sum) on VNNI (undoes
// the +128 of A), else 0. K groups outer, panels inner, so the source is read row by row
// (contiguous runs of nr columns); each group is one uint32 per column (GCC vectorises it).
void pack_panels(const Kernel& kr, std::span<const int8_t> b, Dims d, int64_t p0, int64_t p1,
                 int64_t groups, uint8_t* dst, int32_t* bias) {
  const int kg = k_per_group(kr), nr = kr.nr;
  const int64_t panel_bytes = groups * nr * 4;
  const int64_t real_groups = (d.k + kg - 1) / kg;
  // Zero only what the loop below does not write: groups past K, columns past N.
  for (int64_t p = p0; p < p1; ++p) {
    uint8_t* panel = dst + (p - p0) * panel_bytes;
    std::memset(panel + real_groups * nr * 4, 0, static_cast<size_t>((groups - real_groups) * nr * 4));
    const int64_t cols = std::min<int64_t>(nr, d.n - p * nr);
    if (cols == nr) continue;
    for (int64_t g = 0; g < real_groups; ++g) {
      std::memset(panel + (g * nr + cols) * 4, 0, static_cast<size_t>((nr - cols) * 4));
    }
  }
  std::fill(bias, bias + (p1 - p0) * nr, 0);
  static const int8_t kZeros[64] = {};  // stands in for rows past K (nr <= 64)
  for (int64_t g = 0; g * kg < d.k; ++g) {
    const int8_t* rows[4];
    for (int t = 0; t < kg; ++t) rows[t] = g * kg + t < d.k ? b.data() + (g * kg + t) * d.n : nullptr;
    for (int64_t p = p0; p < p1; ++p) {
      const int64_t n0 = p * nr, cols = std::min<int64_t>(nr, d.n - n0);
      const int8_t* r[4];
      for (int t = 0; t < kg; ++t) r[t] = rows[t] ? rows[t] + n0 : kZeros;
      auto* out = reinterpret_cast<uint32_t*>(dst + (p - p0) * panel_bytes + g * nr * 4);
      if (kg == 4) {
        const int64_t vec = interleave_quads(r, cols, out);
        for (int64_t c = vec; c < cols; ++c) {
          out[c] = uint32_t(uint8_t(r[0][c])) | uint32_t(uint8_t(r[1][c])) << 8 |
                   uint32_t(uint8_t(r[2][c])) << 16 | uint32_t(uint8_t(r[3][c])) << 24;
        }
      } else {  // two sign-extended int16
        for (int64_t c = 0; c < cols; ++c) {
          out[c] = uint32_t(uint16_t(int16_t(r[0][c]))) | uint32_t(uint16_t(int16_t(r[1][c]))) << 16;
        }
      }
      if (kr.a_format != AFormat::u8_biased) continue;
      int32_t* pb = bias + (p - p0) * nr;
      for (int64_t c = 0; c < cols; ++c) {  // modulo 2^32: K may exceed 2^17
        const int32_t sum = r[0][c] + r[1][c] + r[2][c] + r[3][c];
        pb[c] = static_cast<int32_t>(static_cast<uint32_t>(pb[c]) - static_cast<uint32_t>(128 * sum));
      }
    }
  }
}

// Four columns x four groups of column-major B into a panel: a 4 x 4 transpose of uint32
// (SSE2 on x86-64; a plain loop elsewhere). `cols[j]` points at group g0 of column j.
inline void transpose_quads(const int8_t* const* cols, uint32_t* out, int64_t nr) {
#if defined(__SSE2__)
  const auto load = [&](int j) { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(cols[j])); };
  const __m128i c0 = load(0), c1 = load(1), c2 = load(2), c3 = load(3);
  const __m128i t0 = _mm_unpacklo_epi32(c0, c1), t1 = _mm_unpackhi_epi32(c0, c1);
  const __m128i t2 = _mm_unpacklo_epi32(c2, c3), t3 = _mm_unpackhi_epi32(c2, c3);
  const auto store = [&](int g, __m128i v) { _mm_storeu_si128(reinterpret_cast<__m128i*>(out + g * nr), v); };
  store(0, _mm_unpacklo_epi64(t0, t2));  // group g0 of columns 0..3
  store(1, _mm_unpackhi_epi64(t0, t2));
  store(2, _mm_unpacklo_epi64(t1, t3));
  store(3, _mm_unpackhi_epi64(t1, t3));
#else
  for (int g = 0; g < 4; ++g)
    for (int j = 0; j < 4; ++j) std::memcpy(out + g * nr + j, cols[j] + 4 * g, 4);
#endif
}

// The same panels from column-major B (N x K: each column's K values contiguous), so one
// group of a column is one 4-byte read: whole 4 x 4 blocks of quads are transposed at once,
// the edges (K % 16, N % 4, int16 pairs) go one group at a time. `dst` and `bias` must be
// zero on entry: padding groups and columns are not written.
void pack_panels_columns(const Kernel& kr, const int8_t* bt, Dims d, int64_t p0, int64_t p1,
                         int64_t groups, uint8_t* dst, int32_t* bias) {
  const int kg = k_per_group(kr), nr = kr.nr;
  const int64_t panel_bytes = groups * nr * 4;
  const int64_t fast_groups = kg == 4 ? d.k / 16 * 4 : 0;  // groups done 4 x 4 at a time
  for (int64_t p = p0; p < p1; ++p) {
    const int64_t n0 = p * nr, cols = std::min<int64_t>(nr, d.n - n0);
    auto* panel = reinterpret_cast<uint32_t*>(dst + (p - p0) * panel_bytes);
    const int64_t fast_cols = cols / 4 * 4;
    for (int64_t c = 0; c < fast_cols; c += 4) {
      const int8_t* col[4];
      for (int j = 0; j < 4; ++j) col[j] = bt + (n0 + c + j) * d.k;
      for (int64_t g = 0; g < fast_groups; g += 4) {
        const int8_t* at[4] = {col[0] + g * 4, col[1] + g * 4, col[2] + g * 4, col[3] + g * 4};
        transpose_quads(at, panel + g * nr + c, nr);
      }
    }
    for (int64_t c = 0; c < cols; ++c) {
      const int8_t* col = bt + (n0 + c) * d.k;
      for (int64_t g = c < fast_cols ? fast_groups : 0; g * kg < d.k; ++g) {
        int8_t v[4] = {};
        std::memcpy(v, col + g * kg, static_cast<size_t>(std::min<int64_t>(kg, d.k - g * kg)));
        if (kg == 4) {
          std::memcpy(panel + g * nr + c, v, 4);
        } else {  // two sign-extended int16
          panel[g * nr + c] = uint32_t(uint16_t(int16_t(v[0]))) | uint32_t(uint16_t(int16_t(v[1]))) << 16;
        }
      }
      if (kr.a_format == AFormat::u8_biased) {  // -128 * (column sum), modulo 2^32
        int64_t sum = 0;
        for (int64_t k = 0; k < d.k; ++k) sum += col[k];
        bias[(p - p0) * nr + c] = static_cast<int32_t>(static_cast<uint32_t>(-128 * sum));
      }
    }
  }
}

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
};

// Copies the valid rows / columns of one panel's accumulated tiles into C, adding the bias.
// Columns go in runs that stay within one group of the layout (one run when row-major),
// worked out once per panel: no division per row.
void store_panel(const Job& job, int64_t p, const int32_t* acc, const int32_t* bias) {
  const Kernel& kr = *job.kr;
  const CLayout& c = job.c;
  const int64_t n0 = p * kr.nr, cols = std::min<int64_t>(kr.nr, job.d.n - n0);
  struct Run {
    int64_t col, len, offset;  // first column in the panel, columns, element offset at row 0
  };
  Run runs[64];  // nr <= 64 columns: at most nr runs
  int count = 0;
  for (int64_t col = 0; col < cols; ++count) {
    const int64_t n = n0 + col, in_group = n % c.group;
    const int64_t len = std::min(cols - col, c.group - in_group);
    runs[count] = {col, len, (n / c.group) * c.group_stride + in_group};
    col += len;
  }
  for (int64_t m = 0; m < job.d.m; ++m) {  // rows past M (padding) are dropped
    const int32_t* t = acc + (m / kr.mr) * kr.mr * kr.nr + (m % kr.mr) * kr.nr;
    int32_t* row = c.base + m * c.row_stride;
    for (int r = 0; r < count; ++r) {
      const Run& run = runs[r];
      for (int64_t i = 0; i < run.len; ++i) {  // modulo 2^32, like the oracle
        row[run.offset + i] = static_cast<int32_t>(static_cast<uint32_t>(t[run.col + i]) +
                                                   static_cast<uint32_t>(bias[run.col + i]));
      }
    }
  }
}

// Panels p0 .. p1-1 of C from packed panels (`panels` and `bias` start at panel p0). Per
// panel, K is cut into chunks of chunk_groups so that the panel's B chunk stays in L1 while
// the loop walks every row block; the row blocks' partial tiles accumulate in `acc` (one
// panel's worth: M x nr int32).
void compute_panels(const Job& job, const uint8_t* panels, const int32_t* bias, int64_t p0, int64_t p1) {
  const Kernel& kr = *job.kr;
  const int64_t row_bytes = job.groups * 4;
  const int64_t panel_bytes = job.groups * kr.nr * 4;
  const int64_t blocks = (job.d.m + kr.mr - 1) / kr.mr, tile = int64_t{kr.mr} * kr.nr;
  auto acc_lease = scratch_pool().take(static_cast<size_t>(blocks * tile) * sizeof(int32_t));
  int32_t* const acc = acc_lease.as<int32_t>();
  if (kr.thread_begin) kr.thread_begin();
  for (int64_t p = p0; p < p1; ++p) {
    const uint8_t* panel = panels + (p - p0) * panel_bytes;
    for (int64_t g0 = 0; g0 < job.groups; g0 += kr.chunk_groups) {
      const int64_t gn = std::min<int64_t>(kr.chunk_groups, job.groups - g0);
      const int64_t a_off = kr.a_tiled ? g0 * 4 * kr.mr : g0 * 4;  // chunk start in a block
      for (int64_t b = 0; b < blocks; ++b) {
        kr.micro(job.a_packed + b * kr.mr * row_bytes + a_off, row_bytes,
                 panel + g0 * kr.nr * 4, gn, acc + b * tile, g0 > 0);
      }
    }
    store_panel(job, p, acc, bias + (p - p0) * kr.nr);
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
  compute_panels(job, panel_lease.as<uint8_t>(), biases.data(), p0, p1);
}

int choose_threads(const FastOptions& o, Dims d, int64_t panels) {
  int64_t t = o.threads > 0 ? o.threads : std::max(1u, std::thread::hardware_concurrency());
  if (o.threads <= 0) t = std::min<int64_t>(t, std::max<int64_t>(1, d.m * d.n * d.k / kMinMacsPerThread));
  return static_cast<int>(std::clamp<int64_t>(t, 1, panels));
}

// Threads grab a few panels at a time: a chunk is computed while its packed B is still in
// L2, and a thread slowed by other load simply takes fewer chunks.
template <class Fn>
void for_panel_chunks(int threads, int64_t panels, Fn fn) {
  std::atomic<int64_t> next{0};
  const std::function<void()> worker = [&fn, &next, panels] {
    for (int64_t p; (p = next.fetch_add(kPanelsPerGrab)) < panels;) fn(p, std::min(p + kPanelsPerGrab, panels));
  };
  detail::run_on_threads(threads, worker);
}

Result<const Kernel*> kernel_of(std::optional<Isa> wanted) {
  const Isa isa = wanted.value_or(best_isa());
  if (!isa_supported(isa)) {
    return make_error(-EOPNOTSUPP, std::string("isa ") + isa_name(isa) + ": not supported by this CPU");
  }
  return &detail::kernel_for(isa);
}

int64_t padded_groups(const Kernel& kr, int64_t k) {
  const int64_t kg = detail::k_per_group(kr);
  return ((k + kg - 1) / kg + kr.group_align - 1) / kr.group_align * kr.group_align;
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
  auto a_lease = scratch_pool().take(packed_a_bytes(**kr, d, groups));
  pack_a(**kr, a, d, groups, a_lease.as<uint8_t>());
  const Job job{*kr, b, CLayout::row_major(c, d.n), d, a_lease.as<uint8_t>(), groups};
  const int64_t panels = (d.n + (*kr)->nr - 1) / (*kr)->nr;
  for_panel_chunks(choose_threads(options, d, panels), panels,
                   [&job](int64_t p0, int64_t p1) { run_panels(job, p0, p1); });
  return {};
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

Status matmul_int8_packed(std::span<const int8_t> a, int64_t m, const PackedB& b, const CLayout& c,
                          const FastOptions& options) {
  if (b.k_ < 1) return make_error(-EINVAL, "matmul_int8_packed: B was never packed (pack_b_int8)");
  const Dims d{m, b.k_, b.n_};
  if (Status s = check_operands(d, a.size(), static_cast<size_t>(d.k * d.n), static_cast<size_t>(d.m * d.n)); !s)
    return s;
  if (c.base == nullptr || c.group < 1) return make_error(-EINVAL, "matmul_int8_packed: C layout without base or group");
  if (options.isa && *options.isa != b.isa_) {
    return make_error(-EINVAL, std::string("matmul_int8_packed: B was packed for isa ") + isa_name(b.isa_) +
                                   ", not " + isa_name(*options.isa));
  }
  if (Status s = check_threads(options); !s) return s;
  const Kernel& kr = detail::kernel_for(b.isa_);
  auto a_lease = scratch_pool().take(packed_a_bytes(kr, d, b.groups_));
  pack_a(kr, a, d, b.groups_, a_lease.as<uint8_t>());
  const Job job{&kr, {}, c, d, a_lease.as<uint8_t>(), b.groups_};
  const int64_t panels = (d.n + kr.nr - 1) / kr.nr, panel_bytes = b.groups_ * kr.nr * 4;
  for_panel_chunks(choose_threads(options, d, panels), panels, [&](int64_t p0, int64_t p1) {
    compute_panels(job, b.panels_.data() + p0 * panel_bytes, b.bias_.data() + p0 * kr.nr, p0, p1);
  });
  return {};
}

}  // namespace ork::ref
