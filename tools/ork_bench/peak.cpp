// ork_bench --peak: the fast int8 path (lib/ref/fast.h, through PackedB as the cpu device
// calls it) against what this machine can do, all measured in one run, round-robin:
// - the VPDPBUSD zmm peak of one core and of two, the fp32 FMA (VFMADD231PS zmm) peak and,
//   where AMX is usable, the TDPBSSD one the same way (register-only loops, peak_loops.cpp);
// - a streaming read of as many bytes as the decode call's packed B, the same buffer every
//   time, as the decode call reuses its B (so both see the same cache level);
// - the decode call (M = 1) per tier, rows kernel and full tiles, on 1 and 2 threads;
// - M = 512 per tier on 1 and 2 threads;
// - the cpu device's other dtypes, as it runs them, on 1 and 2 threads, decode and M = 512:
//   fp16 (lib/ref/fp16_matmul.h, B prepared once) against the fp32 FMA peak, and W4A4 int4
//   (A's nibbles widened, then the int8 kernel on B's int4 values) against the VPDPBUSD one.
// Each figure is min / median / max over rounds; "% peak" and "2t/1t" (rate over the
// 1-thread twin's rate) use medians.
#include "tools/ork_bench/peak.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <deque>
#include <functional>
#include <latch>
#include <optional>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

#include "lib/matmul/layout.h"
#include "lib/matmul/plan.h"
#include "lib/ref/fast.h"
#include "lib/ref/fp16_matmul.h"
#include "lib/ref/oracle.h"
#include "lib/ref/random.h"
#include "tools/common/cli.h"
#include "tools/common/spread.h"

namespace ork::bench {

// peak.h. Runs fn(0) on this thread and fn(1) on a second one, released together: wall seconds from
// the release until both returned.
double on_two_threads(const std::function<void(int)>& fn) {
  std::latch ready(2);
  std::chrono::steady_clock::time_point t0;
  std::thread other([&] {
    ready.arrive_and_wait();
    fn(1);
  });
  ready.arrive_and_wait();
  t0 = std::chrono::steady_clock::now();
  fn(0);
  other.join();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

namespace {

struct PeakArgs {
  int64_t k = 2048, n = 2048, m = 512;
  int rounds = 15;
  int batch = 20;  // decode calls per sample
  int sweep = 0;   // also M = 2 .. sweep, best tier, rows kernel against full tiles, 1 thread
  bool json = false;
};

enum class Kind { peak, fma_peak, amx_peak, amx_group32, stream, decode, big };

struct Row {
  std::string name;
  Kind kind;
  int threads;
  double work;                 // per unit: MACs, or bytes for a stream read
  int units;                   // calls (or loop runs, passes) per sample
  std::function<bool()> run;   // one sample: `units` units; false = failed
  std::vector<double> seconds;  // per unit, one per round
  bool exact = true;
  std::string base;  // the row this one is compared with: its 1-thread twin
  bool int8 = true;  // B's bytes are the int8 packed B (the stream comparison applies)
  bool fp32 = false;  // measured against the FMA peak (fp16's kernels multiply-add in fp32)
  bool amx = false;   // on AMX tiles: measured against the TDPBSSD peak where there is one
  std::function<bool()> check;  // the other dtypes' rows: their result against the oracle
};

double median_of(const Row& r) { return tools::spread(r.seconds).median; }
double rate_of(const Row& r) { return r.work / median_of(r); }

template <class Fn>
double peak_seconds_of(Fn&& fn) {
  const auto t0 = std::chrono::steady_clock::now();
  fn();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

volatile uint64_t g_sink;  // results of the reference loops, so none is dropped

// The peak rows (peak_loops(): VPDPBUSD, fp32 FMA and, where AMX is usable, TDPBSSD), 1 and
// 2 threads each, the loop length chosen so that one sample takes about 2 ms.
void add_peak_rows(std::vector<Row>& rows) {
  for (const PeakLoop& l : peak_loops()) {
    const int64_t iters = peak_iters(l, 2e-3);
    const Kind kind = l.unit == PeakUnit::fma       ? Kind::fma_peak
                      : l.unit == PeakUnit::tdpbssd ? Kind::amx_peak
                      : l.unit == PeakUnit::tdpbssd_group32 ? Kind::amx_group32
                                                    : Kind::peak;
    for (int t : {1, 2})
      rows.push_back({l.name, kind, t, static_cast<double>(t * l.macs(iters)), 1, [run = l.run, iters, t] {
                        if (t == 1) g_sink = run(iters);
                        if (t == 2) on_two_threads([run, iters](int) { g_sink = run(iters); });
                        return true;
                      }});
  }
}

// Streaming reads of `bytes` (the decode call's packed B), passes per sample for ~2 ms.
void add_stream_rows(std::vector<Row>& rows, const std::vector<uint8_t>& buf) {
  const size_t bytes = buf.size() / 512 * 512;  // two halves of whole 256-byte steps
  const double probe = peak_seconds_of([&] { g_sink = stream_read(buf.data(), bytes); });
  const int passes = std::clamp(static_cast<int>(2e-3 / probe), 1, 64);
  const double b = static_cast<double>(bytes);
  rows.push_back({"stream read of B's bytes", Kind::stream, 1, b, passes, [&buf, bytes, passes] {
                    for (int i = 0; i < passes; ++i) g_sink = stream_read(buf.data(), bytes);
                    return true;
                  }});
  rows.push_back({"stream read of B's bytes", Kind::stream, 2, b, passes, [&buf, bytes, passes] {
                    on_two_threads([&](int t) {
                      for (int i = 0; i < passes; ++i) g_sink = stream_read(buf.data() + t * bytes / 2, bytes / 2);
                    });
                    return true;
                  }});
}

struct Operands {
  std::vector<int8_t> am, b;          // A: M = args.m rows (a smaller M uses the first rows)
  std::vector<int32_t> want;          // the oracle: A's first 16 rows
  std::vector<ref::PackedB> packed;    // per tier: best, then avx512_vnni when it differs
  std::deque<std::vector<int32_t>> c;  // one C per row (stable addresses), checked after the rounds
  // fp16: A and B as finite binary16 values, the oracle's first rows at the plan's slice width.
  std::vector<uint16_t> a16, b16;
  std::optional<ref::PackedFp16> p16;  // B prepared once, as the cpu device keeps it
  std::vector<float> want16;
  int64_t slice_k = 0;
  // int4 W4A4: A as the packed nibble stream, B's int4 values packed for the int8 kernel.
  std::vector<uint8_t> a4;
  std::vector<int8_t> b4;
  std::vector<int32_t> want4;
  std::optional<ref::PackedB> packed4;
  std::deque<std::vector<float>> c16;
  std::deque<std::vector<int32_t>> c4;
};

// One row of matmul_int8_packed: A's first `m` rows, `units` calls per sample, into c.
Row packed_row(Operands& ops, size_t tier, int64_t m, int threads, bool short_path, int units) {
  const ref::PackedB& b = ops.packed[tier];
  const std::span<const int8_t> a = std::span<const int8_t>(ops.am).first(static_cast<size_t>(m * b.k()));
  const std::string how = m > 8 ? "" : short_path ? " (rows kernel)" : " (full tiles)";
  const std::string name = fmt::format("{} {}{}", m == 1 ? "decode" : fmt::format("M={}", m), ref::isa_name(b.isa()), how);
  ops.c.emplace_back(static_cast<size_t>(m * b.n()));
  std::vector<int32_t>& c = ops.c.back();
  const ref::FastOptions o{.threads = threads, .isa = b.isa(), .short_path = short_path};
  const Kind kind = m == 1 ? Kind::decode : Kind::big;
  Row r{name, kind, threads, static_cast<double>(m * b.k() * b.n()), units, [&b, a, &c, m, o, units] {
          for (int i = 0; i < units; ++i)
            if (!ref::matmul_int8_packed(a, m, b, c, o)) return false;
          return true;
        }};
  r.amx = b.isa() == ref::Isa::amx && (m > 8 || !short_path);  // the rows kernel is VNNI's (kernels.h)
  return r;
}

Operands make_operands(const PeakArgs& args) {
  Operands ops{ref::random_int8(args.m * args.k, 2), ref::random_int8(args.k * args.n, 3)};
  const int64_t rows = std::min<int64_t>(16, args.m);
  ops.want.resize(static_cast<size_t>(rows * args.n));
  (void)ref::matmul_int8(std::span(ops.am).first(static_cast<size_t>(rows * args.k)), ops.b, ops.want,
                         {rows, args.k, args.n});
  for (ref::Isa isa : {ref::best_isa(), ref::Isa::avx512_vnni}) {
    if (!ops.packed.empty() && ops.packed[0].isa() == isa) continue;
    auto p = ref::pack_b_int8(ops.b, args.k, args.n, ref::BOrder::row_major, isa);
    if (p) ops.packed.push_back(std::move(*p));
  }
  return ops;
}

void make_dtype_operands(const PeakArgs& args, Operands& ops) {
  const auto halves = [](size_t n, uint64_t seed) {  // |x| < 2: exponent field <= 15
    std::vector<uint16_t> v(n);
    const auto r = ref::random_int8(2 * n, seed);
    for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint16_t>((uint8_t(r[2 * i]) | uint8_t(r[2 * i + 1]) << 8) & 0xbfff);
    return v;
  };
  ops.a16 = halves(static_cast<size_t>(args.m * args.k), 5);
  ops.b16 = halves(static_cast<size_t>(args.k * args.n), 6);
  auto plan = matmul::make_plan({1, args.k, args.n}, {.dtype = matmul::DType::fp16, .cores = 1});
  ops.slice_k = plan ? plan->slice_k : args.k;  // the cpu device's slice width (lib/api)
  if (auto p = ref::pack_b_fp16(ops.b16, args.k, args.n); p) ops.p16 = std::move(*p);
  const int64_t rows = std::min<int64_t>(16, args.m);
  ops.want16.resize(static_cast<size_t>(rows * args.n));
  (void)ref::matmul_fp16_sliced(std::span(ops.a16).first(static_cast<size_t>(rows * args.k)), ops.b16, ops.want16,
                                {rows, args.k, args.n}, ops.slice_k);
  const std::vector<int8_t> a4 = ref::random_int4(static_cast<size_t>(args.m * args.k), 7);
  ops.b4 = ref::random_int4(static_cast<size_t>(args.k * args.n), 8);
  ops.a4.assign(static_cast<size_t>(matmul::int4_packed_bytes(args.m * args.k)), 0);
  for (size_t i = 0; i < a4.size(); ++i) ops.a4[i / 2] |= static_cast<uint8_t>((a4[i] & 0xf) << (i % 2 * 4));
  ops.want4.resize(static_cast<size_t>(rows * args.n));
  (void)ref::matmul_int4(std::span(a4).first(static_cast<size_t>(rows * args.k)), ops.b4, ops.want4,
                         {rows, args.k, args.n});
  if (auto p = ref::pack_b_int8(ops.b4, args.k, args.n, ref::BOrder::row_major); p) ops.packed4 = std::move(*p);
}

// The cpu device's fp16 call (lib/matmul/cpu_matmul.cpp): A's first m rows, `units` calls per sample.
Row fp16_row(const PeakArgs& args, Operands& ops, int64_t m, int threads, int units) {
  std::vector<float>& c = ops.c16.emplace_back(static_cast<size_t>(m * args.n));
  const std::span<const uint16_t> a = std::span(ops.a16).first(static_cast<size_t>(m * args.k));
  Row r{fmt::format("{} fp16", m == 1 ? "decode" : fmt::format("M={}", m)), m == 1 ? Kind::decode : Kind::big, threads,
        static_cast<double>(m * args.k * args.n), units, [&ops, a, &c, m, threads, units] {
          for (int i = 0; i < units; ++i)
            if (!ref::matmul_fp16_packed(a, m, *ops.p16, c, ops.slice_k, {.threads = threads})) return false;
          return true;
        }};
  r.int8 = false;
  r.fp32 = true;
  r.check = [&ops, &c] {
    const size_t n = std::min(c.size(), ops.want16.size());
    return std::memcmp(c.data(), ops.want16.data(), n * sizeof(float)) == 0;
  };
  return r;
}

// The cpu device's W4A4 call: the packed A widened to int8, then the int8 kernel.
Row int4_row(const PeakArgs& args, Operands& ops, int64_t m, int threads, int units) {
  std::vector<int32_t>& c = ops.c4.emplace_back(static_cast<size_t>(m * args.n));
  const ref::FastOptions o{.threads = threads};
  Row r{fmt::format("{} int4 (w4a4)", m == 1 ? "decode" : fmt::format("M={}", m)), m == 1 ? Kind::decode : Kind::big,
        threads, static_cast<double>(m * args.k * args.n), units, [&ops, &c, m, k = args.k, o, units] {
          std::vector<int8_t> wide(static_cast<size_t>(m * k));
          for (int i = 0; i < units; ++i) {
            const size_t bytes = static_cast<size_t>(matmul::int4_packed_bytes(m * k));
            if (!matmul::widen_int4(std::span(ops.a4).first(bytes), m * k, wide)) return false;
            if (!ref::matmul_int8_packed(wide, m, *ops.packed4, c, o)) return false;
          }
          return true;
        }};
  r.int8 = false;
  r.amx = ops.packed4->isa() == ref::Isa::amx && m > 8;  // the int8 kernel's tiles past short M
  r.check = [&ops, &c] { return std::equal(ops.want4.begin(), ops.want4.begin() + std::min(c.size(), ops.want4.size()), c.begin()); };
  return r;
}

std::vector<Row> make_rows(const PeakArgs& args, Operands& ops, const std::vector<uint8_t>& stream_buf) {
  std::vector<Row> rows;
  add_peak_rows(rows);
  add_stream_rows(rows, stream_buf);
  for (size_t tier = 0; tier < ops.packed.size(); ++tier)
    for (bool short_path : {true, false})
      for (int t : {1, 2}) rows.push_back(packed_row(ops, tier, 1, t, short_path, args.batch));
  for (int64_t m = 2; m <= std::min<int64_t>(args.sweep, args.m); ++m)
    for (bool short_path : {true, false})
      if (short_path || m <= 8) rows.push_back(packed_row(ops, 0, m, 1, short_path, args.batch));
  for (size_t tier = 0; tier < ops.packed.size(); ++tier)
    for (int t : {1, 2}) rows.push_back(packed_row(ops, tier, args.m, t, true, 1));
  for (int t : {1, 2}) rows.push_back(fp16_row(args, ops, 1, t, args.batch));
  for (int t : {1, 2}) rows.push_back(fp16_row(args, ops, args.m, t, 1));
  if (ops.packed4) {
    for (int t : {1, 2}) rows.push_back(int4_row(args, ops, 1, t, args.batch));
    for (int t : {1, 2}) rows.push_back(int4_row(args, ops, args.m, t, 1));
  }
  for (Row& r : rows) r.base = r.name;  // a 2-thread row's twin has the same name
  return rows;
}

void run_rounds(std::vector<Row>& rows, int rounds) {
  for (int round = 0; round < rounds; ++round) {
    for (Row& r : rows) {
      if (!r.exact) continue;
      bool ok = true;
      const double s = peak_seconds_of([&] { ok = r.run(); });
      if (!ok) r.exact = false;
      r.seconds.push_back(s / r.units);
    }
  }
}

// Every result's first rows (up to 16) equal the oracle's.
void check_rows(std::vector<Row>& rows, const Operands& ops) {
  size_t ci = 0;
  for (Row& r : rows) {
    if (r.check) {
      r.exact = r.exact && r.check();
      continue;
    }
    if (r.kind != Kind::decode && r.kind != Kind::big) continue;
    const std::vector<int32_t>& c = ops.c[ci++];
    const size_t n = std::min(c.size(), ops.want.size());
    r.exact = r.exact && std::equal(ops.want.begin(), ops.want.begin() + static_cast<std::ptrdiff_t>(n), c.begin());
  }
}

const Row* find(const std::vector<Row>& rows, Kind kind, int threads, const std::string& name = "") {
  for (const Row& r : rows)
    if (r.kind == kind && r.threads == threads && (name.empty() || r.name == name)) return &r;
  return nullptr;
}

struct Derived {
  const char* peak = "";  // the peak row pct_peak is of
  double pct_peak = 0;    // of the same thread count's measured peak (MAC rows)
  double pct_stream = 0;  // decode: B's bytes per second over the stream read's
  double scaling = 0;     // 2-thread rows: this rate over the 1-thread twin's (medians)
};

Derived derive(const std::vector<Row>& rows, const Row& r, double b_bytes) {
  Derived d;
  const Kind of = r.fp32 ? Kind::fma_peak : r.amx && find(rows, Kind::amx_peak, 1) ? Kind::amx_peak : Kind::peak;
  const Row* peak = find(rows, of, r.threads);
  if (r.kind >= Kind::decode) d.peak = peak->name.c_str();
  const Row* stream = find(rows, Kind::stream, r.threads);
  if (r.kind == Kind::decode || r.kind == Kind::big) d.pct_peak = 100 * rate_of(r) / rate_of(*peak);
  if (r.kind == Kind::decode && r.int8) d.pct_stream = 100 * (b_bytes / median_of(r)) / rate_of(*stream);
  if (const Row* one = find(rows, r.kind, 1, r.base); r.threads == 2 && one) d.scaling = rate_of(r) / rate_of(*one);
  return d;
}

std::string unit_of(const Row& r) { return r.kind == Kind::stream ? "GB/s" : "GMAC/s"; }

nlohmann::json rows_json(const std::vector<Row>& rows, double b_bytes) {
  nlohmann::json out = nlohmann::json::array();
  for (const Row& r : rows) {
    const tools::Spread sp = tools::spread(r.seconds);
    const Derived d = derive(rows, r, b_bytes);
    out.push_back({{"name", r.name}, {"threads", r.threads}, {"us_min", sp.min * 1e6}, {"us_median", sp.median * 1e6},
                   {"us_max", sp.max * 1e6}, {"rounds", sp.n}, {"units_per_sample", r.units},
                   {unit_of(r) == "GB/s" ? "gb_per_s_median" : "gmac_per_s_median", rate_of(r) / 1e9},
                   {"peak", d.peak}, {"pct_of_peak", d.pct_peak}, {"pct_of_stream", d.pct_stream},
                   {"two_over_one_thread", d.scaling}, {"exact", r.exact}});
  }
  return out;
}

// The per-core L2 size the C library reports (0 when it does not know).
double l2_bytes() { return static_cast<double>(std::max(0L, sysconf(_SC_LEVEL2_CACHE_SIZE))); }

// Where a B reused call after call lives: in L2 when one core's share fits.
std::string b_level(double b_bytes, int threads) {
  const double l2 = l2_bytes();
  if (l2 <= 0) return "cache level unknown";
  return b_bytes / threads <= l2 ? "fits L2" : "larger than L2: from L3 (or DRAM)";
}

void print_rows(const PeakArgs& args, const std::vector<Row>& rows, double b_bytes) {
  fmt::print("fast int8 path vs measured peak: K={} N={}, decode M=1 ({} calls per sample), M={}; {} rounds, "
             "round-robin; % peak: of VPDPBUSD's, fp16's of FMA's, the amx tier's of TDPBSSD's where measured\nB "
             "packed: {:.2f} MiB per tier, the same B every call (cache-resident, not cold); L2 "
             "{:.1f} MiB per core: 1 thread {}, 2 threads {}\n",
             args.k, args.n, args.batch, args.m, args.rounds, b_bytes / (1 << 20), l2_bytes() / (1 << 20),
             b_level(b_bytes, 1), b_level(b_bytes, 2));
  fmt::print("{:<34} {:>2} {:>28} {:>10} {:>8} {:>9} {:>6}  {}\n", "row", "t", "min / median / max us", "median",
             "% peak", "% stream", "2t/1t", "exact");
  for (const Row& r : rows) {
    const tools::Spread sp = tools::spread(r.seconds);
    const Derived d = derive(rows, r, b_bytes);
    fmt::print("{:<34} {:>2} {:>28} {:>10} {:>8} {:>9} {:>6}  {}\n", r.name, r.threads,
               fmt::format("{:.1f} / {:.1f} / {:.1f}", sp.min * 1e6, sp.median * 1e6, sp.max * 1e6),
               fmt::format("{:.1f} {}", rate_of(r) / 1e9, unit_of(r) == "GB/s" ? "GB/s" : "G"),
               d.pct_peak > 0 ? fmt::format("{:.1f}", d.pct_peak) : "-",
               d.pct_stream > 0 ? fmt::format("{:.1f}", d.pct_stream) : "-",
               d.scaling > 0 ? fmt::format("{:.2f}", d.scaling) : "-", r.kind >= Kind::decode ? (r.exact ? "yes" : "NO") : "");
  }
}

// The memory bound of the decode call: B's bytes at the streaming rate, as % of the peak.
nlohmann::json bound_json(const std::vector<Row>& rows, const PeakArgs& args, double b_bytes) {
  nlohmann::json j;
  for (int t : {1, 2}) {
    const double s = b_bytes / rate_of(*find(rows, Kind::stream, t));
    const double pct = 100 * (static_cast<double>(args.k * args.n) / s) / rate_of(*find(rows, Kind::peak, t));
    j[fmt::format("t{}", t)] = {{"b_read_us", s * 1e6}, {"decode_pct_of_peak_at_most", pct}};
  }
  return j;
}

int parse(PeakArgs& args, int argc, char** argv) {
  CLI::App app{"ork_bench --peak: the fast int8 path against the measured VPDPBUSD peak (TDPBSSD with AMX, beside "
                "the group-32 tile ceiling) and the streaming-read bound"};
  tools::add_conventions(app, "ork_bench");
  bool peak = false;
  app.add_flag("--peak", peak, "this mode");
  tools::add_number(app, "--m", args.m, "rows of the large case", int64_t{8}, int64_t{4096});
  tools::add_number(app, "--k", args.k, "columns of A, rows of B", int64_t{1}, int64_t{1} << 15);
  tools::add_number(app, "--n", args.n, "columns of B and C", int64_t{1}, int64_t{1} << 15);
  tools::add_repeat(app, args.rounds, 1000, "rounds (min / median / max reported)", "--reps");
  tools::add_number(app, "--batch", args.batch, "decode calls per sample", 1, 10000);
  tools::add_number(app, "--sweep", args.sweep, "also M = 2 .. this, best tier, rows kernel and full tiles, 1 thread", 0,
                    64);
  tools::add_json(app, args.json);
  return tools::parse_command_line(app, argc, argv);
}

}  // namespace

int run_peak(int argc, char** argv) {
  PeakArgs args;
  if (int rc = parse(args, argc, argv); rc >= 0) return rc;
  if (!vnni_peak_available() || !ref::isa_supported(ref::Isa::avx512_vnni)) {
    fmt::print(stderr, "ork_bench --peak: this CPU has no AVX-512 VNNI: no peak to measure against\n");
    return 2;
  }
  Operands ops = make_operands(args);
  make_dtype_operands(args, ops);
  const double b_bytes = static_cast<double>(ops.packed[0].bytes());
  const std::vector<uint8_t> stream_buf(ops.packed[0].bytes(), 1);
  std::vector<Row> rows = make_rows(args, ops, stream_buf);
  run_rounds(rows, args.rounds);
  check_rows(rows, ops);
  const bool exact = std::all_of(rows.begin(), rows.end(), [](const Row& r) { return r.exact; });
  if (args.json) {
    nlohmann::json j{{"shape", {{"m", args.m}, {"k", args.k}, {"n", args.n}}}, {"rounds", args.rounds},
                     {"b_bytes", b_bytes}, {"b_reused_every_call", true},
                     {"l2_bytes_per_core", l2_bytes()}, {"rows", rows_json(rows, b_bytes)},
                     {"memory_bound", bound_json(rows, args, b_bytes)}, {"exact", exact},
                     {"peak_two_over_one_thread", rate_of(*find(rows, Kind::peak, 2)) / rate_of(*find(rows, Kind::peak, 1))}};
    fmt::print("{}\n", j.dump(2));
  } else {
    print_rows(args, rows, b_bytes);
    const nlohmann::json bound = bound_json(rows, args, b_bytes);
    if (const double scaling = rate_of(*find(rows, Kind::peak, 2)) / rate_of(*find(rows, Kind::peak, 1)); scaling < 1.8)
      fmt::print("note: the 2-thread peak is only {:.2f}x the 1-thread one: other load held a CPU, so the 2-thread "
                 "rows do not show what two free cores do\n", scaling);
    for (int t : {1, 2}) {
      const auto& b = bound[fmt::format("t{}", t)];
      fmt::print("memory bound, {} thread(s): B read at the stream rate takes {:.1f} us: decode <= {:.1f} % of peak\n",
                 t, b["b_read_us"].get<double>(), b["decode_pct_of_peak_at_most"].get<double>());
    }
  }
  return exact ? 0 : 1;
}

}  // namespace ork::bench
