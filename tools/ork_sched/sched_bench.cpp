// ork_sched_bench: how close to optimal is the stream reorderer, and how fast.
//  1. Quality: for every stream of the suite (worked examples, transformer decode, random
//     DAGs) the input order, the FIFO schedule (Torq's) and the critical-path schedule,
//     each as a ratio to the lower bound and to each other, with geometric means.
//  2. Held-out: the makespan / lower-bound geometric mean of fifo, critical-path and best on
//     a mix generated from another seed than the tuning suite (--heldout, --heldout-seed),
//     overall, per group, and on the streams with byte-range accesses.
//  3. Speed: scheduling time for streams of 1k, 10k, 100k and 1M ops, next to a baseline
//     measured in the same run (one simulateOrder pass over the same stream), and the
//     time per op relative to the smallest size (1.0 = linear growth); min / median / max
//     over --repeat runs, ratios from the medians; decode, random DAGs and a 7B model's plan
//     stream; with --process ORK_SCHED, also the ork_sched process on each stream written
//     to a file (parse, schedule and report: what a user waits for), and parse_stream alone
//     on the same text (the parse's share of it).
// Exit 0; 1 when a check fails (a schedule slower than its input, critical path slower
// than FIFO, a makespan under the lower bound); 2 on bad usage.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <malloc.h>
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <numeric>

#include "tools/common/cli.h"
#include "tools/common/spread.h"
#include "lib/sched/parse.h"
#include "tools/ork_sched/bench_suite.h"
#include "tools/ork_sched/examples_dir.h"

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

int heldout(uint64_t seed, int count, bool json_out, nlohmann::json& report) {
  const std::vector<BenchCase> suite = heldout_suite(seed, count);
  std::map<std::string, std::map<std::string, Geo>> geo;  // group -> policy -> mean
  int failures = 0;
  for (const BenchCase& c : suite) {
    int64_t fifo = 0;
    for (Policy policy : {Policy::fifo, Policy::critical_path, Policy::best}) {
      Options o = c.options;
      o.policy = policy;
      Result<Schedule> r = schedule(c.stream, o);
      if (!r) {
        fmt::print(stderr, "{}: {}\n", c.name, r.error().message);
        ++failures;
        continue;
      }
      if (policy == Policy::fifo) fifo = r->makespan;
      if (r->makespan < r->bounds.value || r->makespan > fifo) ++failures;  // best never loses to fifo
      const double x = ratio(r->makespan, r->bounds.value);
      for (const std::string& g : {c.group, std::string("all"), std::string(has_ranges(c.stream) ? "ranges" : "whole")})
        geo[g][policy_name(policy)].add(x);
    }
  }
  if (!json_out)
    fmt::print("\nheld-out mix, seed {} ({} streams): makespan / lower bound, geometric mean\n{:<8} {:>8} {:>8} {:>14} {:>8}\n",
               seed, suite.size(), "group", "streams", "fifo", "critical-path", "best");
  for (const auto& [group, policies] : geo) {
    report["heldout"]["seed"] = seed;
    for (const auto& [policy, g] : policies) report["heldout"]["geomean"][group][policy] = g.mean();
    report["heldout"]["streams"][group] = policies.at("fifo").n;
    if (!json_out)
      fmt::print("{:<8} {:>8} {:>8.3f} {:>14.3f} {:>8.3f}\n", group, policies.at("fifo").n, policies.at("fifo").mean(),
                 policies.at("critical-path").mean(), policies.at("best").mean());
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

// Process CPU time (user + system of all threads), ms: on a shared machine it is the part of
// the wall time that is this process's own work.
double cpu_ms() { return 1000.0 * static_cast<double>(std::clock()) / CLOCKS_PER_SEC; }

// CPU time (user + system) of the children waited for so far, ms: the ork_sched processes'
// own work, whatever the machine's load does to their wall time.
double children_cpu_ms() {
  rusage u{};
  getrusage(RUSAGE_CHILDREN, &u);
  auto ms = [](const timeval& t) { return 1000.0 * static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1000.0; };
  return ms(u.ru_utime) + ms(u.ru_stime);
}

struct ProcessTimes {
  ork::tools::Spread wall, cpu;  // ms; n = 0 when not run or when a run failed
};

// The ork_sched process on `s` written to a file, `repeat` times: wall and CPU ms.
ProcessTimes process_ms(const std::string& ork_sched, const Stream& s, int repeat, Policy policy) {
  char path[] = "/tmp/ork_sched_bench_XXXXXX";
  const int fd = mkstemp(path);
  if (fd < 0) return {};
  close(fd);
  { std::ofstream(path) << format_stream(s); }
  const std::string command = fmt::format("'{}' '{}' --json --policy {} > /dev/null", ork_sched, path, policy_name(policy));
  bool ok = true;
  std::vector<double> cpu;
  ork::tools::Spread wall = time_ms(repeat, [&] {
    const double before = children_cpu_ms();
    ok = std::system(command.c_str()) == 0 && ok;
    cpu.push_back(children_cpu_ms() - before);
  });
  std::remove(path);
  return ok ? ProcessTimes{wall, ork::tools::spread(cpu)} : ProcessTimes{};
}

// One speed stream's timings, ms, each the min / median / max of `repeat` runs.
struct SpeedRow {
  int ops = 0;
  ork::tools::Spread sim, graph, list, sched, process, process_cpu, parse;  // process*, parse: n = 0 when not run
  double sched_cpu = 0;  // process CPU ms per schedule() call, mean
  // CPU ms, mean: parse_stream on the stream's text, then schedule() (the graph included):
  // what the ork_sched process does but for its start and report; and for "7b", what
  // `ork_run --plan-only` does (seven_b_plan_only), 0 for the other streams.
  double pipeline_cpu = 0, plan_only_cpu = 0;
};

// The in-process rows measure the work on pages already faulted in, as the tools' processes
// run (tools/common/huge_pages.h: no block mapped on its own, no trim): glibc maps each block
// past its mmap threshold (at most 32 MiB) on its own and unmaps it when freed, so a 1M-op
// table was faulted in afresh on every repeat and the untimed run below kept nothing
// (docs/sched.md section 5, "What the bench's 7b row measures"). One arena for every thread:
// lib/sched's threads each got one of their own, whose mapped heaps were given back as they
// emptied and faulted in again on the next call. mallopt changes this process only; the
// `--process` children start with the environment as it was.
void keep_freed_pages() {
  mallopt(M_MMAP_MAX, 0);
  mallopt(M_TRIM_THRESHOLD, INT_MAX);
  mallopt(M_ARENA_MAX, 1);
}

// CPU ms of `run`, mean of `repeat` runs after one untimed run (-1 when one fails). The
// untimed run faults the heap's pages in at every size: else a 1M-op stream's first run
// faulted in ~400 MB (a third of a mean of 3) where a 10k-op one ran on pages that earlier
// sizes had left, and the per-op growth measured that, not the work (docs/sched.md section
// 5). Fresh pages cost per byte, the same per op at every size; the process figures count them.
double warm_cpu_ms(int repeat, const std::function<bool()>& run) {
  if (!run()) return -1;
  const double cpu0 = cpu_ms();
  for (int i = 0; i < repeat; ++i)
    if (!run()) return -1;
  return (cpu_ms() - cpu0) / repeat;
}

// Times every stage on one stream; false (a message on stderr) when it cannot be scheduled.
bool time_stream(const std::string& kind, const Stream& s, int repeat, Policy policy, const std::string& ork_sched,
                 SpeedRow& r) {
  const int ops = r.ops = static_cast<int>(s.ops.size());
  Result<Graph> built = build_graph(s);
  if (!built) {  // e.g. a generated stream past a bound of lib/sched
    fmt::print(stderr, "{} {}: {}\n", kind, ops, built.error().message);
    return false;
  }
  Graph g = std::move(*built);
  std::vector<int> input(ops);
  std::iota(input.begin(), input.end(), 0);
  const Priority prio = make_priority(s, g, Policy::fifo);
  ListParams lp{s.memory_bytes, 40, 4, 32, CoreChoice::first_free, PoolConfig{}};
  r.sim = time_ms(repeat, [&] { (void)simulate_order(s, g, input); });
  r.graph = time_ms(repeat, [&] { (void)build_graph(s); });
  r.list = time_ms(repeat, [&] { (void)list_schedule(s, g, prio, lp); });
  Options options;
  options.policy = policy;
  if (Result<Schedule> probe = schedule(s, options); !probe) {  // time only a real schedule
    fmt::print(stderr, "{} {}: {}\n", kind, ops, probe.error().message);
    return false;
  }
  const double cpu0 = cpu_ms();
  r.sched = time_ms(repeat, [&] { (void)schedule(s, options); });  // graph included
  r.sched_cpu = (cpu_ms() - cpu0) / repeat;
  const std::string text = format_stream(s);
  r.pipeline_cpu = warm_cpu_ms(repeat, [&] {
    Result<Stream> parsed = parse_stream(text);
    return parsed && schedule(*parsed, options);
  });
  if (r.pipeline_cpu < 0) {
    fmt::print(stderr, "{} {}: the stream's text does not parse and schedule\n", kind, ops);
    return false;
  }
  if (kind == "7b") {
    Result<size_t> plan = size_t{0};
    r.plan_only_cpu = warm_cpu_ms(repeat, [&] { return static_cast<bool>(plan = seven_b_plan_only(ops)); });
    if (!plan) {
      fmt::print(stderr, "7b plan {}: {}\n", ops, plan.error().message);
      return false;
    }
  }
  if (!ork_sched.empty() && kind != "7b") {
    const ProcessTimes p = process_ms(ork_sched, s, repeat, policy);
    r.process = p.wall;
    r.process_cpu = p.cpu;
  }
  // What the process spends reading the text format: parse_stream on the stream's text.
  r.parse = r.process.n > 0 ? time_ms(repeat, [&] { (void)parse_stream(text); }) : ork::tools::Spread{};
  return true;
}

// One stream's row: appended to report["speed"], and printed unless json_out. Ratios and
// growth come from the medians (the min / median / max of each are reported).
void report_speed(const std::string& kind, const SpeedRow& r, int repeat, Policy policy, double first_per_op,
                  double first_pipeline_per_op, bool json_out, nlohmann::json& report) {
  const double sim_ms = r.sim.median, graph_ms = r.graph.median, list_ms = r.list.median, sched_ms = r.sched.median;
  const double per_op = sched_ms * 1000.0 / r.ops;
  report["speed"].push_back({{"stream", kind}, {"ops", r.ops}, {"repeat", repeat}, {"simulate_ms", sim_ms},
                             {"graph_ms", graph_ms}, {"list_ms", list_ms}, {"schedule_ms", sched_ms},
                             {"simulate_ms_spread", spread_json(r.sim)}, {"graph_ms_spread", spread_json(r.graph)},
                             {"list_ms_spread", spread_json(r.list)}, {"schedule_ms_spread", spread_json(r.sched)},
                             {"schedule_over_simulate", sched_ms / sim_ms}, {"us_per_op", per_op},
                             {"growth_per_op", per_op / first_per_op}, {"policy", policy_name(policy)},
                             {"schedule_cpu_ms_mean", r.sched_cpu}});
  const double pipeline_per_op = r.pipeline_cpu * 1000.0 / r.ops;
  report["speed"].back()["pipeline_cpu_ms_mean"] = r.pipeline_cpu;
  report["speed"].back()["pipeline_cpu_us_per_op"] = pipeline_per_op;
  report["speed"].back()["pipeline_growth_per_op"] = pipeline_per_op / first_pipeline_per_op;
  if (r.plan_only_cpu > 0) report["speed"].back()["plan_only_cpu_ms_mean"] = r.plan_only_cpu;
  if (r.process.n > 0) report["speed"].back()["process_ms_spread"] = spread_json(r.process);
  if (r.process_cpu.n > 0) report["speed"].back()["process_cpu_ms_spread"] = spread_json(r.process_cpu);
  if (r.parse.n > 0) report["speed"].back()["parse_ms_spread"] = spread_json(r.parse);
  if (json_out) return;
  fmt::print("{:<7} {:>7} {:>9.3f} {:>9.3f} {:>10.3f} {:>10.3f} {:>26} {:>12.1f} {:>12.3f} {:>9.2f}\n", kind, r.ops,
             sim_ms, graph_ms, list_ms, sched_ms,
             fmt::format("{:.3f} / {:.3f} / {:.3f}", r.sched.min, r.sched.median, r.sched.max), sched_ms / sim_ms,
             per_op, per_op / first_per_op);
  fmt::print("{:<7} {:>7} schedule cpu {:.1f} ms (mean); parse + schedule cpu {:.1f} ms, {:.3f} us/op, growth {:.2f}{}{}\n",
             "", "", r.sched_cpu, r.pipeline_cpu, pipeline_per_op, pipeline_per_op / first_pipeline_per_op,
             r.plan_only_cpu > 0 ? fmt::format("; ork_run --plan-only's work cpu {:.1f} ms", r.plan_only_cpu) : "",
             r.process.n ? fmt::format("; ork_sched process {:.1f} / {:.1f} / {:.1f} ms (CPU {:.1f} / {:.1f} / "
                                       "{:.1f} ms), of which parse {:.1f} / {:.1f} / {:.1f} ms", r.process.min,
                                       r.process.median, r.process.max, r.process_cpu.min, r.process_cpu.median,
                                       r.process_cpu.max, r.parse.min, r.parse.median, r.parse.max)
                         : "");
}

int speed(const std::vector<int>& sizes, int repeat, Policy policy, const std::string& ork_sched, bool json_out,
          nlohmann::json& report) {
  int failures = 0;
  if (!json_out)
    fmt::print("\n{:<7} {:>7} {:>9} {:>9} {:>10} {:>10} {:>26} {:>12} {:>12} {:>9}\n", "stream", "ops", "sim ms",
               "graph ms", "list ms", "sched ms", "sched min / median / max", "sched/sim", "us/op sched", "growth");
  for (const std::string kind : {"decode", "random", "7b"}) {
    double first_per_op = 0, first_pipeline_per_op = 0;  // growth is per op against the first size that ran
    for (int size : sizes) {
      SpeedRow r;
      if (!time_stream(kind, scaling_stream(kind, size), repeat, policy, ork_sched, r)) {
        ++failures;
        continue;
      }
      if (first_per_op == 0) first_per_op = r.sched.median * 1000.0 / r.ops;
      if (first_pipeline_per_op == 0) first_pipeline_per_op = r.pipeline_cpu * 1000.0 / r.ops;
      report_speed(kind, r, repeat, policy, first_per_op, first_pipeline_per_op, json_out, report);
    }
  }
  return failures;
}

// The speed streams (decode, random) written as text files, DIR/<kind>_<size>.stream, for
// timing the ork_sched process by hand (docs/sched.md section 5). 0, or 1 naming a file
// that cannot be written.
int write_streams(const std::vector<int>& sizes, const std::string& dir) {
  for (const std::string kind : {"decode", "random"}) {
    for (int size : sizes) {
      const std::string path = fmt::format("{}/{}_{}.stream", dir, kind, size);
      const std::string tmp = path + ".tmp";
      std::ofstream out(tmp);
      out << format_stream(scaling_stream(kind, size));
      out.close();
      if (!out || std::rename(tmp.c_str(), path.c_str()) != 0) {
        fmt::print(stderr, "ork_sched_bench: cannot write {}\n", path);
        std::remove(tmp.c_str());
        return 1;
      }
    }
  }
  return 0;
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
  std::string examples = ork::sched::examples_dir();
  int random_count = 40, repeat = 3;
  std::vector<int> sizes{1000, 10000, 100000, 1000000};
  int heldout_count = 60;
  uint64_t heldout_seed = 777;
  Policy speed_policy = Policy::fifo;
  std::string ork_sched, write_dir;
  bool json_out = false, no_speed = false, no_quality = false;
  app.add_option("--examples", examples, "folder with the worked example streams");
  ork::tools::add_number(app, "--random", random_count, "random DAGs in the quality suite", 0, kMaxRandom);
  app.add_option("--sizes", sizes, "op counts for the speed runs (comma separated)")
      ->delimiter(',')
      ->transform(ork::tools::whole_number(1, 1000000));  // generators overshoot by < 1 %: within kMaxOps
  ork::tools::add_number(app, "--heldout", heldout_count, "streams in the held-out mix (0 = none)", 0, 10000);
  app.add_option("--heldout-seed", heldout_seed, "seed of the held-out mix (the tuning suite uses 1000..)");
  std::map<std::string, Policy> policies{
      {"fifo", Policy::fifo}, {"critical-path", Policy::critical_path}, {"best", Policy::best}};
  app.add_option("--speed-policy", speed_policy, "policy of the speed runs: fifo (default), critical-path, best")
      ->transform(CLI::CheckedTransformer(policies));
  app.add_option("--process", ork_sched, "also time this ork_sched binary as a process on each speed stream");
  ork::tools::add_repeat(app, repeat, 1000, "timing repeats (min / median / max reported)");
  app.add_option("--write-streams", write_dir, "only write the speed streams (decode, random) at --sizes as "
                 "DIR/<kind>_<size>.stream and stop")->check(CLI::ExistingDirectory);
  app.add_flag("--no-speed", no_speed, "skip the speed runs");
  app.add_flag("--no-quality", no_quality, "skip the quality suite");
  ork::tools::add_json(app, json_out);
  if (int rc = ork::tools::parse_command_line(app, argc, argv); rc >= 0) return rc;
  keep_freed_pages();
  return ork::tools::run_main("ork_sched_bench", [&] {
    if (!write_dir.empty()) return write_streams(sizes, write_dir);
    nlohmann::json report;
    int failures = 0;
    if (!no_quality) failures = quality(bench_suite(examples, random_count), json_out, report);
    if (!no_quality && heldout_count > 0) failures += heldout(heldout_seed, heldout_count, json_out, report);
    if (!no_speed) failures += speed(sizes, repeat, speed_policy, ork_sched, json_out, report);
    report["failed_checks"] = failures;
    if (json_out) fmt::print("{}\n", report.dump(2));
    else if (failures) fmt::print("{} failed checks\n", failures);
    return failures ? 1 : 0;
  });
}
