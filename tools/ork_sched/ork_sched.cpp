// ork_sched: reorders a stream of loads, stores and programs (the text format of
// docs/sched.md section 2) with the list scheduler of lib/sched and reports the new
// order, the core of every program, the makespans and the lower bound.
// Exit: 0 done, 1 the stream cannot run or a picture cannot be written, 2 bad usage, an
// unreadable file or an invalid stream (the tools' table, docs/tools.md).
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstdio>
#include <map>
#include <string>
#include <utility>

#include "lib/sched/parse.h"
#include "lib/sched/chooser.h"
#include "driver/common/safe_file.h"
#include "tools/common/cli.h"
#include "tools/common/input_limits.h"
#include "tools/common/huge_pages.h"
#include "tools/ork_sched/render.h"

namespace {

using namespace ork::sched;

struct Args {
  std::string file, trace, svg, memory;
  bool json = false;
  int cores = 0;
  int64_t reserve = 0;
  Options options;
  CLI::Option* policy_flag = nullptr;
};

bool write_file(const std::string& path, const std::string& text) {
  const ork::Status s = ork::write_file_atomically(path, text);  // beside it, renamed into place
  if (!s) fmt::print(stderr, "ork_sched: cannot write {}\n", s.error().message);
  return static_cast<bool>(s);
}

void add_flags(CLI::App& app, Args& a) {
  using ork::tools::add_number;
  ork::tools::add_conventions(app, "ork_sched");
  app.add_option("FILE", a.file, "stream in the text format ('-' reads stdin)")->required();
  ork::tools::add_json(app, a.json);
  app.add_option("--trace", a.trace, "write a Perfetto/Chrome trace JSON of input and new order");
  app.add_option("--svg", a.svg, "write an SVG Gantt chart of input and new order");
  std::map<std::string, Policy> policies{
      {"fifo", Policy::fifo}, {"critical-path", Policy::critical_path}, {"best", Policy::best}};
  a.policy_flag = app.add_option("--policy", a.options.policy,
                                 "ready-queue order: fifo (Torq's), critical-path, or best (the fastest of eight "
                                 "rules); default: the file's 'policy' line, else fifo")
                      ->transform(CLI::CheckedTransformer(policies));
  std::map<std::string, CoreChoice> choices{{"first-free", CoreChoice::first_free},
                                            {"least-loaded", CoreChoice::least_loaded}};
  app.add_option("--core-choice", a.options.core_choice, "core for a start: first-free (Torq's) or least-loaded")
      ->transform(CLI::CheckedTransformer(choices));
  add_number(app, "--cap-percent", a.options.cap_percent, "first cap, % of memory (then x0.85, x0.70)", 1, 100);
  add_number(app, "--prefetch-percent", a.options.prefetch_percent, "prefetchCap, % of cap, for far loads", 0, 100);
  add_number(app, "--urgent-starts", a.options.urgent_starts, "upcoming programs whose loads may fill cap", 0,
             static_cast<int>(kMaxOps));
  add_number(app, "--window", a.options.window, "candidates looked at per queue and step", 1, static_cast<int>(kMaxOps));
  app.add_option("--memory", a.memory, "memory size, overrides the file (e.g. 512K, 2M)");
  add_number(app, "--cores", a.cores, "compute units, overrides the file (0 = the file's)", 0, kMaxCores);
  add_number(app, "--reserve", a.options.pool.reserve_bytes, "bytes the pool keeps free at the top (Torq: 1280)",
             int64_t{0}, kMaxBytes);
  add_number(app, "--swap-bandwidth", a.options.swap_bytes_per_cycle,
             "spill/reload bytes per cycle (0 = the stream's own loads)", 0.0, 1e12);
}

// Stream files are text, one op a line; 256 MiB is far past kMaxOps lines.
constexpr uint64_t kMaxStreamBytes = uint64_t{256} << 20;

int run(const Args& a) {
  for (const auto& [flag, path] : {std::pair<const char*, std::string>{"--svg", a.svg}, {"--trace", a.trace}}) {
    if (path.empty()) continue;
    if (const std::string e = ork::tools::check_not_an_input({flag, path}, {{"FILE", a.file}}); !e.empty()) {
      fmt::print(stderr, "ork_sched: {}\n", e);
      return 2;
    }
  }
  std::string text;
  if (const std::string e = ork::tools::read_file_bounded("FILE", a.file, kMaxStreamBytes, &text); !e.empty()) {
    fmt::print(stderr, "ork_sched: {}\n", e);
    return 2;
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
  ork::Result<Stream> stream = parse_stream(text, overrides);
  std::string().swap(text);  // the stream holds its own names: the text's pages go back to malloc for the graph
  if (!stream) {  // bad input: exit 2, like any file a tool cannot take
    fmt::print(stderr, "ork_sched: {}: {}\n", a.file, stream.error().message);
    return 2;
  }
  Options options = a.options;  // the file's policy (a plan ork_run wrote) unless --policy says
  if (a.policy_flag->count() == 0) options.policy = stream_policy(*stream, options.policy);
  ork::Result<Graph> graph = build_graph(*stream);
  if (!graph) {
    fmt::print(stderr, "ork_sched: {}: {}\n", a.file, graph.error().message);
    return 1;
  }
  ork::Result<Schedule> sched = schedule(*stream, *graph, options);
  if (!sched) {
    fmt::print(stderr, "ork_sched: {}: {}\n", a.file, sched.error().message);
    return 1;
  }
  // Written as is: fmt::print would format the report (tens of MB at 1M ops) into a buffer first.
  const std::string report = a.json ? render_json_text(*stream, *sched) + '\n' : render_text(*stream, *sched);
  if (std::fwrite(report.data(), 1, report.size(), stdout) != report.size()) {
    fmt::print(stderr, "ork_sched: cannot write the report to standard output\n");
    return 1;
  }
  if (a.svg.empty() && a.trace.empty()) return 0;
  const std::vector<Panel> panels = make_panels(*stream, *graph, *sched, options);
  bool ok = true;
  if (!a.svg.empty()) ok = write_file(a.svg, render_svg(*stream, panels)) && ok;
  if (!a.trace.empty()) ok = write_file(a.trace, render_trace(*stream, panels).dump()) && ok;
  return ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  ork::tools::reexec_with_huge_pages(argv);
  CLI::App app{"ork_sched: reorder a load/start/wait/store stream so DMA and compute overlap "
               "(the list scheduler of docs/sched.md). Exit 0 done, 1 the stream cannot run (or a picture "
               "cannot be written), 2 bad usage or an invalid stream."};
  Args args;
  add_flags(app, args);
  if (int rc = ork::tools::parse_command_line(app, argc, argv); rc >= 0) return rc;
  return ork::tools::run_main("ork_sched", [&] { return run(args); });
}
