// ork_bench --cpu-dtypes (cpu_dtypes.h). Per mode, shape and M: min / median / max wall time
// of one call over the rounds (round-robin, so load hits every row alike), the process CPU
// time beside it, GOP/s (2 ops per multiply-add) and two fractions of the peak (VPDPBUSD for
// the integer modes, fp32 FMA for fp16; the peak rows run in every round too): by wall time,
// of the peak row with the thread count the call ran on (ork_stats.cpu_threads); and by CPU
// time, the call's multiply-adds per CPU-second of all its threads over one core's peak per
// CPU-second, which other load on a shared machine does not change. Where the CPU has AMX
// (and the OS grants it), the integer modes also get both fractions of the TDPBSSD peak:
// there int8 runs on tiles, at more than the VPDPBUSD peak, so that peak is the one all
// integer modes compare against (docs/cpu-reference.md "Against the AMX peak"); the modes
// in groups of 32 also against the group-32 tile ceiling beside it ("The tile ceiling of
// groups of 32"). Dense
// results are checked against the oracle (first rows; exit 1 on a mismatch); the quantised
// modes' exactness is the test suite's (tests/e2e).
#include "tools/ork_bench/cpu_dtypes.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstring>
#include <ctime>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "driver/common/fp16.h"
#include "include/ork/ork.h"
#include "lib/matmul/layout.h"
#include "lib/matmul/plan.h"
#include "lib/ref/oracle.h"
#include "lib/ref/random.h"
#include "tools/common/cli.h"
#include "tools/common/spread.h"
#include "tools/ork_bench/peak.h"

namespace ork::bench {
namespace {

struct CpuDtypesArgs {
  std::vector<int64_t> ms{1, 16, 128, 512};
  bool ffn = true;  // also the 7B FFN shape (K = 3584, N = 18944: Qwen2-7B's up projection)
  int rounds = 3;
  bool json = false;
};

struct CpuDtypesRow {
  std::string mode;  // "vpdpbusd peak", "fp32 fma peak", "tdpbssd peak", or a dtype
  int64_t m = 0, k = 0, n = 0;
  PeakUnit unit = PeakUnit::vpdpbusd;  // a peak row's own; a dtype's: fma for fp16, else vpdpbusd
  int units = 1;        // calls per sample
  double macs = 0;      // per call (peak rows: per sample)
  int threads = 0;      // from ork_stats (peak rows: as run)
  bool group32 = false;  // groups of 32 along K (also measured against their ceiling on tiles)
  std::function<bool(ork_stats*)> call;  // one call
  std::function<bool()> check;           // the result against the oracle (dense modes)
  std::vector<double> wall, cpu;         // seconds per call, per round
};

double process_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

volatile uint64_t g_cpu_dtypes_sink;

// The peak rows (peak_loops()), 1 and 2 threads each, samples of about 0.5 ms as the calls'.
void add_peaks(std::vector<CpuDtypesRow>& rows) {
  for (const PeakLoop& l : peak_loops()) {
    const int64_t iters = peak_iters(l, 0.5e-3);
    for (int t : {1, 2}) {
      CpuDtypesRow r{l.name};
      r.unit = l.unit;
      r.threads = t;
      r.macs = static_cast<double>(t * l.macs(iters));
      r.call = [t, run = l.run, iters](ork_stats*) {
        const auto one = [run, iters](int) { g_cpu_dtypes_sink = run(iters); };
        if (t == 1) one(0);
        if (t == 2) on_two_threads(one);
        return true;
      };
      rows.push_back(std::move(r));
    }
  }
}

// One shape's operands and weights on the device, kept for the run.
struct Shape {
  int64_t k = 0, n = 0, m_max = 0;
  std::vector<int8_t> a8, b8, a4v, b4v;  // int8 values; int4 values (one per byte)
  std::vector<uint8_t> a4, b4;           // int4 packed nibble streams
  std::vector<uint16_t> a16, b16;
  std::vector<float> af, wf;
  ork_weights *w8 = nullptr, *w16 = nullptr, *w4 = nullptr;
  ork_qweights *q8 = nullptr, *q4g = nullptr, *q41 = nullptr;
  std::vector<std::vector<uint8_t>> c;  // one C per row
  ~Shape() {
    for (ork_weights* w : {w8, w16, w4}) ork_weights_destroy(w);
    for (ork_qweights* q : {q8, q4g, q41}) ork_qweights_destroy(q);
  }
};

std::vector<uint8_t> pack4(const std::vector<int8_t>& v) {
  std::vector<uint8_t> out(static_cast<size_t>(matmul::int4_packed_bytes(static_cast<int64_t>(v.size()))), 0);
  for (size_t i = 0; i < v.size(); ++i) out[i / 2] |= static_cast<uint8_t>((v[i] & 0xf) << (i % 2 * 4));
  return out;
}

std::vector<uint16_t> halves(size_t n, uint64_t seed) {  // |x| < 2, finite
  const auto r = ref::random_int8(2 * n, seed);
  std::vector<uint16_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint16_t>((uint8_t(r[2 * i]) | uint8_t(r[2 * i + 1]) << 8) & 0xbfff);
  return v;
}

// ggml Q4_1 blocks of the int4 values (affine: weight = d x q + m, q = value + 8), N rows of
// K / 32 blocks of 20 bytes: d and m as halves, then 16 bytes of nibbles, the block's first
// 16 values in the low nibbles (docs/quantisation.md "ggml blocks").
bool import_q4_1(ork_device* dev, Shape& s) {
  const int64_t per_row = s.k / 32;
  std::vector<uint8_t> blocks(static_cast<size_t>(s.n * per_row * 20), 0);
  const uint16_t d = float_to_half(1.0f / 64), mn = float_to_half(-1.0f / 8);
  for (int64_t row = 0; row < s.n; ++row)
    for (int64_t b = 0; b < per_row; ++b) {
      uint8_t* blk = blocks.data() + (row * per_row + b) * 20;
      std::memcpy(blk, &d, 2);
      std::memcpy(blk + 2, &mn, 2);
      for (int64_t j = 0; j < 32; ++j) {
        const auto q = static_cast<uint8_t>(s.b4v[static_cast<size_t>((b * 32 + j) * s.n + row)] + 8);
        blk[4 + j % 16] |= static_cast<uint8_t>(j < 16 ? q : q << 4);
      }
    }
  return ork_qweights_import_ggml(dev, ORK_GGML_Q4_1, blocks.data(), blocks.size(), s.k, s.n, &s.q41) == ORK_OK;
}

bool make_weights(ork_device* dev, Shape& s) {
  const size_t kn = static_cast<size_t>(s.k * s.n), mk = static_cast<size_t>(s.m_max * s.k);
  s.a8 = ref::random_int8(static_cast<int64_t>(mk), 2);
  s.b8 = ref::random_int8(static_cast<int64_t>(kn), 3);
  s.a4v = ref::random_int4(mk, 4);
  s.b4v = ref::random_int4(kn, 5);
  s.a4 = pack4(s.a4v);
  s.b4 = pack4(s.b4v);
  s.a16 = halves(mk, 6);
  s.b16 = halves(kn, 7);
  s.af.resize(mk);
  s.wf.resize(kn);
  for (size_t i = 0; i < mk; ++i) s.af[i] = static_cast<float>(s.a8[i]) / 64.0f;
  for (size_t i = 0; i < kn; ++i) s.wf[i] = static_cast<float>(s.b8[i]) / 128.0f;
  const ork_quant_options q8o{sizeof(ork_quant_options), 8, 0}, q4o{sizeof(ork_quant_options), 4, 32};
  return ork_weights_create(dev, ORK_DTYPE_INT8, s.k, s.n, s.b8.data(), &s.w8) == ORK_OK &&
         ork_weights_create(dev, ORK_DTYPE_FP16, s.k, s.n, s.b16.data(), &s.w16) == ORK_OK &&
         ork_weights_create(dev, ORK_DTYPE_INT4, s.k, s.n, s.b4.data(), &s.w4) == ORK_OK &&
         ork_qweights_create(dev, s.wf.data(), s.k, s.n, &q8o, &s.q8) == ORK_OK &&
         ork_qweights_create(dev, s.wf.data(), s.k, s.n, &q4o, &s.q4g) == ORK_OK && import_q4_1(dev, s);
}

// The dense modes: weights, A, A's and C's dtype.
struct Dense {
  const char* name;
  ork_weights* Shape::*w;
  int32_t a_dtype, c_dtype;
  bool fp;
};

CpuDtypesRow dense_row(ork_device* dev, Shape& s, const Dense& d, int64_t m) {
  std::vector<uint8_t>& c = s.c.emplace_back(static_cast<size_t>(m * s.n * 4));
  const void* a = d.a_dtype == ORK_DTYPE_FP16  ? static_cast<const void*>(s.a16.data())
                  : d.a_dtype == ORK_DTYPE_INT4 ? static_cast<const void*>(s.a4.data())
                                                : static_cast<const void*>(s.a8.data());
  ork_weights* w = s.*d.w;
  CpuDtypesRow r{d.name, m, s.k, s.n, d.fp ? PeakUnit::fma : PeakUnit::vpdpbusd};
  r.units = m == 1 ? 10 : 1;
  r.macs = static_cast<double>(m * s.k * s.n);
  r.call = [dev, w, a, &c, m, d](ork_stats* st) {
    ork_matmul_options o{};
    o.struct_size = sizeof o;
    o.a_dtype = d.a_dtype;
    o.c_dtype = d.c_dtype;
    o.stats = st;
    return ork_matmul(dev, w, a, m, c.data(), &o) == ORK_OK;
  };
  return r;
}

CpuDtypesRow quant_row(ork_device* dev, Shape& s, const char* name, ork_qweights* q, int bits, int64_t m) {
  std::vector<uint8_t>& c = s.c.emplace_back(static_cast<size_t>(m * s.n * 4));
  CpuDtypesRow r{name, m, s.k, s.n};
  r.group32 = q != s.q8;  // the per-channel mode's one group spans K
  r.units = m == 1 ? 10 : 1;
  r.macs = static_cast<double>(m * s.k * s.n);
  r.call = [dev, q, &s, &c, m, bits](ork_stats* st) {
    ork_qmatmul_options o{};
    o.struct_size = sizeof o;
    o.activation_bits = bits;
    o.stats = st;
    return ork_qmatmul(dev, q, s.af.data(), m, reinterpret_cast<float*>(c.data()), &o) == ORK_OK;
  };
  return r;
}

// Row 0 of C against the oracle's row 0.
std::function<bool()> dense_check(Shape& s, const Dense& d, const std::vector<uint8_t>& c) {
  return [&s, d, &c] {
    const ref::Dims one{1, s.k, s.n};
    const size_t k = static_cast<size_t>(s.k), n = static_cast<size_t>(s.n);
    if (d.a_dtype == ORK_DTYPE_FP16) {
      auto plan = matmul::make_plan({1, s.k, s.n}, {.dtype = matmul::DType::fp16, .cores = 1});
      std::vector<float> want(n);
      if (!plan || !ref::matmul_fp16_sliced(std::span(s.a16).first(k), s.b16, want, one, plan->slice_k)) return false;
      return std::memcmp(want.data(), c.data(), n * 4) == 0;
    }
    std::vector<int32_t> want(n);
    const bool ok = d.a_dtype == ORK_DTYPE_INT4 ? !!ref::matmul_int4(std::span(s.a4v).first(k), s.b4v, want, one)
                    : d.w == &Shape::w4            ? !!ref::matmul_int8(std::span(s.a8).first(k), s.b4v, want, one)
                                                   : !!ref::matmul_int8(std::span(s.a8).first(k), s.b8, want, one);
    return ok && std::memcmp(want.data(), c.data(), n * 4) == 0;
  };
}

void add_shape_rows(ork_device* dev, Shape& s, const CpuDtypesArgs& args, std::vector<CpuDtypesRow>& rows) {
  static const Dense dense[] = {{"int8", &Shape::w8, ORK_DTYPE_INT8, ORK_DTYPE_INT32, false},
                                {"fp16", &Shape::w16, ORK_DTYPE_FP16, ORK_DTYPE_FP32, true},
                                {"int4 w4a4", &Shape::w4, ORK_DTYPE_INT4, ORK_DTYPE_INT32, false},
                                {"int4 w4a8", &Shape::w4, ORK_DTYPE_INT8, ORK_DTYPE_INT32, false}};
  for (int64_t m : args.ms) {
    for (const Dense& d : dense) {
      rows.push_back(dense_row(dev, s, d, m));
      rows.back().check = dense_check(s, d, s.c.back());
    }
    rows.push_back(quant_row(dev, s, "q w8a8 per-channel", s.q8, 8, m));
    rows.push_back(quant_row(dev, s, "q w4a8 group 32", s.q4g, 8, m));
    rows.push_back(quant_row(dev, s, "q w4a4 group 32", s.q4g, 4, m));
    rows.push_back(quant_row(dev, s, "q w4a8 Q4_1 (affine)", s.q41, 8, m));
  }
}

bool run_cpu_dtypes_rounds(std::vector<CpuDtypesRow>& rows, int rounds) {
  for (int round = 0; round < rounds; ++round)
    for (CpuDtypesRow& r : rows) {
      ork_stats st{};
      st.struct_size = sizeof st;
      const double c0 = process_cpu_seconds();
      const auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < r.units; ++i)
        if (!r.call(&st)) {
          fmt::print(stderr, "ork_bench --cpu-dtypes: {} M={}: {}\n", r.mode, r.m, ork_last_error());
          return false;
        }
      const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      r.wall.push_back(wall / r.units);
      r.cpu.push_back((process_cpu_seconds() - c0) / r.units);
      if (r.m > 0) r.threads = static_cast<int>(st.cpu_threads);
    }
  return true;
}

const CpuDtypesRow* peak_of(const std::vector<CpuDtypesRow>& rows, PeakUnit unit, int threads) {
  for (const CpuDtypesRow& r : rows)
    if (r.m == 0 && r.unit == unit && r.threads == threads) return &r;
  return nullptr;
}

double rate(const CpuDtypesRow& r) { return r.macs / tools::spread(r.wall).median; }

// Of the `unit` peak row with the call's threads (wall), or of one core's (CPU time): the
// row's own peak, or (amx) the TDPBSSD one, which only the integer modes are measured
// against, or the group-32 ceiling beside it. 0 where there is none.
double pct_of(const std::vector<CpuDtypesRow>& rows, const CpuDtypesRow& r, PeakUnit unit) {
  const CpuDtypesRow* p = peak_of(rows, unit, std::clamp(r.threads, 1, 2));
  return r.m > 0 && p ? 100 * rate(r) / rate(*p) : 0;
}

double cpu_rate(const CpuDtypesRow& r) { return r.macs / tools::spread(r.cpu).median; }

double pct_of_cpu(const std::vector<CpuDtypesRow>& rows, const CpuDtypesRow& r, PeakUnit unit) {
  const CpuDtypesRow* p = peak_of(rows, unit, 1);
  return r.m > 0 && p ? 100 * cpu_rate(r) / cpu_rate(*p) : 0;
}

// Whether `r` is measured against the `unit` peak beside its own: the TDPBSSD peak for every
// mode (fp16 too: it is int8's peak where the CPU has AMX), the VPDPBUSD peak likewise (int8's
// where it has not), the group-32 tile ceiling for the modes in groups of 32.
bool measured_against(const CpuDtypesRow& r, PeakUnit unit) {
  if (unit == PeakUnit::tdpbssd || unit == PeakUnit::vpdpbusd) return true;
  if (unit == PeakUnit::tdpbssd_group32) return r.group32;
  return unit == r.unit;
}

// The peak the int8 kernel is measured against: TDPBSSD where the CPU has AMX (int8 runs on
// tiles there, above the VPDPBUSD peak), else VPDPBUSD. Every dtype's row gives its fraction
// of it, so fp16 and the quantised modes read against int8's own yardstick.
PeakUnit int8_peak(const std::vector<CpuDtypesRow>& rows) {
  return peak_of(rows, PeakUnit::tdpbssd, 1) != nullptr ? PeakUnit::tdpbssd : PeakUnit::vpdpbusd;
}

// Of `unit`'s peak by wall (cpu false) or by CPU time; 0 where it does not apply or was not run.
double pct_vs(const std::vector<CpuDtypesRow>& rows, const CpuDtypesRow& r, PeakUnit unit, bool cpu) {
  if (!measured_against(r, unit)) return 0;
  return cpu ? pct_of_cpu(rows, r, unit) : pct_of(rows, r, unit);
}

const char* unit_name(PeakUnit u) {
  return u == PeakUnit::fma ? "fp32 fma" : u == PeakUnit::tdpbssd ? "tdpbssd" : u == PeakUnit::tdpbssd_group32 ? "tdpbssd group-32 ceiling" : "vpdpbusd";
}

nlohmann::json cpu_dtypes_rows_json(const std::vector<CpuDtypesRow>& rows) {
  nlohmann::json out = nlohmann::json::array();
  const PeakUnit i8 = int8_peak(rows);
  for (const CpuDtypesRow& r : rows) {
    const tools::Spread w = tools::spread(r.wall), c = tools::spread(r.cpu);
    out.push_back({{"mode", r.mode}, {"m", r.m}, {"k", r.k}, {"n", r.n}, {"threads", r.threads},
                   {"wall_us_min", w.min * 1e6}, {"wall_us_median", w.median * 1e6}, {"wall_us_max", w.max * 1e6},
                   {"cpu_us_median", c.median * 1e6}, {"gop_per_s_median", 2 * rate(r) / 1e9},
                   {"peak", unit_name(r.unit)}, {"pct_of_peak", pct_of(rows, r, r.unit)},
                   {"pct_of_core_peak_by_cpu_time", pct_of_cpu(rows, r, r.unit)}});
    if (r.m > 0) {
      out.back()["pct_of_int8_peak"] = pct_vs(rows, r, i8, false);
      out.back()["pct_of_int8_core_peak_by_cpu_time"] = pct_vs(rows, r, i8, true);
    }
    if (r.m > 0 && measured_against(r, PeakUnit::tdpbssd) && peak_of(rows, PeakUnit::tdpbssd, 1) != nullptr) {
      out.back()["pct_of_amx_peak"] = pct_vs(rows, r, PeakUnit::tdpbssd, false);
      out.back()["pct_of_amx_core_peak_by_cpu_time"] = pct_vs(rows, r, PeakUnit::tdpbssd, true);
    }
    if (r.m > 0 && measured_against(r, PeakUnit::tdpbssd_group32) &&
        peak_of(rows, PeakUnit::tdpbssd_group32, 1) != nullptr) {
      out.back()["pct_of_amx_group32_ceiling"] = pct_vs(rows, r, PeakUnit::tdpbssd_group32, false);
      out.back()["pct_of_amx_group32_core_ceiling_by_cpu_time"] = pct_vs(rows, r, PeakUnit::tdpbssd_group32, true);
    }
  }
  return out;
}

// A percentage column: "-" where it does not apply.
std::string pct_cell(double pct) { return pct > 0 ? fmt::format("{:.1f}", pct) : "-"; }

void print_cpu_dtypes_rows(const std::vector<CpuDtypesRow>& rows, int rounds) {
  const bool amx = peak_of(rows, PeakUnit::tdpbssd, 1) != nullptr;
  const PeakUnit i8 = int8_peak(rows);
  fmt::print("cpu device per dtype, {} rounds round-robin; peak: fp32 FMA for fp16, VPDPBUSD for the rest{}. "
             "% wall: of the peak row with the call's threads; % cpu: MACs per CPU-second over one core's; "
             "% i8: of int8's peak ({}), every mode\n", rounds,
             amx ? " (% amx: of the TDPBSSD peak; % g32: groups of 32, of their ceiling on tiles)" : "",
             unit_name(i8));
  fmt::print("{:<24} {:>4} {:>5} {:>6} {:>2} {:>32} {:>10} {:>9} {:>7} {:>6} {:>9} {:>8}{}\n", "mode", "M", "K", "N",
             "t", "wall min / median / max us", "cpu us", "GOP/s", "% wall", "% cpu", "% i8 wall", "% i8 cpu",
             amx ? fmt::format(" {:>10} {:>9} {:>10} {:>9}", "% amx wall", "% amx cpu", "% g32 wall", "% g32 cpu")
                 : "");
  for (const CpuDtypesRow& r : rows) {
    const tools::Spread w = tools::spread(r.wall), c = tools::spread(r.cpu);
    fmt::print("{:<24} {:>4} {:>5} {:>6} {:>2} {:>32} {:>10.0f} {:>9.1f} {:>7} {:>6} {:>9} {:>8}{}\n", r.mode, r.m,
               r.k, r.n, r.threads, fmt::format("{:.0f} / {:.0f} / {:.0f}", w.min * 1e6, w.median * 1e6, w.max * 1e6),
               c.median * 1e6, 2 * rate(r) / 1e9, pct_cell(pct_of(rows, r, r.unit)), pct_cell(pct_of_cpu(rows, r, r.unit)),
               pct_cell(pct_vs(rows, r, i8, false)), pct_cell(pct_vs(rows, r, i8, true)),
               amx ? fmt::format(" {:>10} {:>9} {:>10} {:>9}", pct_cell(pct_vs(rows, r, PeakUnit::tdpbssd, false)),
                                 pct_cell(pct_vs(rows, r, PeakUnit::tdpbssd, true)),
                                 pct_cell(pct_vs(rows, r, PeakUnit::tdpbssd_group32, false)),
                                 pct_cell(pct_vs(rows, r, PeakUnit::tdpbssd_group32, true)))
                   : "");
  }
}

int parse_cpu_dtypes_args(CpuDtypesArgs& args, int argc, char** argv) {
  CLI::App app{"ork_bench --cpu-dtypes: the cpu device per dtype against the measured VPDPBUSD and FMA peaks "
                "(and, with AMX, the TDPBSSD peak and the group-32 tile ceiling)"};
  tools::add_conventions(app, "ork_bench");
  bool mode = false, no_ffn = false;
  app.add_flag("--cpu-dtypes", mode, "this mode");
  app.add_option("--m", args.ms, "rows of A (repeatable; default 1 16 128 512)")->check(CLI::Range(1, 4096));
  app.add_flag("--no-ffn", no_ffn, "only K = N = 2048, not the 7B FFN shape K = 3584, N = 18944");
  tools::add_repeat(app, args.rounds, 1000, "rounds (min / median / max reported)", "--reps");
  tools::add_json(app, args.json);
  const int rc = tools::parse_command_line(app, argc, argv);
  args.ffn = !no_ffn;
  return rc;
}

}  // namespace

int run_cpu_dtypes(int argc, char** argv) {
  CpuDtypesArgs args;
  if (int rc = parse_cpu_dtypes_args(args, argc, argv); rc >= 0) return rc;
  if (!vnni_peak_available()) {
    fmt::print(stderr, "ork_bench --cpu-dtypes: this CPU has no AVX-512 VNNI: no peak to measure against\n");
    return 2;
  }
  ork_device* dev = nullptr;
  if (ork_device_open("cpu", &dev) != ORK_OK) return fmt::print(stderr, "ork_bench: {}\n", ork_last_error()), 2;
  std::unique_ptr<ork_device, void (*)(ork_device*)> keep(dev, ork_device_close);
  std::vector<std::unique_ptr<Shape>> shapes;
  std::vector<CpuDtypesRow> rows;
  add_peaks(rows);
  for (auto [k, n] : {std::pair<int64_t, int64_t>{2048, 2048}, {3584, 18944}}) {
    if (k != 2048 && !args.ffn) continue;
    auto& s = *shapes.emplace_back(std::make_unique<Shape>());
    s.k = k, s.n = n, s.m_max = *std::max_element(args.ms.begin(), args.ms.end());
    s.c.reserve(args.ms.size() * 8);  // rows keep references to their C
    if (!make_weights(dev, s)) return fmt::print(stderr, "ork_bench: {}\n", ork_last_error()), 2;
    add_shape_rows(dev, s, args, rows);
  }
  if (!run_cpu_dtypes_rounds(rows, args.rounds)) return 1;
  bool exact = true;
  for (const CpuDtypesRow& r : rows)
    if (r.check && !r.check()) exact = false, fmt::print(stderr, "MISMATCH: {} M={} K={}\n", r.mode, r.m, r.k);
  if (args.json)
    fmt::print("{}\n", nlohmann::json{{"rounds", args.rounds}, {"rows", cpu_dtypes_rows_json(rows)}, {"exact", exact}}.dump(2));
  else
    print_cpu_dtypes_rows(rows, args.rounds);
  return exact ? 0 : 1;
}

}  // namespace ork::bench
