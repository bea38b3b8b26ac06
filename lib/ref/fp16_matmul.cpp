// fp16_matmul.h: tiers, B's strips, the per-call driver and the generic tile. Built with
// -ffp-contract=off (meson.build): the generic tile's `acc + a*b` stays two roundings, of
// which the product's is exact, as in the oracle.
#include "lib/ref/fp16_matmul.h"

#include <algorithm>
#include <cerrno>
#include <string>
#include <type_traits>

#include "driver/common/cpu_features.h"
#include "driver/common/fp16.h"
#include "lib/ref/fp16_kernels.h"
#include "lib/ref/split.h"

namespace ork::ref {
namespace detail {
namespace {

constexpr int64_t kStrip = PackedFp16::kStrip;

// Any CPU: the tile's accumulators in memory (4 x 64 fp32, 1 KiB, L1), the inner loop over
// 64 columns of one row left to the compiler's vectoriser. Reads the fp32 buffer only.
void tile_generic(const Fp16Tile& t) {
  float acc[kTileRows][kStrip] = {};
  for (int64_t k = 0; k < t.kn; ++k) {
    const float* __restrict b = t.bf + k * kStrip;
    for (int64_t r = 0; r < t.rows; ++r) {
      const float x = t.a[r * t.lda + k];
      float* __restrict d = acc[r];  // never B: without restrict -O2 keeps this loop scalar
      for (int64_t j = 0; j < kStrip; ++j) d[j] = d[j] + x * b[j];
    }
  }
  for (int64_t r = 0; r < t.rows; ++r) {
    float* c = t.c + r * t.ldc;
    for (int64_t j = 0; j < t.cols; ++j) c[j] = t.first ? acc[r][j] : c[j] + acc[r][j];
  }
}

void widen_generic(const uint16_t* in, float* out, int64_t count) {
  for (int64_t i = 0; i < count; ++i) out[i] = half_to_float(in[i]);
}

}  // namespace

const Fp16Kernel& fp16_generic_kernel() {
  static const Fp16Kernel k{Fp16Isa::generic, tile_generic, widen_generic, false};
  return k;
}

}  // namespace detail

namespace {

using detail::Fp16Kernel;
using detail::Fp16Tile;
using detail::kTileRows;
constexpr int64_t kStrip = PackedFp16::kStrip;
// Up to this many rows the tiles read B's halves directly (the call is bound by reading B,
// and every row tile widens them again); from here a strip's slice is widened once into a
// buffer that every row tile then reads.
constexpr int64_t kDirectRows = 8;
// Strips per grab: 2 x 64 columns x K halves = 512 KiB at K = 2048, as much B as the int8
// path's grab of 4 panels (split.h).
constexpr int64_t kStripsPerGrab = 2;

const Fp16Kernel& fp16_kernel_for([[maybe_unused]] Fp16Isa isa) {  // unused where only the portable tier exists
#if defined(__x86_64__)
  if (isa == Fp16Isa::avx512) return detail::fp16_avx512_kernel();
  if (isa == Fp16Isa::avx2) return detail::fp16_avx2_kernel();
#endif
  return detail::fp16_generic_kernel();
}

Result<const Fp16Kernel*> fp16_kernel_of(std::optional<Fp16Isa> wanted) {
  const Fp16Isa isa = wanted.value_or(best_fp16_isa());
  if (!fp16_isa_supported(isa))
    return make_error(-EOPNOTSUPP, std::string("fp16 isa ") + fp16_isa_name(isa) + ": not supported by this CPU");
  return &fp16_kernel_for(isa);
}

struct Call {
  const Fp16Kernel& kr;
  const PackedFp16& b;
  const uint16_t* ah;  // A as given, M x K halves
  const float* af;     // A in fp32
  int64_t m, slice_k;
  bool direct;
  float* out;  // M x N fp32
};

// A NaN cell gets the oracle's own NaN: the kernels' sums equal the oracle's for every other
// value (FMA included, fp16_kernels_x86.cpp), but which of several NaN operands comes out
// is the compiled code's operand order, and it differs (the oracle keeps a NaN partial sum,
// a vectorised add may return the product's NaN). NaN cells are rare, so each is computed
// again by the oracle's cell function (oracle.h); the scan is one compare per cell.
void recompute_nans(const Call& x, int64_t s, int64_t cols) {
  const int64_t k = x.b.k(), n = x.b.n();
  for (int64_t r = 0; r < x.m; ++r) {
    float* c = x.out + r * n + s * kStrip;
    for (int64_t j = 0; j < cols; ++j)
      if (c[j] != c[j]) c[j] = fp16_sliced_cell(x.ah + r * k, x.b.strip(s) + j, kStrip, k, x.slice_k);
  }
}

// Strip s of C over every slice and row tile. Per slice the buffer (kept per thread: a kept
// worker reuses it from call to call) holds the strip's slice in fp32 unless the tiles widen
// it themselves.
void run_strip(const Call& x, int64_t s) {
  thread_local std::vector<float> buf;
  const int64_t k = x.b.k(), n = x.b.n();
  const int64_t cols = std::min(kStrip, n - s * kStrip);
  for (int64_t k0 = 0; k0 < k; k0 += x.slice_k) {
    const int64_t kn = std::min(x.slice_k, k - k0);
    const uint16_t* bh = x.b.strip(s) + k0 * kStrip;
    Fp16Tile t{.bh = x.direct ? bh : nullptr, .kn = kn, .ldc = n, .cols = cols, .first = k0 == 0};
    if (!x.direct) {
      if (buf.size() < static_cast<size_t>(kn * kStrip)) buf.resize(static_cast<size_t>(kn * kStrip));
      x.kr.widen(bh, buf.data(), kn * kStrip);
      t.bf = buf.data();
    }
    t.lda = k;
    for (int64_t r0 = 0; r0 < x.m; r0 += kTileRows) {
      t.a = x.af + r0 * k + k0;
      t.rows = std::min(kTileRows, x.m - r0);
      t.c = x.out + r0 * n + s * kStrip;
      x.kr.tile(t);
    }
  }
  recompute_nans(x, s, cols);
}

Status check_call(size_t a_size, int64_t m, const PackedFp16& b, size_t c_size, int64_t slice_k, const Fp16Options& o) {
  if (b.k() < 1 || b.n() < 1) return make_error(-EINVAL, "fp16 matmul: B was not packed");
  if (Status s = check_operands({m, b.k(), b.n()}, a_size, static_cast<size_t>(b.k() * b.n()), c_size); !s) return s;
  if (slice_k < 1) return make_error(-EINVAL, "slice_k = " + std::to_string(slice_k) + ": must be >= 1");
  if (o.threads < 0) return make_error(-EINVAL, "threads = " + std::to_string(o.threads) + ": must be >= 0");
  return {};
}

template <class Out, class Store>
Status run(std::span<const uint16_t> a, int64_t m, const PackedFp16& b, std::span<Out> c, int64_t slice_k,
           const Fp16Options& o, Store store) {
  if (Status s = check_call(a.size(), m, b, c.size(), slice_k, o); !s) return s;
  auto kr = fp16_kernel_of(o.isa);
  if (!kr) return kr.error();
  const bool direct = (*kr)->direct && m <= kDirectRows;
  const int64_t strips = (b.n() + kStrip - 1) / kStrip;
  const int threads = detail::split_threads(o.threads, m * b.k() * b.n(), b.k() * b.n() * 2, direct, strips);
  if (o.threads_used) *o.threads_used = threads;
  // A in fp32, kept per calling thread from call to call (a fresh buffer is zeroed and
  // faulted in on every call). Only ever grown.
  thread_local std::vector<float> af, total;
  if (af.size() < a.size()) af.resize(a.size());
  (*kr)->widen(a.data(), af.data(), static_cast<int64_t>(a.size()));
  float* out = nullptr;
  if constexpr (std::is_same_v<Out, float>) {
    out = c.data();
  } else {
    if (total.size() < c.size()) total.resize(c.size());
    out = total.data();
  }
  const Call x{**kr, b, a.data(), af.data(), m, slice_k, direct, out};
  detail::for_panel_chunks(threads, strips, [&x](int64_t s0, int64_t s1) {
    for (int64_t s = s0; s < s1; ++s) run_strip(x, s);
  }, kStripsPerGrab);
  if constexpr (!std::is_same_v<Out, float>)
    for (size_t i = 0; i < c.size(); ++i) store(c[i], total[i]);
  return {};
}

}  // namespace

const char* fp16_isa_name(Fp16Isa isa) {
  switch (isa) {
    case Fp16Isa::generic: return "generic";
    case Fp16Isa::avx2: return "avx2";
    case Fp16Isa::avx512: return "avx512";
  }
  return "unknown";
}

bool fp16_isa_supported(Fp16Isa isa) {
  if (isa == Fp16Isa::generic) return true;
#if defined(__x86_64__)
  // AVX-512F has VCVTPH2PS on zmm and FMA on zmm; AVX2's tier needs FMA3 and F16C beside it.
  if (isa == Fp16Isa::avx512) return cpu::has(cpu::kAvx512f);
  if (isa == Fp16Isa::avx2) return cpu::has(cpu::kAvx2 | cpu::kFma | cpu::kF16c);
#endif
  return false;
}

std::vector<Fp16Isa> supported_fp16_isas() {
  std::vector<Fp16Isa> out;
  for (Fp16Isa isa : {Fp16Isa::generic, Fp16Isa::avx2, Fp16Isa::avx512})
    if (fp16_isa_supported(isa)) out.push_back(isa);
  return out;
}

Fp16Isa best_fp16_isa() { return supported_fp16_isas().back(); }

Result<PackedFp16> pack_b_fp16(std::span<const uint16_t> b, int64_t k, int64_t n) {
  if (k < 1 || n < 1) return make_error(-EINVAL, "pack_b_fp16: K = " + std::to_string(k) + ", N = " + std::to_string(n) + ": both must be >= 1");
  if (static_cast<__int128>(b.size()) != static_cast<__int128>(k) * n)
    return make_error(-EINVAL, "pack_b_fp16: B has " + std::to_string(b.size()) + " elements, K x N = " + std::to_string(k * n));
  PackedFp16 p;
  p.k_ = k;
  p.n_ = n;
  const int64_t strips = (n + kStrip - 1) / kStrip;
  p.strips_.assign(static_cast<size_t>(strips * k * kStrip), 0);  // columns past N: +0
  for (int64_t s = 0; s < strips; ++s) {
    const int64_t cols = std::min(kStrip, n - s * kStrip);
    uint16_t* out = p.strips_.data() + s * k * kStrip;
    for (int64_t r = 0; r < k; ++r) std::copy_n(b.data() + r * n + s * kStrip, cols, out + r * kStrip);
  }
  return p;
}

Status unpack_b_fp16(const PackedFp16& b, std::span<uint16_t> out) {
  if (static_cast<__int128>(out.size()) != static_cast<__int128>(b.k()) * b.n())
    return make_error(-EINVAL, "unpack_b_fp16: out holds " + std::to_string(out.size()) + " halves, K x N = " + std::to_string(b.k() * b.n()));
  for (int64_t s = 0; s * kStrip < b.n(); ++s) {
    const int64_t cols = std::min(kStrip, b.n() - s * kStrip);
    for (int64_t r = 0; r < b.k(); ++r) std::copy_n(b.strip(s) + r * kStrip, cols, out.data() + r * b.n() + s * kStrip);
  }
  return {};
}

Status matmul_fp16_packed(std::span<const uint16_t> a, int64_t m, const PackedFp16& b, std::span<float> c,
                          int64_t slice_k, const Fp16Options& options) {
  return run(a, m, b, c, slice_k, options, [](float& o, float v) { o = v; });
}

Status matmul_fp16_packed_to_fp16(std::span<const uint16_t> a, int64_t m, const PackedFp16& b,
                                  std::span<uint16_t> c, int64_t slice_k, const Fp16Options& options) {
  return run(a, m, b, c, slice_k, options, [](uint16_t& o, float v) { o = float_to_half(v); });
}

Status matmul_fp16_rows(std::span<const uint16_t> a, std::span<const uint16_t> b, std::span<float> c, Dims d,
                        int64_t slice_k, const Fp16Options& options) {
  if (Status s = check_operands(d, a.size(), b.size(), c.size()); !s) return s;
  auto p = pack_b_fp16(b, d.k, d.n);
  if (!p) return p.error();
  return matmul_fp16_packed(a, d.m, *p, c, slice_k, options);
}

Status matmul_fp16_rows_to_fp16(std::span<const uint16_t> a, std::span<const uint16_t> b,
                                std::span<uint16_t> c, Dims d, int64_t slice_k, const Fp16Options& options) {
  if (Status s = check_operands(d, a.size(), b.size(), c.size()); !s) return s;
  auto p = pack_b_fp16(b, d.k, d.n);
  if (!p) return p.error();
  return matmul_fp16_packed_to_fp16(a, d.m, *p, c, slice_k, options);
}

}  // namespace ork::ref
