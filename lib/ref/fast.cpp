// The fast int8 path (fast.h): pack A once, then per panel of B columns pack the panel and run
// the micro-kernel over every row block. Threads take contiguous ranges of panels, so each
// thread writes disjoint columns of C and packs only the panels it uses.
#include "lib/ref/fast.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>
#include <thread>

#include "lib/ref/kernels.h"

namespace ork::ref {

const char* isa_name(Isa isa) {
  switch (isa) {
    case Isa::sse2: return "sse2";
    case Isa::avx2: return "avx2";
    case Isa::avx512_vnni: return "avx512_vnni";
    case Isa::amx: return "amx";
  }
  return "unknown";
}

bool isa_supported(Isa isa) {
  __builtin_cpu_init();
  switch (isa) {
    case Isa::sse2: return true;  // part of x86-64
    case Isa::avx2: return __builtin_cpu_supports("avx2");
    case Isa::avx512_vnni:
      return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
             __builtin_cpu_supports("avx512vnni");
    case Isa::amx: return detail::amx_usable();
  }
  return false;
}

std::vector<Isa> supported_isas() {
  std::vector<Isa> out;
  for (Isa isa : {Isa::sse2, Isa::avx2, Isa::avx512_vnni, Isa::amx}) {
    if (isa_supported(isa)) out.push_back(isa);
  }
  return out;
}

Isa best_isa() { return supported_isas().back(); }

namespace {

using detail::AFormat;
using detail::Kernel;

// Below this many multiply-adds a second thread costs more to start than it saves.
constexpr int64_t kMinMacsPerThread = int64_t{1} << 22;

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
        std::memcpy(dst, src, static_cast<size_t>(d.k));
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

// Columns n0 .. n0+nr-1 of B as [groups][nr][4 bytes], zero padded; bias[c] is what the
// tile needs added: -128 * (column sum) on VNNI (undoes the +128 of A), else 0.
void pack_panel(const Kernel& kr, std::span<const int8_t> b, Dims d, int64_t n0, int64_t groups,
                uint8_t* dst, int32_t* bias) {
  const int kg = k_per_group(kr), nr = kr.nr;
  const int64_t cols = std::min<int64_t>(nr, d.n - n0);
  std::memset(dst, 0, static_cast<size_t>(groups * nr * 4));
  std::fill(bias, bias + nr, 0);
  for (int64_t k = 0; k < d.k; ++k) {
    const int8_t* row = b.data() + k * d.n + n0;
    uint8_t* g = dst + (k / kg) * nr * 4;
    const int64_t t = k % kg;
    if (kg == 4) {
      for (int64_t c = 0; c < cols; ++c) g[c * 4 + t] = static_cast<uint8_t>(row[c]);
    }
    if (kr.a_format == AFormat::u8_biased) {
      for (int64_t c = 0; c < cols; ++c) {  // modulo 2^32: K may exceed 2^17
        bias[c] = static_cast<int32_t>(static_cast<uint32_t>(bias[c]) -
                                       static_cast<uint32_t>(128 * row[c]));
      }
    }
    if (kg == 2) {
      for (int64_t c = 0; c < cols; ++c) {
        const int16_t v = row[c];
        std::memcpy(g + c * 4 + t * 2, &v, sizeof v);
      }
    }
  }
}

struct Job {
  const Kernel* kr;
  std::span<const int8_t> b;
  std::span<int32_t> c;
  Dims d;
  const uint8_t* a_packed;
  int64_t groups;
};

void run_panels(const Job& job, int64_t p0, int64_t p1) {
  const Kernel& kr = *job.kr;
  const int64_t row_bytes = job.groups * 4;
  std::vector<uint8_t> panel(static_cast<size_t>(job.groups * kr.nr * 4));
  std::vector<int32_t> bias(static_cast<size_t>(kr.nr));
  std::vector<int32_t> tile(static_cast<size_t>(kr.mr * kr.nr));
  if (kr.thread_begin) kr.thread_begin();
  for (int64_t p = p0; p < p1; ++p) {
    const int64_t n0 = p * kr.nr;
    const int64_t cols = std::min<int64_t>(kr.nr, job.d.n - n0);
    pack_panel(kr, job.b, job.d, n0, job.groups, panel.data(), bias.data());
    for (int64_t m0 = 0; m0 < job.d.m; m0 += kr.mr) {
      const int64_t valid = std::min<int64_t>(kr.mr, job.d.m - m0);  // padded rows dropped
      kr.micro(job.a_packed + m0 * row_bytes, row_bytes, panel.data(), job.groups, tile.data());
      for (int64_t i = 0; i < valid; ++i) {
        int32_t* out = job.c.data() + (m0 + i) * job.d.n + n0;
        const int32_t* t = tile.data() + i * kr.nr;
        for (int64_t col = 0; col < cols; ++col) {  // modulo 2^32, like the oracle
          out[col] = static_cast<int32_t>(static_cast<uint32_t>(t[col]) +
                                          static_cast<uint32_t>(bias[col]));
        }
      }
    }
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
  std::vector<std::jthread> workers;
  for (int t = 1; t < threads; ++t) {
    workers.emplace_back([&job, t, threads, panels] {
      run_panels(job, panels * t / threads, panels * (t + 1) / threads);
    });
  }
  run_panels(job, 0, panels / threads);
  return {};  // the jthreads join here
}

}  // namespace ork::ref
