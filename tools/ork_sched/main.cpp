// ork_sched: reorders a stream of loads, stores and programs (the text format of
// docs/architecture.md section 4) with the list scheduler of lib/sched and reports the new
// order, the core of every program, the makespans and the lower bound.
// Exit: 0 done, 1 the stream is invalid or cannot run, 2 bad usage or unreadable file.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

#include "lib/sched/parse.h"
#include "lib/sched/schedule.h"
#include "tools/ork_sched/render.h"

namespace {

using namespace ork::sched;

struct Args {
  std::string file, trace, svg, memory;
  bool json = false;
  int cores = 0;
  int64_t reserve = 0;
  Options options;
};

bool write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  if (!out) fmt::print(stderr, "ork_sched: cannot write {}\n", path);
  return static_cast<bool>(out);
}

void add_flags(CLI::App& app, Args& a) {
  app.add_option("FILE", a.file, "stream in the text format ('-' reads stdin)")->required();
  app.add_flag("--json", a.json, "print a JSON report instead of text");
  app.add_option("--trace", a.trace, "write a Perfetto/Chrome trace JSON of input and new order");
  app.add_option("--svg", a.svg, "write an SVG Gantt chart of input and new order");
  std::map<std::string, Policy> policies{{"fifo", Policy::fifo}, {"critical-path", Policy::critical_path}};
  app.add_option("--policy", a.options.policy, "ready-queue order: fifo (the seed) or critical-path")
      ->transform(CLI::CheckedTransformer(policies));
  std::map<std::string, CoreChoice> choices{{"first-free", CoreChoice::first_free},
                                            {"least-loaded", CoreChoice::least_loaded}};
  app.add_option("--core-choice", a.options.core_choice, "core for a start: first-free (the seed) or least-loaded")
      ->transform(CLI::CheckedTransformer(choices));
  app.add_option("--cap-percent", a.options.cap_percent, "first cap, % of memory (then x0.85, x0.70)")
      ->check(CLI::Range(1, 100));
  app.add_option("--prefetch-percent", a.options.prefetch_percent, "prefetchCap, % of cap, for far loads")
      ->check(CLI::Range(0, 100));
  app.add_option("--urgent-starts", a.options.urgent_starts, "upcoming programs whose loads may fill cap")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--window", a.options.window, "candidates looked at per queue and step")->check(CLI::PositiveNumber);
  app.add_option("--memory", a.memory, "memory size, overrides the file (e.g. 512K, 2M)");
  app.add_option("--cores", a.cores, "compute units, overrides the file")->check(CLI::PositiveNumber);
  app.add_option("--reserve", a.options.pool.reserve_bytes, "bytes the pool keeps free at the top (Torq: 1280)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--swap-bandwidth", a.options.swap_bytes_per_cycle,
                 "spill/reload bytes per cycle (default: the stream's own loads)")->check(CLI::NonNegativeNumber);
}

int run(const Args& a) {
  std::stringstream text;
  if (a.file == "-") {
    text << std::cin.rdbuf();
  } else {
    std::ifstream in(a.file);
    if (!in) {
      fmt::print(stderr, "ork_sched: cannot read {}\n", a.file);
      return 2;
    }
    text << in.rdbuf();
  }
  ParseOverrides overrides{0, a.cores};
  if (!a.memory.empty()) {
    ork::Result<int64_t> bytes = parse_size(a.memory);
    if (!bytes || *bytes == 0) {
      fmt::print(stderr, "ork_sched: --memory {}: {}\n", a.memory, bytes ? "must be > 0" : bytes.error().message);
      return 2;
    }
    overrides.memory_bytes = *bytes;
  }
  ork::Result<Stream> stream = parse_stream(text.str(), overrides);
  if (!stream) {
    fmt::print(stderr, "ork_sched: {}: {}\n", a.file, stream.error().message);
    return 1;
  }
  ork::Result<Graph> graph = build_graph(*stream);
  if (!graph) {
    fmt::print(stderr, "ork_sched: {}: {}\n", a.file, graph.error().message);
    return 1;
  }
  ork::Result<Schedule> sched = schedule(*stream, *graph, a.options);
  if (!sched) {
    fmt::print(stderr, "ork_sched: {}: {}\n", a.file, sched.error().message);
    return 1;
  }
  if (a.json) fmt::print("{}\n", render_json(*stream, *sched).dump(2));
  else fmt::print("{}", render_text(*stream, *sched));
  if (a.svg.empty() && a.trace.empty()) return 0;
  const std::vector<Panel> panels = make_panels(*stream, *graph, *sched, a.options);
  bool ok = true;
  if (!a.svg.empty()) ok = write_file(a.svg, render_svg(*stream, panels)) && ok;
  if (!a.trace.empty()) ok = write_file(a.trace, render_trace(*stream, panels).dump()) && ok;
  return ok ? 0 : 2;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"ork_sched: reorder a load/start/wait/store stream so DMA and compute overlap "
               "(seed 000's list scheduler). Exit 0 done, 1 invalid stream, 2 bad usage."};
  Args args;
  add_flags(app, args);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }
  return run(args);
}
