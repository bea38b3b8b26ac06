// ork_bench: speed of the CPU reference, printed as ratios against baselines measured in the
// same run (never a timing assert): the plain oracle loop, the fast int8 path per ISA
// and thread count, oneDNN's int8 GEMM when built with it, and the emulated NPU's whole
// ork_matmul call (tools/ork_bench/emulator.h). Also the host-side layout
// work of one matmul (pack A, unpack C) against a per-element index-function loop.
// Every result is checked against the oracle: exit 1 when the fast path differs.
// `ork_bench --decode` is another mode: a whole model's decode loop (decode.h); `--async`:
// asynchronous jobs and batch replay against blocking calls (async.h); `--peak`: the fast
// path against the measured VPDPBUSD peak and streaming-read bound (peak.h); `--host-dtypes`:
// the library's host time per call of int8, fp16 and int4 (host_dtypes.h); `--cpu-dtypes`: the
// cpu device per dtype against the measured peaks (cpu_dtypes.h).
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <nlohmann/json.hpp>
#include <sys/resource.h>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "lib/ref/fast.h"
#include "lib/ref/oracle.h"
#include "tools/common/cli.h"
#include "tools/common/input_limits.h"
#include "tools/common/spread.h"
#include "tools/ork_bench/baselines.h"
#include "tools/ork_bench/async.h"
#include "tools/ork_bench/decode.h"
#include "tools/ork_bench/emulator.h"
#include "tools/ork_bench/cpu_dtypes.h"
#include "tools/ork_bench/host_dtypes.h"
#include "tools/ork_bench/layout_bench.h"
#include "tools/ork_bench/peak.h"
#include "lib/ref/random.h"

namespace ork::bench {
namespace {

using ork::ref::random_int8;

struct Args {
  int64_t m = 512, k = 2048, n = 2048;
  std::vector<int64_t> shape;  // positional M K N (the tools' convention); --m/--k/--n too
  std::string device;          // --device: the NPU candidate; "" = the emulator's defaults
  int reps = 7;
  int64_t oracle_rows = 16;  // the oracle loop runs on this many rows (0 = all)
  int threads = 0;
  bool skip_oracle = false;
  bool skip_onednn = false;
  bool skip_emu = false;
  bool emu_all = false;
  std::string isa;  // only this tier's fast candidates ("" = every tier the CPU has)
  bool json = false;
};

struct Measured {
  std::string name;
  double seconds = 0;      // wall time, best of the repetitions (the ratios use it)
  std::vector<double> samples;  // every repetition's wall time: min / median / max reported
  double cpu_seconds = 0;  // process CPU time (user + system) of that best repetition
  double gops = 0;
  bool exact = false;
  std::string error;
};

using RunFn = std::function<bool(std::span<int32_t>, std::string&)>;

double cpu_now() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + 1e-6 * double(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

// Wall seconds of one call (-1 on failure); `cpu` gets the process CPU seconds it used. On a
// shared machine CPU time shows the work a candidate needs even when other load stretches
// the wall time (spinning OpenMP workers count as CPU time too).
double seconds_of(const RunFn& run, std::span<int32_t> c, std::string& error, double* cpu = nullptr) {
  const double c0 = cpu_now();
  const auto t0 = std::chrono::steady_clock::now();
  if (!run(c, error)) return -1;
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (cpu) *cpu = cpu_now() - c0;
  return wall;
}

// Candidates run round-robin, one call each per round, best time kept: a load burst from
// other processes then hits every candidate alike, which keeps the ratios honest.
void time_round_robin(std::vector<Measured>& out, const std::vector<RunFn>& runs, int reps,
                      double ops, std::vector<std::vector<int32_t>>& results) {
  for (int rep = 0; rep < reps; ++rep) {
    for (size_t i = 0; i < runs.size(); ++i) {
      if (!out[i].error.empty()) continue;
      double cpu = 0;
      const double s = seconds_of(runs[i], results[i], out[i].error, &cpu);
      if (s >= 0) out[i].samples.push_back(s);
      if (s >= 0 && s < out[i].seconds) {
        out[i].seconds = s;
        out[i].cpu_seconds = cpu;
      }
    }
  }
  for (Measured& m : out) m.gops = m.error.empty() ? ops / m.seconds / 1e9 : 0;
}

// The oracle is a plain loop (~0.1 GOPS): it runs once on the first `oracle_rows` rows only,
// enough for its GOPS (per-row work) and for checking every candidate's first rows. Every
// candidate must also agree with the first fast result on all rows.
std::vector<Measured> run_all(const Args& args) {
  const ref::Dims d{args.m, args.k, args.n};
  const auto a = random_int8(d.m * d.k, 1), b = random_int8(d.k * d.n, 2);
  const int64_t rows = args.oracle_rows > 0 ? std::min(args.oracle_rows, d.m) : d.m;
  std::vector<int32_t> want(rows * d.n);
  std::vector<Measured> out;
  if (!args.skip_oracle) {
    Measured o{.name = fmt::format("oracle ({} rows)", rows), .exact = true};
    o.seconds = seconds_of([&](std::span<int32_t>, std::string& e) {
      Status s = ref::matmul_int8(std::span(a).first(rows * d.k), b, want, {rows, d.k, d.n});
      if (!s) e = s.error().message;
      return s.ok();
    }, want, o.error, &o.cpu_seconds);
    o.gops = 2.0 * rows * d.k * d.n / o.seconds / 1e9;
    out.push_back(o);
  }
  std::vector<Measured> timed;
  std::vector<RunFn> runs;
  const int all = args.threads > 0 ? args.threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::vector<int> thread_counts{1};
  if (all > 1) thread_counts.push_back(all);
  for (ref::Isa isa : ref::supported_isas()) {
    if (!args.isa.empty() && args.isa != ref::isa_name(isa)) continue;
    for (int t : thread_counts) {
      timed.push_back({.name = fmt::format("fast_{}_t{}", ref::isa_name(isa), t), .seconds = 1e30});
      runs.push_back([&a, &b, d, t, isa](std::span<int32_t> c, std::string& e) {
        Status s = ref::matmul_int8_fast(a, b, c, d, {.threads = t, .isa = isa});
        if (!s) e = s.error().message;
        return s.ok();
      });
    }
  }
  // The emulator before oneDNN: oneDNN's OpenMP workers keep spinning for a while after each
  // call and would slow whatever runs next (the next round's slowest fast tier does).
  for (Candidate& cand : args.skip_emu ? std::vector<Candidate>{} : emulator_candidates(d.k, d.n, args.emu_all, args.device)) {
    timed.push_back({.name = cand.name, .seconds = 1e30});
    runs.push_back([&a, &b, run = cand.run](std::span<int32_t> c, std::string& e) { return run(a, b, c, e); });
  }
  for (Candidate& cand : args.skip_onednn ? std::vector<Candidate>{} : onednn_candidates(d.m, d.k, d.n)) {
    timed.push_back({.name = cand.name, .seconds = 1e30});
    runs.push_back([&a, &b, run = cand.run](std::span<int32_t> c, std::string& e) { return run(a, b, c, e); });
  }
  std::vector<std::vector<int32_t>> results(runs.size(), std::vector<int32_t>(d.m * d.n));
  time_round_robin(timed, runs, args.reps, 2.0 * d.m * d.k * d.n, results);
  for (size_t i = 0; i < timed.size(); ++i) {
    timed[i].exact = timed[i].error.empty() && results[i] == results[0] &&
                     (args.skip_oracle || std::equal(want.begin(), want.end(), results[i].begin()));
  }
  out.insert(out.end(), timed.begin(), timed.end());
  return out;
}

const Measured* best_where(const std::vector<Measured>& v, auto&& pred) {
  const Measured* best = nullptr;
  for (const Measured& r : v) {
    if (r.error.empty() && pred(r) && (!best || r.gops > best->gops)) best = &r;
  }
  return best;
}

// The command line into args: -1 to go on, else the exit code (--help, --version, bad usage).
int parse_args(Args& args, int argc, char** argv) {
  CLI::App app{"ork_bench: GOPS of the CPU reference (oracle loop, fast int8 path, oneDNN) "
               "and host layout time, as ratios measured in one run"};
  tools::add_conventions(app, "ork_bench");
  app.add_option("shape", args.shape, "M K N (default 512 2048 2048); also --m --k --n")
      ->expected(0, 3)
      ->transform(tools::whole_number(1, int64_t{1} << 16));
  tools::add_number(app, "--m", args.m, "rows of A and C", int64_t{1}, int64_t{1} << 16);
  tools::add_number(app, "--k", args.k, "columns of A, rows of B", int64_t{1}, int64_t{1} << 16);
  tools::add_number(app, "--n", args.n, "columns of B and C", int64_t{1}, int64_t{1} << 16);
  tools::add_repeat(app, args.reps, 1000, "repetitions per candidate (min / median / max reported; ratios from the min)",
                    "--reps");
  tools::add_device(app, args.device, "; given: the NPU candidate runs on it (default: emu-rknpu, 1 and 3 cores)");
  tools::add_number(app, "--threads", args.threads, "threads of the multi-threaded fast run (0 = all)", 0, 256);
  tools::add_number(app, "--oracle-rows", args.oracle_rows, "rows the plain oracle loop runs on (0 = all; slow)",
                    int64_t{0}, int64_t{1} << 16);
  app.add_flag("--no-oracle", args.skip_oracle, "skip the oracle loop (candidates are then only checked against each other)");
  app.add_flag("--no-onednn", args.skip_onednn, "leave oneDNN out (its OpenMP threads keep spinning between calls)");
  app.add_flag("--no-emu", args.skip_emu, "leave the emulated NPU candidates out");
  app.add_flag("--emu-all", args.emu_all, "also emu-rocket (3 cores) and emu-rknpu without the weight cache");
  app.add_option("--isa", args.isa, "time only this tier of the fast path (generic, sse2, avx2, avx512_vnni, amx, sdot, "
                 "or best = the fastest this CPU has): slow tiers run between the calls evict what the others keep "
                 "in cache, and AVX-512 code slows AMX on some hosts");
  tools::add_json(app, args.json);
  // The other modes parse their own options (main below): named here so --help finds them.
  app.footer("Other modes, each with its own --help: --decode (a decode loop per device), --async (jobs and "
             "batches), --peak (the fast path against the measured peaks), --host-dtypes (host us per call of "
             "int8 / fp16 / int4 on the zero-work emulator), --cpu-dtypes (the cpu device per dtype against its "
             "peak)");
  return tools::parse_command_line(app, argc, argv);
}

// The shape given together, its buffers within memory, the tier one this CPU has: 0, or 2.
int check_args(Args& args) {
  if (!args.shape.empty()) {
    if (args.shape.size() != 3) {
      fmt::print(stderr, "ork_bench: give M K N together\n");
      return 2;
    }
    args.m = args.shape[0], args.k = args.shape[1], args.n = args.shape[2];
  }
  // A, B, C, the per-candidate copies of C and the emulator's BOs: bounded before allocating.
  const auto m = static_cast<uint64_t>(args.m), k = static_cast<uint64_t>(args.k), n = static_cast<uint64_t>(args.n);
  if (const std::string e = tools::check_memory(fmt::format("M K N = {} {} {}", m, k, n), 4 * (m * k + k * n) + 64 * m * n);
      !e.empty()) {
    fmt::print(stderr, "ork_bench: {}\n", e);
    return 2;
  }
  if (args.isa == "best") args.isa = ref::isa_name(ref::best_isa());
  if (!args.isa.empty()) {
    std::string have;
    bool known = false;
    for (ref::Isa isa : ref::supported_isas()) {
      have += std::string(have.empty() ? "" : ", ") + ref::isa_name(isa);
      known |= args.isa == ref::isa_name(isa);
    }
    if (!known) {
      fmt::print(stderr, "ork_bench: --isa {}: not a tier this CPU has (it has: {})\n", args.isa, have);
      return 2;
    }
  }
  return 0;
}

const Measured* best_named(const std::vector<Measured>& results, std::string_view prefix) {
  return best_where(results, [prefix](const Measured& r) { return r.name.starts_with(prefix); });
}

nlohmann::json results_json(const Args& args, const std::vector<Measured>& results, const LayoutFigures& layout,
                            bool fast_exact) {
  const Measured* oracle = best_named(results, "oracle");
  const Measured* fast = best_named(results, "fast_");
  const Measured* dnnl = best_named(results, "onednn");
  nlohmann::json j;
  j["shape"] = {{"m", args.m}, {"k", args.k}, {"n", args.n}};
  j["onednn"] = onednn_description();
  for (const Measured& r : results) {
    const tools::Spread sp = tools::spread(r.samples.empty() ? std::vector<double>{r.seconds} : r.samples);
    j["results"].push_back({{"name", r.name}, {"ms", r.seconds * 1e3}, {"ms_min", sp.min * 1e3},
                            {"ms_median", sp.median * 1e3}, {"ms_max", sp.max * 1e3}, {"repeat", sp.n},
                            {"cpu_ms", r.cpu_seconds * 1e3}, {"gops", r.gops}, {"exact", r.exact}, {"error", r.error}});
  }
  if (fast && dnnl) j["ratios"]["fast_over_onednn"] = fast->gops / dnnl->gops;
  if (fast && oracle) j["ratios"]["fast_over_oracle"] = fast->gops / oracle->gops;
  for (const Measured& r : results) {
    if (fast && r.name.starts_with("emu_") && r.error.empty()) j["ratios"][r.name + "_over_fast"] = r.seconds / fast->seconds;
  }
  j["layout"] = layout_json(layout);
  j["fast_path_exact"] = fast_exact;
  return j;
}

void print_results(const Args& args, const std::vector<Measured>& results, const LayoutFigures& layout) {
  const Measured* oracle = best_named(results, "oracle");
  const Measured* fast = best_named(results, "fast_");
  const Measured* dnnl = best_named(results, "onednn");
  fmt::print("int8 C = A x B, M={} K={} N={}; {}\n", args.m, args.k, args.n, onednn_description());
  fmt::print("{:<28} {:>10} {:>28} {:>10} {:>9} {:>10} {:>10}  {}\n", "candidate", "ms (min)", "min / median / max ms",
             "cpu ms", "GOPS", "x oracle", "x oneDNN", "exact");
  for (const Measured& r : results) {
    if (!r.error.empty()) {
      fmt::print("{:<28} failed: {}\n", r.name, r.error);
      continue;
    }
    const tools::Spread sp = tools::spread(r.samples.empty() ? std::vector<double>{r.seconds} : r.samples);
    fmt::print("{:<28} {:>10.3f} {:>28} {:>10.3f} {:>9.2f} {:>10} {:>10}  {}\n", r.name, r.seconds * 1e3,
               fmt::format("{:.3f} / {:.3f} / {:.3f}", sp.min * 1e3, sp.median * 1e3, sp.max * 1e3),
               r.cpu_seconds * 1e3, r.gops,
               oracle ? fmt::format("{:.1f}", r.gops / oracle->gops) : "-",
               dnnl ? fmt::format("{:.2f}", r.gops / dnnl->gops) : "-",
               r.exact ? "yes" : "NO");
  }
  for (const Measured& r : results) {
    if (fast && r.name.starts_with("emu_") && r.error.empty())
      fmt::print("{}: {:.2f}x the time of the fast path ({})\n", r.name, r.seconds / fast->seconds, fast->name);
  }
  print_layout(layout);
}

}  // namespace

int main_impl(int argc, char** argv) {
  Args args;
  if (int rc = parse_args(args, argc, argv); rc >= 0) return rc;
  if (int rc = check_args(args); rc != 0) return rc;
  const std::vector<Measured> results = run_all(args);
  const LayoutFigures layout = measure_layout(args.reps);
  bool fast_exact = true;  // the fast path and the emulator: both must return the oracle's bytes
  for (const Measured& r : results) {
    if ((r.name.starts_with("fast_") || r.name.starts_with("emu_") || r.name.starts_with("npu_")) &&
        (!r.error.empty() || !r.exact))
      fast_exact = false;
  }
  if (args.json)
    fmt::print("{}\n", results_json(args, results, layout, fast_exact).dump(2));
  else
    print_results(args, results, layout);
  return fast_exact ? 0 : 1;
}

}  // namespace ork::bench

int main(int argc, char** argv) {
  return ork::tools::run_main("ork_bench", [&] {
    for (int i = 1; i < argc; ++i) {
      if (std::string_view(argv[i]) == "--decode") return ork::bench::run_decode(argc, argv);  // decode.h
      if (std::string_view(argv[i]) == "--async") return ork::bench::run_async(argc, argv);    // async.h
      if (std::string_view(argv[i]) == "--peak") return ork::bench::run_peak(argc, argv);      // peak.h
      if (std::string_view(argv[i]) == "--host-dtypes") return ork::bench::run_host_dtypes(argc, argv);  // host_dtypes.h
      if (std::string_view(argv[i]) == "--cpu-dtypes") return ork::bench::run_cpu_dtypes(argc, argv);  // cpu_dtypes.h
    }
    return ork::bench::main_impl(argc, argv);
  });
}
