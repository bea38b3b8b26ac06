// ork_bench: speed of the CPU reference, printed as ratios against baselines measured in the
// same run (architecture.md section 6): the plain oracle loop, the fast int8 path per ISA
// and thread count, and oneDNN's int8 GEMM when built with it. Also the host-side layout
// work of one matmul (pack A, unpack C) against a per-element index-function loop.
// Every result is checked against the oracle: exit 1 when the fast path differs.
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "lib/ref/fast.h"
#include "lib/ref/oracle.h"
#include "tools/ork_bench/baselines.h"
#include "tools/ork_bench/layout_bench.h"

namespace ork::bench {
namespace {

struct Args {
  int64_t m = 512, k = 2048, n = 2048;
  int reps = 5;
  int threads = 0;
  bool skip_oracle = false;
  bool json = false;
};

struct Measured {
  std::string name;
  double seconds = 0;  // best of the repetitions
  double gops = 0;
  bool exact = false;
  std::string error;
};

std::vector<int8_t> random_int8(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> dist(-128, 127);
  std::vector<int8_t> v(n);
  for (auto& x : v) x = static_cast<int8_t>(dist(rng));
  return v;
}

template <class F>
Measured time_best(const std::string& name, int reps, double ops, F&& run) {
  Measured r{.name = name, .seconds = 1e30};
  for (int i = 0; i < reps; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    if (!run(r.error)) return r;
    const std::chrono::duration<double> dt = std::chrono::steady_clock::now() - t0;
    r.seconds = std::min(r.seconds, dt.count());
  }
  r.gops = ops / r.seconds / 1e9;
  return r;
}

std::vector<Measured> run_all(const Args& args, std::vector<int32_t>& want) {
  const ref::Dims d{args.m, args.k, args.n};
  const auto a = random_int8(d.m * d.k, 1), b = random_int8(d.k * d.n, 2);
  const double ops = 2.0 * d.m * d.k * d.n;
  std::vector<int32_t> c(d.m * d.n);
  std::vector<Measured> out;
  if (!args.skip_oracle) {
    out.push_back(time_best("oracle", 1, ops, [&](std::string& e) {
      Status s = ref::matmul_int8(a, b, want, d);
      if (!s) e = s.error().message;
      return s.ok();
    }));
    out.back().exact = true;
  }
  auto add = [&](const std::string& name, auto&& run) {
    std::fill(c.begin(), c.end(), 0);
    out.push_back(time_best(name, args.reps, ops, run));
    out.back().exact = !args.skip_oracle && c == want;
  };
  const int all = args.threads > 0 ? args.threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::vector<int> thread_counts{1};
  if (all > 1) thread_counts.push_back(all);
  for (ref::Isa isa : ref::supported_isas()) {
    for (int t : thread_counts) {
      add(fmt::format("fast_{}_t{}", ref::isa_name(isa), t), [&](std::string& e) {
        Status s = ref::matmul_int8_fast(a, b, c, d, {.threads = t, .isa = isa});
        if (!s) e = s.error().message;
        return s.ok();
      });
    }
  }
  for (Candidate& cand : onednn_candidates(d.m, d.k, d.n)) {
    add(cand.name, [&](std::string& e) { return cand.run(a, b, c, e); });
  }
  return out;
}

const Measured* best_where(const std::vector<Measured>& v, auto&& pred) {
  const Measured* best = nullptr;
  for (const Measured& r : v) {
    if (r.error.empty() && pred(r) && (!best || r.gops > best->gops)) best = &r;
  }
  return best;
}

}  // namespace

int main_impl(int argc, char** argv) {
  Args args;
  CLI::App app{"ork_bench: GOPS of the CPU reference (oracle loop, fast int8 path, oneDNN) "
               "and host layout time, as ratios measured in one run"};
  app.add_option("--m", args.m, "rows of A and C")->check(CLI::Range(int64_t{1}, int64_t{1} << 16));
  app.add_option("--k", args.k, "columns of A, rows of B")->check(CLI::Range(int64_t{1}, int64_t{1} << 16));
  app.add_option("--n", args.n, "columns of B and C")->check(CLI::Range(int64_t{1}, int64_t{1} << 16));
  app.add_option("--reps", args.reps, "repetitions per candidate (best is kept)")->check(CLI::Range(1, 1000));
  app.add_option("--threads", args.threads, "threads of the multi-threaded fast run (0 = all)")->check(CLI::Range(0, 256));
  app.add_flag("--no-oracle", args.skip_oracle, "skip the (slow) plain oracle loop and the exactness checks");
  app.add_flag("--json", args.json, "print one JSON object instead of the table");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  std::vector<int32_t> want(args.m * args.n);
  const std::vector<Measured> results = run_all(args, want);
  const LayoutFigures layout = measure_layout(args.reps);
  const Measured* oracle = best_where(results, [](const Measured& r) { return r.name == "oracle"; });
  const Measured* fast = best_where(results, [](const Measured& r) { return r.name.starts_with("fast_"); });
  const Measured* dnnl = best_where(results, [](const Measured& r) { return r.name.starts_with("onednn"); });
  bool fast_exact = true;
  for (const Measured& r : results) {
    if (r.name.starts_with("fast_") && (!r.error.empty() || (!args.skip_oracle && !r.exact))) fast_exact = false;
  }
  nlohmann::json j;
  j["shape"] = {{"m", args.m}, {"k", args.k}, {"n", args.n}};
  j["onednn"] = onednn_description();
  for (const Measured& r : results) {
    j["results"].push_back({{"name", r.name}, {"ms", r.seconds * 1e3}, {"gops", r.gops},
                            {"exact", r.exact}, {"error", r.error}});
  }
  if (fast && dnnl) j["ratios"]["fast_over_onednn"] = fast->gops / dnnl->gops;
  if (fast && oracle) j["ratios"]["fast_over_oracle"] = fast->gops / oracle->gops;
  j["layout"] = layout_json(layout);
  j["fast_path_exact"] = fast_exact;
  if (args.json) {
    fmt::print("{}\n", j.dump(2));
  } else {
    fmt::print("int8 C = A x B, M={} K={} N={}; {}\n", args.m, args.k, args.n, onednn_description());
    fmt::print("{:<28} {:>10} {:>9} {:>10} {:>10}  {}\n", "candidate", "ms", "GOPS", "x oracle", "x oneDNN", "exact");
    for (const Measured& r : results) {
      if (!r.error.empty()) {
        fmt::print("{:<28} failed: {}\n", r.name, r.error);
        continue;
      }
      fmt::print("{:<28} {:>10.3f} {:>9.2f} {:>10} {:>10}  {}\n", r.name, r.seconds * 1e3, r.gops,
                 oracle ? fmt::format("{:.1f}", r.gops / oracle->gops) : "-",
                 dnnl ? fmt::format("{:.2f}", r.gops / dnnl->gops) : "-",
                 args.skip_oracle ? "-" : (r.exact ? "yes" : "NO"));
    }
    print_layout(layout);
  }
  return fast_exact ? 0 : 1;
}

}  // namespace ork::bench

int main(int argc, char** argv) { return ork::bench::main_impl(argc, argv); }
