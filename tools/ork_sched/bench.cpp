// ork_sched_bench: how close to optimal is the stream reorderer, and how fast.
//  1. Quality: for every stream of the suite (seed examples, transformer decode, random
//     DAGs) the input order, the FIFO schedule (the seed) and the critical-path schedule,
//     each as a ratio to the lower bound and to each other, with geometric means.
//  2. Speed: scheduling time for streams of 1k, 10k and 100k ops, next to a baseline
//     measured in the same run (one simulateOrder pass over the same stream), and the
//     time per op relative to the smallest size (1.0 = linear growth); min / median / max
//     over --repeat runs, ratios from the medians.
// Exit 0; 1 when a check fails (a schedule slower than its input, critical path slower
// than FIFO, a makespan under the lower bound); 2 on bad usage.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <numeric>

#include "tools/common/cli.h"
#include "tools/common/spread.h"
#include "tools/ork_sched/bench_suite.h"

#ifndef ORK_SCHED_EXAMPLES_DIR
#define ORK_SCHED_EXAMPLES_DIR "tools/ork_sched/examples"
#endif

namespace {

using namespace ork::sched;
using Clock = std::chrono::steady_clock;
using ork::Result;

struct Geo {
  double log_sum = 0;
  int n = 0;
  void add(double ratio) { log_sum += std::log(ratio); ++n; }
  double mean() const { return n ? std::exp(log_sum / n) : 1.0; }
};

double ratio(int64_t a, int64_t b) { return b > 0 ? static_cast<double>(a) / static_cast<double>(b) : 1.0; }

int quality(const std::vector<BenchCase>& suite, bool json_out, nlohmann::json& report) {
  int failures = 0;
  std::map<std::string, std::map<std::string, Geo>> geo;  // group -> metric -> mean
  if (!json_out)
    fmt::print("{:<28} {:>6} {:>8} {:>8} {:>8} {:>8} {:>7} {:>7} {:>7} {:>8} {:>8} {:>5}\n", "stream", "ops",
               "input", "fifo", "cp", "bound", "in/LB", "fifo/LB", "cp/LB", "cp/fifo", "bal/fifo", "pass");
  for (const BenchCase& c : suite) {
    Options fifo_o = c.options, cp_o = c.options, bal_o = c.options;
    cp_o.policy = Policy::critical_path;
    bal_o.core_choice = CoreChoice::least_loaded;
    auto fifo = schedule(c.stream, fifo_o);
    auto cp = schedule(c.stream, cp_o);
    auto bal = schedule(c.stream, bal_o);
    if (!fifo || !cp || !bal) {
      fmt::print(stderr, "{}: {}\n", c.name, (!fifo ? fifo : !cp ? cp : bal).error().message);
      ++failures;
      continue;
    }
    const int64_t input = fifo->makespan_input_priced, lb = fifo->bounds.value;
    const bool ok = fifo->makespan <= input && cp->makespan <= fifo->makespan && lb <= cp->makespan &&
                    lb <= fifo->makespan && bal->makespan <= input;
    if (!ok) ++failures;
    for (const std::string& g : {c.group, std::string("all")}) {
      geo[g]["input/LB"].add(ratio(input, lb));
      geo[g]["fifo/LB"].add(ratio(fifo->makespan, lb));
      geo[g]["cp/LB"].add(ratio(cp->makespan, lb));
      geo[g]["cp/fifo"].add(ratio(cp->makespan, fifo->makespan));
      geo[g]["fifo/input"].add(ratio(fifo->makespan, input));
      geo[g]["balanced/fifo"].add(ratio(bal->makespan, fifo->makespan));
    }
    report["cases"].push_back({{"group", c.group}, {"name", c.name}, {"ops", c.stream.ops.size()},
                               {"input", input}, {"fifo", fifo->makespan}, {"critical_path", cp->makespan},
                               {"balanced", bal->makespan}, {"lower_bound", lb},
                               {"pass_fifo", pass_name(fifo->pass)}, {"pass_cp", pass_name(cp->pass)}, {"ok", ok}});
    if (!json_out)
      fmt::print("{:<28} {:>6} {:>8} {:>8} {:>8} {:>8} {:>7.3f} {:>7.3f} {:>7.3f} {:>8.3f} {:>8.3f} {:>5}{}\n", c.name,
                 c.stream.ops.size(), input, fifo->makespan, cp->makespan, lb, ratio(input, lb),
                 ratio(fifo->makespan, lb), ratio(cp->makespan, lb), ratio(cp->makespan, fifo->makespan),
                 ratio(bal->makespan, fifo->makespan), pass_name(fifo->pass), ok ? "" : "  FAILED CHECK");
  }
  for (const auto& [group, metrics] : geo) {
    if (!json_out) fmt::print("geomean {:<8} ({:>3} streams):", group, metrics.begin()->second.n);
    for (const auto& [metric, g] : metrics) {
      report["geomean"][group][metric] = g.mean();
      if (!json_out) fmt::print("  {} {:.3f}", metric, g.mean());
    }
    if (!json_out) fmt::print("\n");
  }
  return failures;
}

// Min / median / max of `repeat` timed runs, in ms.
template <class F>
ork::tools::Spread time_ms(int repeat, F&& f) {
  std::vector<double> samples;
  for (int r = 0; r < repeat; ++r) {
    const auto t0 = Clock::now();
    f();
    samples.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
  }
  return ork::tools::spread(std::move(samples));
}

nlohmann::json spread_json(const ork::tools::Spread& s) {
  return {{"min", s.min}, {"median", s.median}, {"max", s.max}};
}

int speed(const std::vector<int>& sizes, int repeat, bool json_out, nlohmann::json& report) {
  int failures = 0;
  if (!json_out)
    fmt::print("\n{:<7} {:>7} {:>9} {:>9} {:>10} {:>10} {:>26} {:>12} {:>12} {:>9}\n", "stream", "ops", "sim ms",
               "graph ms", "list ms", "sched ms", "sched min / median / max", "sched/sim", "us/op sched", "growth");
  for (const std::string kind : {"decode", "random"}) {
    double first_per_op = 0;
    for (int size : sizes) {
      const Stream s = scaling_stream(kind, size);
      const int ops = static_cast<int>(s.ops.size());
      Result<Graph> built = build_graph(s);
      if (!built) {  // e.g. a generated stream past a bound of lib/sched
        fmt::print(stderr, "{} {}: {}\n", kind, ops, built.error().message);
        ++failures;
        continue;
      }
      Graph g = std::move(*built);
      std::vector<int> input(ops);
      std::iota(input.begin(), input.end(), 0);
      const Priority prio = make_priority(s, g, Policy::fifo);
      ListParams lp{s.memory_bytes, 40, 4, 32, CoreChoice::first_free, PoolConfig{}};
      const ork::tools::Spread sim = time_ms(repeat, [&] { (void)simulate_order(s, g, input); });
      const ork::tools::Spread graph = time_ms(repeat, [&] { (void)build_graph(s); });
      const ork::tools::Spread list = time_ms(repeat, [&] { (void)list_schedule(s, g, prio, lp); });
      if (Result<Schedule> probe = schedule(s, Options{}); !probe) {  // time only a real schedule
        fmt::print(stderr, "{} {}: {}\n", kind, ops, probe.error().message);
        ++failures;
        continue;
      }
      const ork::tools::Spread sched = time_ms(repeat, [&] { (void)schedule(s, Options{}); });  // graph included
      // Ratios and growth from the medians (the min / median / max of each are reported).
      const double sim_ms = sim.median, graph_ms = graph.median, list_ms = list.median, sched_ms = sched.median;
      const double per_op = sched_ms * 1000.0 / ops;
      if (first_per_op == 0) first_per_op = per_op;
      report["speed"].push_back({{"stream", kind}, {"ops", ops}, {"repeat", repeat}, {"simulate_ms", sim_ms},
                                 {"graph_ms", graph_ms}, {"list_ms", list_ms}, {"schedule_ms", sched_ms},
                                 {"simulate_ms_spread", spread_json(sim)}, {"graph_ms_spread", spread_json(graph)},
                                 {"list_ms_spread", spread_json(list)}, {"schedule_ms_spread", spread_json(sched)},
                                 {"schedule_over_simulate", sched_ms / sim_ms}, {"us_per_op", per_op},
                                 {"growth_per_op", per_op / first_per_op}});
      if (!json_out)
        fmt::print("{:<7} {:>7} {:>9.3f} {:>9.3f} {:>10.3f} {:>10.3f} {:>26} {:>12.1f} {:>12.3f} {:>9.2f}\n", kind, ops,
                   sim_ms, graph_ms, list_ms, sched_ms,
                   fmt::format("{:.3f} / {:.3f} / {:.3f}", sched.min, sched.median, sched.max), sched_ms / sim_ms,
                   per_op, per_op / first_per_op);
    }
  }
  return failures;
}

}  // namespace

// Largest --sizes and --random: the stream bound of lib/sched (kMaxOps), and a suite
// that still finishes (each random DAG is scheduled three times).
constexpr int kMaxRandom = 100000;

int main(int argc, char** argv) {
  CLI::App app{"ork_sched_bench: quality (ratios to the lower bound and to FIFO) and speed of the "
               "stream reorderer (min / median / max over --repeat runs). Exit 0 ok, 1 failed check, "
               "2 bad usage."};
  ork::tools::add_conventions(app, "ork_sched_bench");
  std::string examples = ORK_SCHED_EXAMPLES_DIR;
  int random_count = 40, repeat = 3;
  std::vector<int> sizes{1000, 10000, 100000};
  bool json_out = false, no_speed = false, no_quality = false;
  app.add_option("--examples", examples, "folder with the seed example streams");
  ork::tools::add_number(app, "--random", random_count, "random DAGs in the quality suite", 0, kMaxRandom);
  app.add_option("--sizes", sizes, "op counts for the speed runs (comma separated)")
      ->delimiter(',')
      ->transform(ork::tools::whole_number(1, ork::sched::kMaxOps / 2));  // generators overshoot a little
  ork::tools::add_repeat(app, repeat, 1000, "timing repeats (min / median / max reported)");
  app.add_flag("--no-speed", no_speed, "skip the speed runs");
  app.add_flag("--no-quality", no_quality, "skip the quality suite");
  ork::tools::add_json(app, json_out);
  if (int rc = ork::tools::parse_command_line(app, argc, argv); rc >= 0) return rc;
  return ork::tools::run_main("ork_sched_bench", [&] {
    nlohmann::json report;
    int failures = 0;
    if (!no_quality) failures = quality(bench_suite(examples, random_count), json_out, report);
    if (!no_speed) failures += speed(sizes, repeat, json_out, report);
    report["failed_checks"] = failures;
    if (json_out) fmt::print("{}\n", report.dump(2));
    else if (failures) fmt::print("{} failed checks\n", failures);
    return failures ? 1 : 0;
  });
}
