// The fast int8 path (fast.h): pack A once, then per chunk of B column panels pack the chunk
// and run the micro-kernel over every row block. Threads grab chunks from a shared counter,
// so each chunk's columns of C are written by one thread only.
#include "lib/ref/fast.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "lib/ref/kernels.h"

namespace ork::ref {

const char* isa_name(Isa isa) {
  switch (isa) {
    case Isa::generic: return "generic";
    case Isa::sse2: return "sse2";
    case Isa::avx2: return "avx2";
    case Isa::avx512_vnni: return "avx512_vnni";
    case Isa::amx: return "amx";
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
  }
#endif
  return false;
}

std::vector<Isa> supported_isas() {
  std::vector<Isa> out;
  for (Isa isa : {Isa::generic, Isa::sse2, Isa::avx2, Isa::avx512_vnni, Isa::amx}) {
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
  }
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

// A as rows of `groups` 4-byte groups in the kernel's format, padded with the encoding of
// zero (0, or 0x80 for biased uint8) up to the group count and up to a multiple of mr rows,
// so the kernel always reads whole tiles.
std::vector<uint8_t> pack_a(const Kernel& kr, std::span<const int8_t> a, Dims d, int64_t groups) {
  const int64_t row_bytes = groups * 4;
  const int64_t rows = (d.m + kr.mr - 1) / kr.mr * kr.mr;
  const uint8_t zero = kr.a_format == AFormat::u8_biased ? 0x80 : 0;
  std::vector<uint8_t> out(static_cast<size_t>(rows * row_bytes), zero);
  for (int64_t m = 0; m < d.m; ++m) {
    const int8_t* src = a.data() + m * d.k;
    uint8_t* dst = out.data() + m * row_bytes;
    switch (kr.a_format) {
      case AFormat::u8_biased:
        for (int64_t k = 0; k < d.k; ++k) dst[k] = static_cast<uint8_t>(src[k]) ^ 0x80u;
        break;
      case AFormat::s8:
        if (kr.a_tiled) {
          // [m/mr][K/64][mr][64]: one tile of mr rows x 64 K bytes is contiguous, so tile
          // loads do not hit the same few L1 sets (a row stride of K bytes would).
          uint8_t* block = out.data() + (m / kr.mr) * kr.mr * row_bytes + (m % kr.mr) * 64;
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
  return out;
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
      for (size_t i = 0; i < free_.size(); ++i) {
        if (free_[i].second >= bytes) {
          found = std::move(free_[i].first);
          found_bytes = free_[i].second;
          free_.erase(free_.begin() + static_cast<std::ptrdiff_t>(i));
          break;
        }
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
  std::span<int32_t> c;
  Dims d;
  const uint8_t* a_packed;
  int64_t groups;
};

// Copies the valid rows / columns of one panel's accumulated tiles into C, adding the bias.
void store_panel(const Job& job, int64_t p, const int32_t* acc, const int32_t* bias) {
  const Kernel& kr = *job.kr;
  const int64_t n0 = p * kr.nr, cols = std::min<int64_t>(kr.nr, job.d.n - n0);
  for (int64_t m = 0; m < job.d.m; ++m) {  // rows past M (padding) are dropped
    const int32_t* t = acc + (m / kr.mr) * kr.mr * kr.nr + (m % kr.mr) * kr.nr;
    int32_t* out = job.c.data() + m * job.d.n + n0;
    for (int64_t col = 0; col < cols; ++col) {  // modulo 2^32, like the oracle
      out[col] = static_cast<int32_t>(static_cast<uint32_t>(t[col]) + static_cast<uint32_t>(bias[col]));
    }
  }
}

// Panels p0 .. p1-1 of C. Per panel, K is cut into chunks of chunk_groups so that the
// panel's B chunk stays in L1 while the loop walks every row block; the row blocks'
// partial tiles accumulate in `acc` (one panel's worth: M x nr int32).
void run_panels(const Job& job, int64_t p0, int64_t p1) {
  const Kernel& kr = *job.kr;
  const int64_t row_bytes = job.groups * 4;
  const int64_t panel_bytes = job.groups * kr.nr * 4;
  const int64_t blocks = (job.d.m + kr.mr - 1) / kr.mr, tile = int64_t{kr.mr} * kr.nr;
  // Scratch is fully written before it is read (pack_panels zeroes the padding itself).
  auto panel_lease = scratch_pool().take(static_cast<size_t>((p1 - p0) * panel_bytes));
  auto acc_lease = scratch_pool().take(static_cast<size_t>(blocks * tile) * sizeof(int32_t));
  uint8_t* const panels = panel_lease.as<uint8_t>();
  int32_t* const acc = acc_lease.as<int32_t>();
  std::vector<int32_t> biases(static_cast<size_t>((p1 - p0) * kr.nr));
  pack_panels(kr, job.b, job.d, p0, p1, job.groups, panels, biases.data());
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
    store_panel(job, p, acc, biases.data() + (p - p0) * kr.nr);
  }
  if (kr.thread_end) kr.thread_end();
}

int choose_threads(const FastOptions& o, Dims d, int64_t panels) {
  int64_t t = o.threads > 0 ? o.threads : std::max(1u, std::thread::hardware_concurrency());
  if (o.threads <= 0) t = std::min<int64_t>(t, std::max<int64_t>(1, d.m * d.n * d.k / kMinMacsPerThread));
  return static_cast<int>(std::clamp<int64_t>(t, 1, panels));
}

}  // namespace

Status matmul_int8_fast(std::span<const int8_t> a, std::span<const int8_t> b,
                        std::span<int32_t> c, Dims d, const FastOptions& options) {
  if (Status s = check_operands(d, a.size(), b.size(), c.size()); !s) return s;
  const Isa isa = options.isa.value_or(best_isa());
  if (!isa_supported(isa)) {
    return make_error(-EOPNOTSUPP, std::string("isa ") + isa_name(isa) + ": not supported by this CPU");
  }
  if (options.threads < 0) {
    return make_error(-EINVAL, "threads = " + std::to_string(options.threads) + ": must be >= 0");
  }
  const Kernel& kr = detail::kernel_for(isa);
  const int64_t kg = detail::k_per_group(kr);
  const int64_t groups = ((d.k + kg - 1) / kg + kr.group_align - 1) / kr.group_align * kr.group_align;
  const std::vector<uint8_t> a_packed = pack_a(kr, a, d, groups);
  const Job job{&kr, b, c, d, a_packed.data(), groups};
  const int64_t panels = (d.n + kr.nr - 1) / kr.nr;
  const int threads = choose_threads(options, d, panels);
  // Threads grab a few panels at a time: a packed chunk is computed while it is still in L2,
  // and a thread slowed by other load simply takes fewer chunks.
  std::atomic<int64_t> next{0};
  const auto worker = [&job, &next, panels] {
    for (int64_t p; (p = next.fetch_add(kPanelsPerGrab)) < panels;) {
      run_panels(job, p, std::min(p + kPanelsPerGrab, panels));
    }
  };
  std::vector<std::jthread> workers;
  for (int t = 1; t < threads; ++t) workers.emplace_back(worker);
  worker();
  return {};  // the jthreads join here
}

}  // namespace ork::ref
