// ork_bench --async: asynchronous jobs and batch replay against blocking calls, side by side
// in one run, on the emulated NPU in timed mode (its device time is the timing model's
// board time, docs/timing-model.md), through both kernel interfaces (docs/library.md
// "Asynchronous jobs and batches"). Each round runs, alternating their order:
//   sync   N blocking ork_matmul_t calls cycling over a layer's W weights;
//   async  the same N calls with ork_matmul_submit, `depth` jobs in flight;
//   batch  the W weights as one recorded batch, submitted N / W times (replay);
// and takes from the device's statistics the device time of each loop. host per call =
// (sync wall - device) / N. The claim checked: async per call ~ max(host, device), where
// sync per call = host + device. Every loop's results are compared with the oracle.
// A last pair of rows runs the same loops on the zero-work PC (driver/emu/kernel/zero_work.h:
// every job done at once, no device time), where wall is the host's own work: the host cost
// per matmul of a batch replay against a single call, side by side (an asynchronous job's
// device time is unknown to the statistics, so the timed rows cannot give the replay's).
#include "tools/ork_bench/async.h"

#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "driver/common/npu_irq.h"
#include "driver/emu/kernel/fake_kernel.h"
#include "driver/emu/kernel/zero_work.h"
#include "lib/api/device.h"
#include "lib/ref/oracle.h"
#include "lib/ref/random.h"
#include "tools/common/cli.h"
#include "tools/common/input_limits.h"
#include "tools/common/ork_handles.h"
#include "tools/common/spread.h"

namespace ork::bench {
namespace {

struct AsyncArgs {
  int64_t m = 1, hidden = 1536, kv = 256, ffn = 8960;
  int calls = 70, depth = 2, rounds = 5;
  bool json = false;
};

using Clock = std::chrono::steady_clock;
double us_since(Clock::time_point t0) { return std::chrono::duration<double, std::micro>(Clock::now() - t0).count(); }

using Figures = tools::Spread;
Figures summarize(std::vector<double> v) { return tools::spread(std::move(v)); }
nlohmann::json async_figures_json(const Figures& f) { return {{"min", f.min}, {"median", f.median}, {"max", f.max}}; }

ork_stats device_stats(ork_device* d) {
  ork_stats s{};
  s.struct_size = sizeof s;
  ork_device_get_stats(d, &s);
  return s;
}

// Where a run's jobs go: the emulator's computing PC (timed), its timing-only PC (timed, no
// byte moved), or the zero-work PC (no device time at all: wall = host).
enum class Pc { computing, timing_only, zero_work };

struct Weight {
  int64_t k, n;
  tools::WeightsPtr handle;
  std::vector<int8_t> a;
  std::vector<int32_t> want, c;
};

// A layer's seven weights (q, k, v, o, gate, up, down; K x N) with one A and its reference C.
std::vector<Weight> make_layer(ork_device* d, const AsyncArgs& a, std::string& error) {
  const int64_t shapes[7][2] = {{a.hidden, a.hidden}, {a.hidden, a.kv},  {a.hidden, a.kv}, {a.hidden, a.hidden},
                                {a.hidden, a.ffn},    {a.hidden, a.ffn}, {a.ffn, a.hidden}};
  std::vector<Weight> out;
  for (int i = 0; i < 7; ++i) {
    Weight w{shapes[i][0], shapes[i][1], nullptr, {}, {}, {}};
    const auto values = ref::random_int8(static_cast<size_t>(w.k * w.n), 9000 + static_cast<uint64_t>(i));
    ork_weights* h = nullptr;
    if (ork_weights_create(d, ORK_DTYPE_INT8, w.k, w.n, values.data(), &h) != ORK_OK) {
      error = ork_last_error();
      return {};
    }
    w.handle.reset(h);
    w.a = ref::random_int8(static_cast<size_t>(a.m * w.k), 9100 + static_cast<uint64_t>(i));
    w.want.resize(static_cast<size_t>(a.m * w.n));
    w.c.resize(w.want.size());
    if (!ref::matmul_int8(w.a, values, w.want, {a.m, w.k, w.n}).ok()) {
      error = "the oracle refused the shape";
      return {};
    }
    out.push_back(std::move(w));
  }
  return out;
}

ork_tensor host(void* p) {
  ork_tensor t{};
  t.host = p;
  return t;
}

struct Loop {
  double wall_us = 0, device_us = 0;
  bool device_known = true;  // false: some job's device time was not reported (async, batch)
};

struct Runner {
  ork_device* dev;
  std::vector<Weight>& ws;
  const AsyncArgs& a;
  bool verify = true;  // false on the timing-only PC, which computes nothing
  bool exact = true;
  std::string error;

  void check(const Weight& w) {
    if (verify && w.c != w.want) exact = false;
  }
  template <class F>
  Loop timed(F body) {
    const ork_stats s0 = device_stats(dev);
    const auto t0 = Clock::now();
    body();
    Loop l{us_since(t0), 0};
    const ork_stats s1 = device_stats(dev);
    l.device_us = static_cast<double>(s1.device_ns - s0.device_ns) / 1e3;
    l.device_known = s1.device_unknown_calls == s0.device_unknown_calls;
    return l;
  }
  Loop sync() {
    return timed([&] {
      for (int i = 0; i < a.calls; ++i) {
        Weight& w = ws[static_cast<size_t>(i) % ws.size()];
        ork_tensor ta = host(w.a.data()), tc = host(w.c.data());
        if (ork_matmul_t(dev, w.handle.get(), &ta, a.m, &tc, nullptr) != ORK_OK) error = ork_last_error();
        check(w);
      }
    });
  }
  Loop async() {
    return timed([&] {
      std::vector<ork_job*> jobs(static_cast<size_t>(a.calls), nullptr);
      auto finish = [&](int i) {
        if (ork_job_wait(jobs[static_cast<size_t>(i)], -1) != ORK_OK) error = ork_last_error();
        ork_job_release(jobs[static_cast<size_t>(i)]);
        check(ws[static_cast<size_t>(i) % ws.size()]);
      };
      for (int i = 0; i < a.calls; ++i) {
        Weight& w = ws[static_cast<size_t>(i) % ws.size()];
        ork_tensor ta = host(w.a.data()), tc = host(w.c.data());
        if (i >= a.depth) finish(i - a.depth);
        if (ork_matmul_submit(dev, w.handle.get(), &ta, a.m, &tc, nullptr, &jobs[static_cast<size_t>(i)]) != ORK_OK)
          error = ork_last_error();
      }
      for (int i = std::max(0, a.calls - a.depth); i < a.calls; ++i) finish(i);
    });
  }
  Loop batch(ork_batch* b) {
    return timed([&] {
      for (int r = 0; r < a.calls / static_cast<int>(ws.size()); ++r) {
        ork_job* j = nullptr;
        if (ork_batch_submit(b, &j) != ORK_OK || ork_job_wait(j, -1) != ORK_OK) error = ork_last_error();
        ork_job_release(j);
        for (const Weight& w : ws) check(w);
      }
    });
  }
};

struct DeviceResult {
  std::string name, error;
  bool computed = true;  // false: the timing-only or zero-work PC, results not computed, not checked
  bool exact = true;
  std::vector<double> sync_us, async_us, batch_us, batch_host_us, device_us, host_us;
};

const char* pc_suffix(Pc pc) {
  switch (pc) {
    case Pc::computing: return "timed";
    case Pc::timing_only: return "timing";
    case Pc::zero_work: return "zero-work";
  }
  return "?";
}

// `pc`: the timing-only PC (driver/emu/kernel/zero_work.h) makes jobs take the modelled
// board time while the emulator's arithmetic leaves the host's CPU, so host and device
// separate as on a board; the zero-work PC takes no device time, so every loop's wall is
// its host cost. Neither computes results.
DeviceResult run_async_device(driver::KmdKind kind, const AsyncArgs& a, Pc pc) {
  DeviceResult r;
  r.name = fmt::format("{} ({})", kind == driver::KmdKind::rknpu ? "emu-rknpu" : "emu-rocket", pc_suffix(pc));
  r.computed = pc == Pc::computing;
  emu::FakeKernelConfig cfg;
  cfg.timing = pc == Pc::zero_work ? emu::TimingMode::fast : emu::TimingMode::timed;
  if (pc == Pc::timing_only) cfg.executor = emu::timing_only_executor();
  if (pc == Pc::zero_work) cfg.executor = emu::zero_work_executor(hw::kIntTaskDone);
  auto opened = api::open_emulator(kind, cfg);
  if (!opened) {
    r.error = opened.error().message;
    return r;
  }
  tools::DevicePtr dev(opened->release());
  auto ws = make_layer(dev.get(), a, r.error);
  if (ws.empty()) return r;
  ork_batch* b = nullptr;
  if (ork_batch_create(dev.get(), &b) != ORK_OK) {
    r.error = ork_last_error();
    return r;
  }
  for (Weight& w : ws) {
    ork_tensor ta = host(w.a.data()), tc = host(w.c.data());
    if (ork_batch_add_matmul(b, w.handle.get(), &ta, a.m, &tc, nullptr) != ORK_OK) r.error = ork_last_error();
  }
  Runner run{dev.get(), ws, a, r.computed};
  run.sync();  // warm: contexts built, weights prepared, the batch recorded
  run.async();
  run.batch(b);
  const int per_batch = a.calls / 7 * 7;
  for (int round = 0; round < a.rounds && run.error.empty(); ++round) {
    Loop s, as, bt;
    if (round % 2 == 0) {
      s = run.sync(), as = run.async(), bt = run.batch(b);
    } else {
      bt = run.batch(b), as = run.async(), s = run.sync();
    }
    const double n = a.calls;
    r.sync_us.push_back(s.wall_us / n);
    r.async_us.push_back(as.wall_us / n);
    r.batch_us.push_back(bt.wall_us / per_batch);
    r.device_us.push_back(s.device_us / n);
    r.host_us.push_back((s.wall_us - s.device_us) / n);
    // An asynchronous job reports no device time (docs/kernel-interfaces.md), so a replay's
    // host share is known only on the zero-work PC (no device time by construction);
    // elsewhere it is left out rather than taken as the replay's wall.
    if (bt.device_known || pc == Pc::zero_work) r.batch_host_us.push_back((bt.wall_us - bt.device_us) / per_batch);
  }
  ork_batch_destroy(b);
  r.exact = run.exact;
  if (r.error.empty()) r.error = run.error;
  return r;
}

// The command line and the memory the layer needs: -1 to go on, else the exit code.
int parse_async_args(int argc, char** argv, AsyncArgs& a) {
  bool mode = false;
  CLI::App app{"ork_bench --async: asynchronous jobs and batch replay against blocking calls, one layer's 7 "
               "int8 weights (Qwen2.5-1.5B shapes), emulated NPU in timed mode, rknpu and rocket"};
  tools::add_conventions(app, "ork_bench");
  app.add_flag("--async", mode, "this mode");
  tools::add_number(app, "--m", a.m, "rows of A (M)", int64_t{1}, int64_t{4096});
  tools::add_number(app, "--hidden", a.hidden, "hidden size", int64_t{1}, int64_t{1} << 16);
  tools::add_number(app, "--kv", a.kv, "k / v width", int64_t{1}, int64_t{1} << 16);
  tools::add_number(app, "--ffn", a.ffn, "gate / up width, down height", int64_t{1}, int64_t{1} << 16);
  tools::add_number(app, "--calls", a.calls, "calls per loop (the batch runs calls / 7 replays)", 7, 100000);
  tools::add_number(app, "--depth", a.depth, "async jobs in flight", 1, 7);
  tools::add_repeat(app, a.rounds, 1000, "rounds, each runs the three loops (min / median / max reported)", "--rounds");
  tools::add_json(app, a.json);
  if (int rc = tools::parse_command_line(app, argc, argv); rc >= 0) return rc;
  const auto h = static_cast<uint64_t>(a.hidden), kv = static_cast<uint64_t>(a.kv), f = static_cast<uint64_t>(a.ffn);
  if (const std::string e = tools::check_memory(fmt::format("--hidden {} --kv {} --ffn {}", a.hidden, a.kv, a.ffn),
                                                4 * (2 * h * h + 2 * h * kv + 3 * h * f));
      !e.empty()) {
    fmt::print(stderr, "ork_bench: {}\n", e);
    return 2;
  }
  return -1;
}

// One device's figures: appended to devices (JSON), and its text row unless json. Returns
// false when the device failed or its results differ from the reference.
bool report_async_device(const DeviceResult& r, bool json, nlohmann::json& devices) {
  nlohmann::json d = {{"device", r.name}, {"computed", r.computed}};
  if (r.computed) d["exact"] = r.exact;
  if (!r.error.empty() || r.sync_us.empty()) {
    d["error"] = r.error;
    if (!json) fmt::print("{:<20} failed: {}\n", r.name, r.error);
    devices.push_back(d);
    return false;
  }
  const Figures s = summarize(r.sync_us), as = summarize(r.async_us), bt = summarize(r.batch_us),
                h = summarize(r.host_us), dv = summarize(r.device_us);
  const double ideal = std::max(h.median, dv.median);
  d["sync_us"] = async_figures_json(s);
  d["async_us"] = async_figures_json(as);
  d["batch_us"] = async_figures_json(bt);
  d["host_us"] = async_figures_json(h);
  d["device_us"] = async_figures_json(dv);
  d["async_over_max"] = as.median / ideal;
  d["async_over_sum"] = as.median / (h.median + dv.median);
  d["sync_over_async"] = s.median / as.median;
  if (!r.batch_host_us.empty()) {  // a replay's host cost per matmul, where it is known
    const Figures bh = summarize(r.batch_host_us);
    d["batch_host_us"] = async_figures_json(bh);
    d["batch_host_over_single_host"] = bh.median / h.median;
  }
  devices.push_back(d);
  if (!json)
    fmt::print("{:<20} {:>6.0f}/{:>6.0f}/{:>6.0f}   {:>6.0f}/{:>6.0f}/{:>6.0f}   {:>6.0f}/{:>6.0f}/{:>6.0f}   {:>8.0f} "
               "{:>10.0f} {:>12.2f} {:>12.2f}{}\n",
               r.name, s.min, s.median, s.max, as.min, as.median, as.max, bt.min, bt.median, bt.max, h.median,
               dv.median, as.median / ideal, s.median / as.median, r.exact ? "" : "  RESULTS DIFFER");
  return r.exact;
}

}  // namespace

int run_async(int argc, char** argv) {
  AsyncArgs a;
  if (int rc = parse_async_args(argc, argv, a); rc >= 0) return rc;
  nlohmann::json j = {{"mode", "async"}, {"m", a.m}, {"calls", a.calls}, {"depth", a.depth}, {"rounds", a.rounds}};
  bool ok = true;
  if (!a.json)
    fmt::print("{:<20} {:>22} {:>22} {:>22} {:>10} {:>10} {:>12} {:>12}\n", "device (us per call)", "sync min/med/max",
               "async min/med/max", "batch min/med/max", "host", "device", "async/max", "sync/async");
  for (Pc pc : {Pc::computing, Pc::timing_only, Pc::zero_work})
    for (driver::KmdKind kind : {driver::KmdKind::rknpu, driver::KmdKind::rocket}) {
      const bool good = report_async_device(run_async_device(kind, a, pc), a.json, j["devices"]);
      ok = ok && good;
    }
  if (a.json) {
    fmt::print("{}\n", j.dump(2));
    return ok ? 0 : 1;
  }
  fmt::print("host = sync wall - device time (statistics); async/max = async per call / max(host, device): 1.0 is "
             "full overlap\nhost per matmul, batch replay / single call (zero-work PC, wall = host):");
  for (const auto& d : j["devices"])
    if (d.contains("batch_host_over_single_host"))
      fmt::print(" {} {:.2f}", d["device"].get<std::string>(), d["batch_host_over_single_host"].get<double>());
  fmt::print("\n");
  return ok ? 0 : 1;
}

}  // namespace ork::bench
