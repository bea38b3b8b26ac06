// ork_run: runs a packed model larger than memory through the NPU (docs/execution.md):
// the list scheduler of lib/sched orders the loads and matmuls under the budget, the
// io_uring loader reads each tensor into its slot, the device multiplies, and every output
// is checked against the CPU reference of the same model. Exit codes as docs/tools.md: 0
// every output matched, 1 a check or the run failed, 2 bad usage or input, 3 the device
// could not be opened.
#include <algorithm>
#include <cstdio>
#include <utility>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "driver/emu/kernel/fake_kernel.h"
#include "lib/api/backend.h"
#include "lib/api/device.h"
#include "lib/exec/executor.h"
#include "lib/exec/exec_plan.h"
#include "lib/exec/chain_reference.h"
#include "lib/exec/windows.h"
#include "driver/common/safe_file.h"
#include "tools/common/cli.h"
#include "tools/common/huge_pages.h"
#include "tools/common/input_limits.h"
#include "tools/common/ork_handles.h"
#include "tools/common/progress.h"
#include "tools/common/spread.h"
#include "tools/ork_run/bench.h"
#include "tools/ork_run/bench_fuse.h"
#include "tools/ork_run/project_report.h"
#include "tools/ork_run/run_inputs.h"
#include "tools/common/size_arg.h"

namespace {

using namespace ork;

int error(const std::string& msg, tools::Exit e = tools::Exit::bad_usage) {
  std::fprintf(stderr, "ork_run: %s\n", msg.c_str());
  return tools::code(e);
}

struct Figures {
  double token_us, token_min_us, token_max_us, io_us, device_us, overlap, wall_us, mean_us;
};

Figures figures(const exec::RunStats& s, int64_t tokens) {
  Figures f{};
  std::vector<double> token_us;
  for (int64_t ns : s.token_ns) token_us.push_back(static_cast<double>(ns) / 1e3);
  const tools::Spread t = tools::spread(token_us);  // min / median / max, as every benchmark reports
  f.token_us = t.median;
  f.token_min_us = t.min;
  f.token_max_us = t.max;
  f.io_us = static_cast<double>(s.io_ns) / 1e3 / static_cast<double>(tokens);
  f.device_us = static_cast<double>(s.device_ns) / 1e3 / static_cast<double>(tokens);
  f.wall_us = static_cast<double>(s.wall_ns) / 1e3;
  // Loads run ahead across token boundaries, so one token's time can be short while the
  // next pays its I/O: the efficiency uses the mean token time (wall / tokens), which can
  // never beat the busier of the two threads.
  f.mean_us = f.wall_us / static_cast<double>(tokens);
  const double busy = std::max(f.io_us, f.device_us);
  f.overlap = busy > 0 ? f.mean_us / busy : 0;
  return f;
}

struct Args {
  // budget_text / window_text empty: the machine's default / the 4 GiB window (run_inputs.h).
  std::string path, budget_text, window_text, device_name, order_text = "scheduled", trace_path, plan_out;
  int64_t tokens = 4, m = 1;
  int cores = 3, inflight = 2, windows = 0;  // windows 0: found (lib/exec/windows.h)
  double disk_gbs = 1.2;
  bool json = false, plan_only = false, fuse = true;  // fuse: PlanOptions::fuse's default
};

// A run's inputs checked before the device is touched: the model read, its plan built.
struct Prepared {
  exec::PackedModel model;
  exec::PlanOptions po;
  exec::ExecPlan plan;
  tools::Memory memory;
};

// The outputs (--trace, --plan-out) checked before anything runs: never the model, and
// writable, so that a bad path fails now and not after a run of minutes. "" or the message.
std::string check_outputs(const Args& a) {
  for (const auto& [flag, path] : {std::pair<std::string, std::string>{"--trace", a.trace_path}, {"--plan-out", a.plan_out}}) {
    if (path.empty()) continue;
    if (auto e = tools::check_not_an_input({flag, path}, {{"MODEL", a.path}}); !e.empty()) return e;
    if (auto e = tools::check_writable(flag, path); !e.empty()) return e;
  }
  return {};
}

// Budget, window, order and the outputs checked, the model read and planned (and the plan
// written with --plan-out): -1 to go on, else the exit code.
int prepare(const Args& a, Prepared& p) {
  auto memory = tools::parse_memory(a.budget_text, a.window_text);
  if (!memory) return error(memory.error().message);
  p.memory = *memory;
  auto order = exec::parse_order(a.order_text);
  if (!order) return error(order.error().message);
  if (auto e = check_outputs(a); !e.empty()) return error(e);
  auto model = exec::read_packed(a.path);
  if (!model) return error(model.error().message);
  p.model = std::move(*model);
  p.po.m = a.m;
  p.po.tokens = a.tokens;
  p.po.budget_bytes = p.memory.budget_bytes;
  p.po.window_bytes = p.memory.window_bytes;
  p.po.order = *order;
  p.po.cores = a.cores == 0 ? 3 : a.cores;  // 0 = all: the RK3588 has 3, the device may have fewer
  p.po.disk_bytes_per_ns = a.disk_gbs;
  p.po.fuse = a.fuse;
  p.po.windows = a.windows == 0 ? exec::windows_found(p.model, p.po) : a.windows;
  auto plan = exec::build_plan(p.model, p.po);
  if (!plan) return error(plan.error().message);
  p.plan = std::move(*plan);
  if (!a.plan_out.empty())
    if (auto e = tools::write_plan(a.plan_out, p.plan, p.po, a.path); !e.empty()) return error(e, tools::Exit::check_failed);
  return -1;
}

// "" when the activations (--m rows of the model's widths) fit beside the slots in the memory
// available, checked before anything of the run is allocated (a 2^20-wide model at --m 2048
// once died in std::bad_alloc on the device thread); else the message naming --m.
std::string check_activations(const Args& a, const Prepared& p) {
  const uint64_t acts = exec::activation_bytes_bound(p.model.desc, a.m, a.inflight);
  const uint64_t total = acts > UINT64_MAX - p.plan.slot_total ? UINT64_MAX : acts + p.plan.slot_total;
  return tools::check_memory(fmt::format("--m {} (activations of up to {} for a hidden size of {}, beside {} of weight "
                                         "slots)", a.m, tools::human_bytes(acts), p.model.desc.hidden,
                                         tools::human_bytes(p.plan.slot_total)),
                             total);
}

// False (and a message) when the trace file cannot be written: the run then fails.
bool write_trace(const std::string& path, const std::vector<exec::TraceEvent>& trace) {
  // Beside the output, renamed over it when complete (driver/common/safe_file.h).
  const Status s = write_file_atomically(path, exec::trace_json(trace));
  if (s) return true;
  std::fprintf(stderr, "ork_run: cannot write --trace %s\n", s.error().message.c_str());
  return false;
}

// `inflight`: the matmuls the run could hand to the NPU at once (1 on the cpu device).
// `clamped`: int4 output cells the emulated NPU clamped to int16 during the run (-1: not
// emulated, not reported).
void print_json(const Args& a, const Prepared& p, const std::string& backend, int inflight, const exec::RunStats& s,
                const Status& check, int64_t clamped) {
  const Figures f = figures(s, a.tokens);
  const exec::ExecPlan& plan = p.plan;
  nlohmann::json j = {{"model", a.path}, {"device", backend}, {"tokens", a.tokens}, {"m", a.m},
                      {"token_us", f.token_us}, {"token_min_us", f.token_min_us}, {"token_max_us", f.token_max_us},
                      {"token_mean_us", f.mean_us}, {"io_us", f.io_us}, {"device_us", f.device_us}, {"overlap", f.overlap},
                      {"hit_rate", s.hit_rate()}, {"peak_bytes", s.peak_bytes}, {"budget_bytes", p.memory.budget_bytes},
                      {"budget_source", p.memory.budget_given ? "--budget" : "MemAvailable / 2"},
                      {"window_bytes", p.memory.window_bytes}, {"windows", s.windows}, {"peak_rss_bytes", tools::peak_rss_bytes()},
                      {"model_bytes", p.model.weight_bytes()}, {"order", exec::order_name(p.po.order)},
                      {"inflight", inflight}, {"max_inflight", s.max_inflight}, {"max_group", s.max_group}, {"stacked_matmuls", s.stacked_matmuls},
                      {"max_pieces", s.max_pieces}, {"fuse", a.fuse}, {"fused_groups", s.fused_groups},
                      {"policy", plan.policy}, {"predicted_us", static_cast<double>(plan.predicted_ns) / 1e3},
                      {"lower_bound_us", static_cast<double>(plan.lower_bound_ns) / 1e3}, {"wall_us", f.wall_us},
                      {"slots", plan.slot_bytes.size()}, {"pinned_bytes", plan.pinned_bytes},
                      {"pinned_tensors", std::count(plan.pinned.begin(), plan.pinned.end(), true)}, {"engine", s.engine}, {"direct", s.direct},
                      {"registered", s.registered}, {"fallbacks", s.fallbacks}, {"checked", static_cast<bool>(check)}};
  if (!check) j["check_error"] = check.error().message;
  if (clamped >= 0) j["int4_saturated_cells"] = clamped;
  j["fused_planned"] = s.fused_planned;  // fused_groups + fused_alone (executor.h)
  j["fused_alone"] = s.fused_alone;
  if (s.fused_alone > 0) j["fused_alone_reason"] = s.fused_alone_reason;
  std::printf("%s\n", j.dump().c_str());
}

void print_text(const Args& a, const Prepared& p, const std::string& backend, int inflight, const exec::RunStats& s,
                const Status& check) {
  const Figures f = figures(s, a.tokens);
  const exec::PackedModel& model = p.model;
  const exec::ExecPlan& plan = p.plan;
  const double mib = 1024.0 * 1024.0;
  std::printf("model     %s: %s %s, %d layers, %.0f MiB of weights; device %s; order %s (%s); m = %lld\n", a.path.c_str(),
              model.desc.name.c_str(), exec::dtype_key(model.desc.dtype), model.desc.layers,
              static_cast<double>(model.weight_bytes()) / mib, backend.c_str(), exec::order_name(p.po.order),
              plan.policy.c_str(), static_cast<long long>(a.m));
  std::printf("token     %.1f / %.1f / %.1f ms min / median / max, %.1f ms mean over %lld tokens (wall %.1f ms)\n",
              f.token_min_us / 1e3, f.token_us / 1e3, f.token_max_us / 1e3, f.mean_us / 1e3,
              static_cast<long long>(a.tokens), f.wall_us / 1e3);
  std::printf("I/O       %.1f ms per token (%s%s%s, %.2f GB/s while reading)\n", f.io_us / 1e3, s.engine.c_str(),
              s.direct ? ", O_DIRECT" : "", s.registered ? ", registered buffers" : "",
              s.io_ns > 0 ? static_cast<double>(s.bytes_read) / static_cast<double>(s.io_ns) : 0.0);
  std::printf("device    %.1f ms per token (%d matmul(s) in flight at most)\n", f.device_us / 1e3, inflight);
  std::printf("overlap   %.2f (mean token time / max(I/O, device); 1.00 = fully overlapped)\n", f.overlap);
  std::printf("loader    hit rate %.2f (%llu of %llu loads ready when their matmul started)\n", s.hit_rate(),
              static_cast<unsigned long long>(s.hits), static_cast<unsigned long long>(s.loads));
  std::printf("memory    peak %.1f MiB of a %.1f MiB budget%s (%zu slots; %.1f MiB of %lld tensors pinned across tokens)\n",
              static_cast<double>(s.peak_bytes) / mib, static_cast<double>(s.budget_bytes) / mib,
              p.memory.budget_given ? "" : " (half of MemAvailable)", plan.slot_bytes.size(),
              static_cast<double>(plan.pinned_bytes) / mib,
              static_cast<long long>(std::count(plan.pinned.begin(), plan.pinned.end(), true)));
  if (s.windows > 1)
    std::printf("windows   %d NPU windows of at most %.0f MiB of slots each, every layer in one\n", s.windows,
                static_cast<double>(p.po.window_bytes) / mib);
  std::printf("process   peak RSS %.1f MiB (getrusage; activations, the reference, the emulated NPU's copies: "
              "outside the budget)\n", static_cast<double>(tools::peak_rss_bytes()) / mib);
  std::printf("plan      predicted %.1f ms for the run, lower bound %.1f ms\n", static_cast<double>(plan.predicted_ns) / 1e6,
              static_cast<double>(plan.lower_bound_ns) / 1e6);
  for (const auto& fb : s.fallbacks) std::printf("fallback  %s\n", fb.c_str());
  const auto mm = static_cast<double>(a.tokens) * model.desc.layers * static_cast<double>(model.desc.matmuls.size());
  if (check)
    std::printf("checked   every output equals the CPU reference (%.0f matmul outputs)\n", mm);
  else
    std::printf("MISMATCH  %s\n", check.error().message.c_str());
}

int run(const Args& a) {
  Prepared p;
  if (int rc = prepare(a, p); rc >= 0) return rc;
  if (a.plan_only) {  // the plan only: no device opened, nothing run or checked
    const nlohmann::json j = {{"plan_out", a.plan_out}, {"ops", p.plan.order.size()}, {"order", exec::order_name(p.po.order)},
                              {"policy", p.plan.policy}, {"predicted_us", static_cast<double>(p.plan.predicted_ns) / 1e3},
                              {"lower_bound_us", static_cast<double>(p.plan.lower_bound_ns) / 1e3},
                              {"budget_bytes", p.memory.budget_bytes}, {"window_bytes", p.memory.window_bytes}};
    if (a.json) std::printf("%s\n", j.dump().c_str());
    else std::printf("plan      %s: %zu ops, predicted %.1f ms (draw it: ork_sched %s --svg plan.svg)\n",
                     a.plan_out.c_str(), p.plan.order.size(), static_cast<double>(p.plan.predicted_ns) / 1e6,
                     a.plan_out.c_str());
    return tools::code(tools::Exit::ok);
  }
  if (auto e = check_activations(a, p); !e.empty()) return error(e);
  auto opened = tools::open_named_device(a.device_name);
  if (!opened)  // an unknown name is bad usage; a device that is not there is exit 3
    return error(opened.error().message,
                 opened.error().code == -EINVAL ? tools::Exit::bad_usage : tools::Exit::device_unavailable);
  // The one thing the C API does not hand out: the device as the executor drives it.
  exec::DeviceRef ref = api::exec_device(*opened->device, p.po.cores);
  tools::Windows windows;  // windows 1.. of a resident model past one window: their Kmds and runners
  if (auto e = tools::open_windows(p.po.windows, windows, ref); !e.empty())
    return error(e, tools::Exit::device_unavailable);

  tools::Progress bar("running", static_cast<int64_t>(p.plan.order.size() / 3), !a.json);
  exec::RunOptions ro;
  ro.want_trace = !a.trace_path.empty();
  ro.inflight = a.inflight;
  ro.progress = [&](int64_t done, int64_t) { bar.update(done); };
  ork_device& dev = *opened->device;
  const auto clamped_now = [&] { return dev.fake ? static_cast<int64_t>(dev.fake->stats().int4_saturated_cells) : -1; };
  const int64_t clamped_before = clamped_now();
  auto run = exec::run_plan(a.path, p.model, p.plan, p.po, ref, ro);
  bar.finish();
  // A clamped int4 cell is a plan past the int16 bound (docs/dtypes.md): a failed run even
  // if the outputs happened to match.
  const int64_t clamped = clamped_before < 0 ? -1 : clamped_now() - clamped_before;
  if (!run) return error(run.error().message, run.error().code == -EINVAL ? tools::Exit::bad_usage : tools::Exit::check_failed);
  auto want = exec::reference_chain(a.path, p.model, a.m, a.tokens);
  if (!want) return error(fmt::format("the CPU reference failed: {}", want.error().message), tools::Exit::check_failed);
  Status check = exec::compare_chains(p.model, run->chain, *want);
  if (check && clamped > 0)
    check = make_error(-EIO, fmt::format("the emulated NPU clamped {} int4 output cells to int16", clamped));
  const bool trace_written = a.trace_path.empty() || write_trace(a.trace_path, run->trace);
  const int inflight = ref.kmd != nullptr ? a.inflight : 1;
  if (a.json)
    print_json(a, p, tools::device_label(opened->info), inflight, run->stats, check, clamped);
  else
    print_text(a, p, tools::device_label(opened->info), inflight, run->stats, check);
  return tools::code(check && trace_written ? tools::Exit::ok : tools::Exit::check_failed);
}

// The options of a run (the positional model and the flags every mode shares).
void add_run_options(CLI::App& app, Args& a) {
  app.add_option("model", a.path, "a packed model file (ork_pack); required except with --project --synthetic");
  tools::add_number(app, "--tokens", a.tokens, "token steps to run", int64_t{1}, int64_t{100000});
  app.add_option("--budget", a.budget_text, "bytes of host RAM for weight slots (K/M/G suffixes); default half of "
                 "MemAvailable (/proc/meminfo) in whole MiB, 512M when it cannot be read");
  app.add_option("--window", a.window_text, "bytes of each NPU address window the slots may take (K/M/G); default "
                 "and most 4G, the RK3588's 32-bit window");
  tools::add_number(app, "--windows", a.windows, "NPU windows the slots may span (rknpu IOMMU domains, rocket files), "
                    "a layer whole in one; 0 = found: the fewest that hold the model resident when it fits --budget "
                    "over more than one token, else 1", 0, 16);
  tools::add_device(app, a.device_name);
  app.add_option("--order", a.order_text, "scheduled, fifo or sequential")->capture_default_str();
  tools::add_number(app, "--m", a.m, "rows per token step: 1 decode, 64..512 prefill", int64_t{1}, int64_t{4096});
  tools::add_cores(app, a.cores, "NPU cores per matmul; 0 = all the device has");
  tools::add_number(app, "--inflight", a.inflight, "matmuls handed to the NPU at once (1 = each waited before the "
                    "next is prepared; the cpu device runs one at a time)", 1, 8);
  app.add_flag("--fuse,!--no-fuse", a.fuse, "--fuse (the default): run the groups whose board plan is one fused "
               "matmul so (q/k/v, gate/up: their weights side by side in one buffer; docs/execution.md \"Fused "
               "groups\"); --no-fuse: every matmul its own buffer and job, and --project prices that plan");
  tools::add_number(app, "--disk-gbs", a.disk_gbs, "disk rate the plan assumes, GB/s", 0.001, 1000.0);
  app.add_option("--trace", a.trace_path, "write a Perfetto / chrome://tracing JSON of the run (never the model)");
  auto* plan_out = app.add_option("--plan-out", a.plan_out, "write the plan (its sched::Stream, ops in the order run) in "
                                  "ork_sched's text format before the run: ork_sched FILE --svg/--trace draws it");
  app.add_flag("--plan-only", a.plan_only, "with --plan-out: write the plan and stop (no device, no run)")->needs(plan_out);
  tools::add_json(app, a.json);
}

// --project: the modelled board time of the matmuls instead of a run (project_report.h).
void add_project_options(CLI::App& app, bool& project, tools::ProjectArgs& pa) {
  app.add_flag("--project", project,
               "print the board projection (decode and prefill M=128 tokens/s: timing model + measured host + I/O)");
  auto* synth = app.add_option("--synthetic", pa.synthetic, "--project: a synthetic model's shapes (tiny, small, "
                               "qwen2.5-1.5b, 7b) instead of a file; nothing is written");
  tools::add_number(app, "--layers", pa.layers, "--project --synthetic: layers", 1, 1024)->needs(synth);
  app.add_option("--dtype", pa.dtype, "--project --synthetic: int8, int4 or fp16")->capture_default_str()->needs(synth);
  tools::add_number(app, "--disk-rate", pa.disk_bytes_per_s, "--project: disk rate, bytes/s (docs/io.md: 1.2e9 measured)",
                    1e6, 1e12);
  tools::add_number(app, "--host-us", pa.host_us, "--project: host time per matmul call, us (default: measured "
                    "on the zero-work emulator)", 0.0, 1e6);
  tools::add_number(app, "--prefill-m", pa.prefill_m, "--project: rows of the prefill step", int64_t{2}, int64_t{4096});
  app.add_option("--int4-weights", pa.int4_weights, "--project --synthetic --dtype int4: the weights whose own int16 "
                 "bound sets each matmul's K-slice width: synthetic (the model's, layer 0), q4_0 (N(0,1) quantised as "
                 "GGUF Q4_0) or floor (480)")->capture_default_str()->needs(synth);
}

// --bench-orders: the three orders at board speed, side by side (bench.h).
void add_bench_options(CLI::App& app, bool& bench, bool& bench_fuse, tools::BenchArgs& ba) {
  app.add_flag("--bench-orders", bench, "time scheduled, fifo and sequential interleaved on the zero-work emulator at "
               "the modelled board time (not checked), then check each once on --device");
  app.add_flag("--bench-fuse", bench_fuse, "time the run fused and --no-fuse interleaved, on the zero-work emulator "
               "(the library's host work; not checked) and on --device (every output checked): CPU time per token")
      ->excludes("--bench-orders");
  tools::add_repeat(app, ba.repeats, 1000, "--bench-orders, --bench-fuse: rounds (min / median / max)");
  tools::add_number(app, "--io-rate", ba.io_rate, "--bench-orders: cap the reader at this many bytes/s (0 = the disk "
                    "as it is); the plans assume it", 0.0, 1e12);
}

// The run's options handed to the projection; --budget only when it was given.
int project(const Args& a, tools::ProjectArgs& pa, bool budget_given) {
  pa.path = a.path;
  pa.cores = a.cores == 0 ? 3 : a.cores;
  pa.json = a.json;
  pa.fuse = a.fuse;
  if (budget_given) {
    auto b = io::tools::parse_size(a.budget_text);
    if (!b) return error(fmt::format("--budget {}: {}", a.budget_text, b.error().message));
    pa.budget_bytes = *b;
  }
  if (!a.window_text.empty()) return error("--window: --project uses the 4 GiB window; it is a run's flag");
  return tools::run_project(pa);
}

// The run's options into the benchmarks' arguments (--bench-orders and --bench-fuse).
Status fill_bench_args(const Args& a, tools::BenchArgs& ba) {
  auto memory = tools::parse_memory(a.budget_text, a.window_text);
  if (!memory) return memory.error();
  ba.path = a.path;
  ba.device_name = a.device_name;
  ba.tokens = a.tokens;
  ba.m = a.m;
  ba.budget_bytes = memory->budget_bytes;
  ba.window_bytes = memory->window_bytes;
  ba.cores = a.cores == 0 ? 3 : a.cores;
  ba.disk_bytes_per_ns = a.disk_gbs;
  ba.inflight = a.inflight;
  ba.json = a.json;
  return {};
}

// The run's options checked and handed to the order benchmark.
int bench_orders(const Args& a, tools::BenchArgs& ba) {
  if (ba.io_rate > 0 && ba.io_rate < 1e6) return error(fmt::format("--io-rate {}: below 1e6 bytes/s", ba.io_rate));
  if (Status s = fill_bench_args(a, ba); !s) return error(s.error().message);
  return tools::run_bench_orders(ba);
}

// The run's options handed to the fused / unfused benchmark.
int bench_fuse(const Args& a, tools::BenchArgs& ba) {
  if (Status s = fill_bench_args(a, ba); !s) return error(s.error().message);
  return tools::run_bench_fuse(ba);
}

}  // namespace

int main(int argc, char** argv) {
  return tools::run_main("ork_run", [&] {
    CLI::App app{"Run a packed model through the NPU under a memory budget, every output checked against the CPU reference"};
    tools::add_conventions(app, "ork_run");
    Args a;
    add_run_options(app, a);
    bool want_project = false;
    tools::ProjectArgs pa;
    add_project_options(app, want_project, pa);
    bool bench = false, fuse_bench = false;
    tools::BenchArgs ba;
    add_bench_options(app, bench, fuse_bench, ba);
    auto* budget_opt = app.get_option("--budget");
    if (int rc = tools::parse_command_line(app, argc, argv); rc >= 0) return rc;
    if (!pa.synthetic.empty() && !want_project)
      return error("--synthetic needs --project (ork_pack --synthetic writes a model file)");
    if (want_project) return project(a, pa, budget_opt->count() > 0);
    if (a.path.empty()) return error("MODEL: a packed model file is required (ork_pack writes one)");
    if (bench) return bench_orders(a, ba);
    if (fuse_bench) return bench_fuse(a, ba);
    // The plan alone is host tables of a million entries at most, touched once or twice each,
    // as ork_sched's are: the same second run on huge pages (docs/sched.md section 5). A run
    // with a device keeps the first: its slots are the model's bytes, not tables.
    if (a.plan_only) tools::reexec_with_huge_pages(argv);
    return run(a);
  });
}
