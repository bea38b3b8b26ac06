// mc_prof: µs per matmul and per submit for a shape, 1 core against N cores, the host/device
// breakdown, and sweeps (mc cap, K, N, cores) — the published M-tile experiment is `--published`.
// Runs unchanged on a board (device time from the kernel) and on the emulated NPU.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "driver/common/cbuf_limits.h"
#include "driver/common/npu_cores.h"
#include "driver/emu/kernel/fake_kernel.h"
#include "lib/api/device.h"
#include "driver/common/safe_file.h"
#include "tools/common/cli.h"
#include "tools/common/input_limits.h"
#include "tools/mc_prof/calibrate.h"
#include "tools/mc_prof/split.h"
#include "tools/mc_prof/measure.h"
#include "tools/mc_prof/report.h"
#include "driver/emu/kernel/zero_work.h"

namespace {

using namespace ork::tools;

struct Args {
  std::vector<int64_t> shape;
  int cores = 0;
  int iters = 20;
  int warmup = 3;
  int64_t mc_cap = 0;
  std::string device;  // "" = $ORK_DEVICE, else auto
  std::string sweep;
  std::vector<int64_t> values;
  bool json = false, csv = false, zero_time = false, published_sweep = false, vs_cpu = false;
  std::string svg;
  std::string calibrate;  // --calibrate REPORT
  bool split = false;     // --split: the submit / task experiment (split.h)
};

// --split: the rows, one JSON array on one line (the runbook's report embeds it) or a table.
int run_split(const Args& a, ork_device& dev, const std::string& iface) {
  auto rows = measure_split(dev, a.warmup, a.iters);
  if (!rows) {
    fmt::print(stderr, "mc_prof: --split: {}\n", rows.error().message);
    return code(Exit::check_failed);
  }
  nlohmann::json arr = nlohmann::json::array();
  for (const SplitRow& r : *rows) arr.push_back(split_row_json(r, iface));
  if (a.json) {
    fmt::print("{}\n", arr.dump());
    return code(Exit::ok);
  }
  fmt::print("{:>4} {:>14} {:>14}  ({} time, median of {})\n", "N", "chained us", "N submits us", (*rows)[0].device_source, a.iters);
  for (const SplitRow& r : *rows) fmt::print("{:>4} {:>14.1f} {:>14.1f}\n", r.tasks, r.chained_us, r.separate_us);
  if (auto f = fit_split(*rows))
    fmt::print("fit: {:.1f} us per submit, {:.1f} us per task (+ {:.1f} us modelled work), worst row {:.1f} %\n", f->submit_us,
               f->task_us, f->work_us, f->max_residual_percent);
  return code(Exit::ok);
}

// The emulated NPU with its PC executing nothing: every job "completes" at once, so what is
// left is the host's own work (lookup, packing, ioctls, unpack). Results are not computed.
std::unique_ptr<ork_device> open_zero_time(const std::string& name) {
  ork::emu::FakeKernelConfig cfg;
  cfg.executor = ork::emu::zero_work_executor();
  const auto kind = name == "emu-rocket" ? ork::driver::KmdKind::rocket : ork::driver::KmdKind::rknpu;
  auto d = ork::api::open_emulator(kind, cfg);
  if (!d) return nullptr;
  return std::move(*d);
}

std::vector<Config> configs(const Args& a, int max_cores, std::vector<std::string>& labels) {
  Config base;
  if (a.shape.size() == 3) base = Config{a.shape[0], a.shape[1], a.shape[2]};
  base.iters = a.iters;
  base.warmup = a.warmup;
  base.mc_cap = a.mc_cap;
  base.cores = a.cores ? a.cores : max_cores;
  std::vector<Config> out;
  auto add = [&](Config c, std::string label) {
    out.push_back(c);
    labels.push_back(std::move(label));
  };
  if (a.published_sweep) {  // the published M-tile experiment: N = 2048, K in {2048, 3584}, 1 and 3 cores, cap 31 vs bank limit
    for (int64_t k : {2048, 3584})
      for (int cores : {1, max_cores})
        for (int64_t cap : {31, 0}) {
          Config c = base;
          c.k = k, c.n = 2048, c.cores = cores, c.mc_cap = cap;
          add(c, fmt::format("K{}/{}c/{}", k, cores, cap ? "cap31" : "mg_max*64"));
        }
    return out;
  }
  if (a.sweep.empty()) {  // one shape: 1 core against N cores
    Config one = base;
    one.cores = 1;
    add(one, "1 core");
    if (base.cores > 1) add(base, fmt::format("{} cores", base.cores));
    return out;
  }
  for (int64_t v : a.values) {
    Config c = base;
    if (a.sweep == "mc") c.mc_cap = v;
    if (a.sweep == "k") c.k = v;
    if (a.sweep == "n") c.n = v;
    if (a.sweep == "m") c.m = v;
    if (a.sweep == "cores") c.cores = static_cast<int>(v);
    if (a.sweep == "cap") c.mc_cap = v;
    add(c, fmt::format("{}={}", a.sweep, a.sweep == "cap" && v == 0 ? std::string("bank") : std::to_string(v)));
  }
  return out;
}

std::vector<int64_t> default_values(const std::string& sweep) {
  if (sweep == "mc") return {4, 8, 16, 31, 64, 128};
  if (sweep == "k") return {512, 1024, 2048, 3584, 4096, 6144};
  if (sweep == "n") return {512, 2048, 4096, 8192};
  if (sweep == "m") return {1, 16, 64, 256, 512};
  if (sweep == "cores") return {1, 2, 3};
  return {31, 0};  // cap: the old R-1 cap against the bank limit
}

// Bounds of the shape and sweep values: the library's own dimension limit (lib/api/api.cpp
// kMaxDim), then the host memory the buffers take (checked against MemAvailable).
constexpr int64_t kMaxDim = int64_t{1} << 24;

// A, W, C on the host, and as much again on the device side (the emulator's BOs, the
// runner's packed copies): what one configuration needs, roughly.
uint64_t bytes_needed(const Config& c) {
  const auto m = static_cast<uint64_t>(c.m), k = static_cast<uint64_t>(c.k), n = static_cast<uint64_t>(c.n);
  return 2 * (m * k + k * n + 4 * m * n);
}

// "" when every configuration's values are in range and fit in memory, else why not.
std::string check_configs(const Args& a, const std::vector<Config>& cfgs, int max_cores) {
  for (int64_t v : a.values) {
    const bool dim = a.sweep == "k" || a.sweep == "n" || a.sweep == "m";
    if (dim && (v < 1 || v > kMaxDim))
      return fmt::format("--values {}: a {} must be a whole number from 1 to {}", v, a.sweep, kMaxDim);
    if (a.sweep == "cores" && (v < 1 || v > max_cores))
      return fmt::format("--values {}: cores must be from 1 to {} (the device's)", v, max_cores);
    if ((a.sweep == "mc" || a.sweep == "cap") && (v < 0 || v > ork::hw::kMaxRowsPerTask))
      return fmt::format("--values {}: an M-tile cap must be from 0 to {}", v, ork::hw::kMaxRowsPerTask);
  }
  for (const Config& c : cfgs) {
    const std::string e = check_memory(fmt::format("M K N = {} {} {}", c.m, c.k, c.n), bytes_needed(c));
    if (!e.empty()) return e;
  }
  return {};
}

// The device mc_prof runs on: --device, else $ORK_DEVICE, else auto. --zero-time runs on
// the emulator only, so there the default (auto) is emu.
std::string device_name(const Args& a) {
  std::string name = ork::api::resolve_device_name(a.device.c_str());
  if (a.zero_time && name == "auto") name = "emu";
  return name;
}

// The device mc_prof profiles (NPU devices only; --zero-time: an emulator whose PC does no
// work). 0, or the exit code of a refusal.
int open_profiled(const Args& a, const std::string& name, std::unique_ptr<ork_device>& dev) {
  if (a.zero_time) {
    if (name != "emu" && name != "emu-rknpu" && name != "emu-rocket") {
      fmt::print(stderr, "mc_prof: --zero-time needs --device emu, emu-rknpu or emu-rocket (the default is emu); "
                         "got '{}'\n", name);
      return code(Exit::bad_usage);
    }
    dev = open_zero_time(name);
  } else {
    auto d = ork::api::open_device(name.c_str());
    if (!d) {
      fmt::print(stderr, "mc_prof: cannot open device '{}': {}\n", name, d.error().message);
      return code(d.error().code == -EINVAL ? Exit::bad_usage : Exit::device_unavailable);
    }
    dev = std::move(*d);
  }
  if (!dev || !dev->backend->kmd()) {
    fmt::print(stderr, "mc_prof: '{}' is not an NPU device (mc_prof profiles rknpu, rocket or emu)\n", name);
    return code(Exit::bad_usage);
  }
  return 0;
}

// Every configuration measured, with a progress line on a terminal. 0, or the exit code.
int measure_rows(ork_device& dev, const std::vector<Config>& cfgs, const std::vector<std::string>& labels,
                 std::vector<Row>& rows) {
  const bool tty = isatty(STDERR_FILENO);
  for (size_t i = 0; i < cfgs.size(); ++i) {
    if (tty) fmt::print(stderr, "\r[{}/{}] {} ...", i + 1, cfgs.size(), labels[i]);
    auto m = measure(dev, cfgs[i]);
    if (!m) {
      if (tty) fmt::print(stderr, "\n");
      fmt::print(stderr, "mc_prof: {} ({}x{}x{}, {} cores): {}\n", labels[i], cfgs[i].m, cfgs[i].k, cfgs[i].n,
                 cfgs[i].cores, m.error().message);
      return code(Exit::check_failed);
    }
    rows.push_back({labels[i], *m});
  }
  if (tty) fmt::print(stderr, "\r{:60}\r", "");
  return 0;
}

// The text report: the table, the published figures (--published), the CPU comparison
// (--vs-cpu), the scaling line. 0, or the exit code.
int print_text(const Args& a, const std::vector<Row>& rows, const std::string& dev_name, const std::string& timing,
               const nlohmann::json& published) {
  fmt::print("mc_prof on {}{}: {} calls per row after {} warm-up; µs per matmul; device = {}\n{}", dev_name,
             timing.empty() ? "" : " (timing " + timing + ")", a.iters, a.warmup,
             rows.empty() || rows[0].m.device_source == "kernel" ? "kernel hw_elapse_time" : "submit+wait wall time",
             table(rows));
  if (a.published_sweep)
    fmt::print("\nThe published figures against the timing model (device time, the experiment's layout: one submit per\n"
               "M-tile; docs/timing-model.md):\n{}", published_table(published));
  if (a.vs_cpu) {
    for (const Row& r : rows) {
      auto cpu = cpu_fast_us(r.m.config);
      if (!cpu) return code(Exit::check_failed);
      const double ops = 2.0 * double(r.m.config.m) * double(r.m.config.k) * double(r.m.config.n);
      fmt::print("{}: this device {:.1f} us ({:.1f} GOPS) vs CPU reference fast path {:.1f} us ({:.1f} GOPS): {:.2f}x\n",
                 r.label, r.m.us_per_matmul, ops / r.m.us_per_matmul / 1e3, *cpu, ops / *cpu / 1e3,
                 r.m.us_per_matmul / *cpu);
    }
  }
  // A ratio only where both sides were measured (zero-time has no device time: "-").
  auto x = [](double p, double q) { return p > 0 && q > 0 ? fmt::format("{:.2f}x", p / q) : std::string("-"); };
  if (a.sweep.empty() && !a.published_sweep && rows.size() == 2)
    fmt::print("scaling {}: {} wall, {} device\n", rows[1].label, x(rows[0].m.us_per_matmul, rows[1].m.us_per_matmul),
               x(rows[0].m.device_us, rows[1].m.device_us));
  return 0;
}

int run(Args& a) {
  if (!a.calibrate.empty()) return calibrate(a.calibrate, a.json);  // the model only: no device
  if (!a.shape.empty() && a.shape.size() != 3) {
    fmt::print(stderr, "mc_prof: give M K N together\n");
    return code(Exit::bad_usage);
  }
  if (!a.sweep.empty() && a.values.empty()) a.values = default_values(a.sweep);
  // --svg is written at the end of a long sweep: checked first (a new path or a regular file
  // whose directory takes the temporary file it is written to).
  if (!a.svg.empty())
    if (const std::string e = check_writable("--svg", a.svg); !e.empty()) {
      fmt::print(stderr, "mc_prof: {}\n", e);
      return code(Exit::bad_usage);
    }
  const std::string name = device_name(a);
  std::unique_ptr<ork_device> dev;
  if (int rc = open_profiled(a, name, dev); rc != 0) return rc;
  if (a.split) return run_split(a, *dev, ork::driver::kmd_kind_name(dev->backend->kmd()->info().kind));
  const std::string dev_name = fmt::format("{}{}{}", dev->name, a.zero_time ? " (zero-time)" : "",
                                           " via " + std::string(ork::driver::kmd_kind_name(dev->backend->kmd()->info().kind)));
  // The emulator's timing mode (ORK_EMU_TIMING, docs/timing-model.md); "" on a board.
  const std::string timing = a.zero_time ? "zero-time"
                             : !dev->fake ? ""
                             : dev->fake->config().timing == ork::emu::TimingMode::timed ? "timed" : "fast";
  std::vector<std::string> labels;
  const auto cfgs = configs(a, dev->backend->kmd()->info().cores, labels);
  if (const std::string e = check_configs(a, cfgs, dev->backend->kmd()->info().cores); !e.empty()) {
    fmt::print(stderr, "mc_prof: {}\n", e);
    return code(Exit::bad_usage);
  }
  std::vector<Row> rows;
  if (int rc = measure_rows(*dev, cfgs, labels, rows); rc != 0) return rc;
  const std::string sweep = a.published_sweep ? "published" : a.sweep.empty() ? "cores" : a.sweep;
  // --published: the published figures against the timing model (docs/timing-model.md).
  const nlohmann::json published = a.published_sweep ? published_report() : nlohmann::json::object();
  if (a.json) fmt::print("{}", json(rows, sweep, dev_name, timing, published));
  else if (a.csv) fmt::print("{}", csv(rows));
  else if (int rc = print_text(a, rows, dev_name, timing, published); rc != 0) return rc;
  if (!a.svg.empty()) {
    const ork::Status s = ork::write_file_atomically(
        a.svg, svg(rows, fmt::format("mc_prof {} on {}{}", sweep, dev_name, timing.empty() ? "" : " (" + timing + ")"),
                   timing != "fast" && timing != "zero-time"));
    if (!s) {
      fmt::print(stderr, "mc_prof: cannot write --svg {}\n", s.error().message);
      return code(Exit::check_failed);
    }
  }
  return code(Exit::ok);
}

}  // namespace

int main(int argc, char** argv) {
  Args a;
  CLI::App app{"mc_prof: profile libork int8 matmuls (µs per matmul / per submit, host vs device time; min / "
               "median / max over --repeat calls)"};
  add_conventions(app, "mc_prof");
  app.footer("Environment: ORK_DEVICE picks the default device; ORK_EMU_TIMING=fast|timed the emulator's timing\n"
             "mode (fast: results at once, modelled device time reported; timed: the submit returns at the\n"
             "modelled end). Exit 0 ok, 1 a run failed, 2 bad usage or a bad report, 3 device unavailable.\n"
             "docs/mc_prof.md, docs/timing-model.md.");
  app.add_option("shape", a.shape, "M K N (default 512 2048 2048)")
      ->expected(0, 3)
      ->transform(whole_number(1, kMaxDim));
  add_number(app, "--cores", a.cores, "NPU cores (0 = all the device has)", 0, ork::hw::kNpuCores);
  add_repeat(app, a.iters, 100000, "measured calls per configuration (min / median / max reported)", "--iters");
  add_number(app, "--warmup", a.warmup, "unmeasured calls first (the first builds the context; with 0 the first measured call does)", 0, 1000);
  add_number(app, "--mc-cap", a.mc_cap, "cap on rows per M-tile (31 = the old cap; 0 = bank limit)", int64_t{0},
             ork::hw::kMaxRowsPerTask);
  add_device(app, a.device, " (mc_prof needs an NPU: rknpu, rocket or emu)");
  app.add_option("--sweep", a.sweep, "sweep one parameter")->check(CLI::IsMember({"mc", "k", "n", "m", "cores", "cap"}));
  app.add_option("--values", a.values, "values of the sweep (comma separated)")
      ->delimiter(',')
      ->allow_extra_args(false)
      ->transform(whole_number(0, kMaxDim));
  CLI::Option* published = app.add_flag("--published", a.published_sweep,
      "the published M-tile experiment: M-tile cap 31 vs mg_max*64 at K=2048/3584, 1 and 3 cores, then every "
      "published figure against the timing model (fitted or left out)");
  app.add_option("--calibrate", a.calibrate,
                 "refit the timing model from a board report (JSON, docs/timing-model.md \"Board reports\") and "
                 "print the old and new errors; no device is opened")
      ->excludes(published);
  app.add_flag("--split", a.split, "the submit / task experiment: the same N tasks as one chained submit and as N "
                                   "submits, N = 1, 3, 12, 48, one core (--warmup, --iters rounds; docs/timing-model.md)")
      ->excludes(published);
  CLI::Option* json_opt = add_json(app, a.json);
  add_csv(app, a.csv, json_opt);
  app.add_option("--svg", a.svg, "write an SVG plot of the sweep to this file");
  app.add_flag("--vs-cpu", a.vs_cpu, "also time the CPU reference's fast path on each shape, side by side");
  app.add_flag("--zero-time", a.zero_time, "emulator only (the default device then is emu): the NPU does no work, "
                                           "leaving the host's cost");
  if (int rc = parse_command_line(app, argc, argv); rc >= 0) return rc;
  return run_main("mc_prof", [&] { return run(a); });
}
