// ork_bench --decode: the decode loop of a whole model against one layer's, side by side in
// one run (docs/library.md "Contexts and their bound"). Qwen2.5-1.5B shapes by default: 28
// layers x 7 int8 weights (q 1536x1536, k 1536x256, v 1536x256, o 1536x1536, gate
// 1536x8960, up 1536x8960, down 8960x1536; K x N), M = 1. Each round runs the 196-weight
// loop and the 7-weight loop (layer 0's weights, repeated to the same call count), the order
// alternating, and takes from the device's statistics (ork_device_get_stats) the device
// time of each loop: host time per call = (wall - device) / calls. Devices: emu (the
// emulator computing, ORK_EMU_TIMING as set: fast by default; there the device's time is
// the emulator's own arithmetic, ork_stats.emulator_ns, since fast mode does not let the
// modelled board time elapse; in timed mode it is the modelled time, device_ns),
// emu-zero-time (a PC that does no work: what is left is the host's own cost), cpu. Every weight's first result is checked
// against the oracle (not on emu-zero-time, which computes nothing). Beside wall time, each
// loop's CPU time of the calling thread per call: on a shared machine it leaves out the time
// the thread waited for a core, which wall time and its median over rounds do not.
#include "tools/ork_bench/decode.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <iterator>
#include <chrono>
#include <ctime>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "driver/emu/kernel/fake_kernel.h"
#include "driver/emu/npu/timeline.h"
#include "lib/api/device.h"
#include "lib/ref/oracle.h"
#include "lib/ref/random.h"
#include "tools/common/cli.h"
#include "tools/common/input_limits.h"
#include "tools/common/ork_handles.h"
#include "tools/common/spread.h"
#include "tools/common/stats_json.h"
#include "driver/emu/kernel/zero_work.h"

namespace ork::bench {
namespace {

struct DecodeArgs {
  int layers = 28;
  int64_t hidden = 1536, kv = 256, ffn = 8960;
  int rounds = 7;
  std::vector<std::string> devices = {"emu", "emu-zero-time", "cpu"};
  bool json = false;
  // "model" or "layer": run only that loop, twice a round (for a profiler, which then sees
  // one loop alone: docs/library.md "What grows with the model's size"); empty: both.
  std::string only;
};

struct WeightShape {
  int64_t k, n;
};

// One layer's weights: q, k, v, o, gate, up, down.
std::vector<WeightShape> layer_shapes(const DecodeArgs& a) {
  return {{a.hidden, a.hidden}, {a.hidden, a.kv}, {a.hidden, a.kv}, {a.hidden, a.hidden},
          {a.hidden, a.ffn},    {a.hidden, a.ffn}, {a.ffn, a.hidden}};
}

uint32_t weight_seed(size_t i) { return 7000 + static_cast<uint32_t>(i); }

nlohmann::json to_json(const tools::Spread& f) { return {{"min", f.min}, {"median", f.median}, {"max", f.max}}; }

ork_stats read_stats(ork_device* d) {
  ork_stats s{};
  s.struct_size = sizeof s;
  ork_device_get_stats(d, &s);
  return s;
}

// The library's phases of a call, from the statistics (ork_stats): where the time of a loop
// goes, so that what grows with the model's size shows (docs/library.md "What grows").
constexpr const char* kPhases[] = {"plan", "pack", "submit", "unpack", "other"};
constexpr size_t kPhaseCount = std::size(kPhases);
using PhaseUs = std::array<std::vector<double>, kPhaseCount>;  // us per call, one per round

struct DeviceRun {
  std::string name, error;
  std::vector<double> wall7, host7, wall_all, host_all;  // us per call, one per round
  std::vector<double> cpu7, cpu_all;  // the calling thread's CPU time, us per call, one per round
  PhaseUs phases7, phases_all;
  ork_stats stats{};
  ork_memory_info memory{};
  bool exact = true;
  size_t weights = 0;
  double resident_seconds = 0;
};

tools::DevicePtr open_device(const std::string& name, std::string& error) {
  if (name == "emu-zero-time") {
    emu::FakeKernelConfig cfg;
    cfg.executor = emu::zero_work_executor();
    auto d = api::open_emulator(driver::KmdKind::rknpu, cfg);
    if (!d) {
      error = d.error().message;
      return nullptr;
    }
    return tools::DevicePtr(d->release());
  }
  ork_device* raw = nullptr;
  if (ork_device_open(name.c_str(), &raw) != ORK_OK) {
    error = ork_last_error();
    return nullptr;
  }
  return tools::DevicePtr(raw);
}

class Model {
 public:
  Model(ork_device* d, const DecodeArgs& a) : device_(d), shapes_(layer_shapes(a)), layers_(a.layers) {}
  // Makes every weight resident (generated from its seed; the host copy is dropped).
  bool make_resident(std::string& error) {
    for (int l = 0; l < layers_; ++l)
      for (const WeightShape& s : shapes_) {
        const auto w = ref::random_int8(static_cast<size_t>(s.k * s.n), weight_seed(handles_.size()));
        ork_weights* h = nullptr;
        if (ork_weights_create(device_, ORK_DTYPE_INT8, s.k, s.n, w.data(), &h) != ORK_OK) {
          error = fmt::format("ork_weights_create (weight {}): {}", handles_.size(), ork_last_error());
          return false;
        }
        handles_.emplace_back(h);
      }
    int64_t kmax = 0, nmax = 0;
    for (const WeightShape& s : shapes_) kmax = std::max(kmax, s.k), nmax = std::max(nmax, s.n);
    a_ = ref::random_int8(static_cast<size_t>(kmax), 99);
    c_.resize(static_cast<size_t>(nmax));
    return true;
  }
  size_t size() const { return handles_.size(); }
  const WeightShape& shape(size_t i) const { return shapes_[i % shapes_.size()]; }
  bool call(size_t i) {
    return ork_matmul(device_, handles_[i].get(), a_.data(), 1, c_.data(), nullptr) == ORK_OK;
  }
  // Weight i's result against the oracle (its bytes regenerated from the seed).
  bool check(size_t i) {
    const WeightShape& s = shape(i);
    const auto w = ref::random_int8(static_cast<size_t>(s.k * s.n), weight_seed(i));
    std::vector<int32_t> want(static_cast<size_t>(s.n));
    if (!call(i)) return false;
    std::span<const int8_t> a{a_.data(), static_cast<size_t>(s.k)};
    if (!ref::matmul_int8(a, w, want, {1, s.k, s.n}).ok()) return false;
    return std::equal(want.begin(), want.end(), c_.begin());
  }

 private:
  ork_device* device_;
  std::vector<WeightShape> shapes_;
  int layers_;
  std::vector<tools::WeightsPtr> handles_;
  std::vector<int8_t> a_;
  std::vector<int32_t> c_;
};

std::string timing_of(const std::string& device) {
  if (device == "emu-zero-time") return "zero-time";
  return device.starts_with("emu") ? emu::timing_name_from_env() : "";
}

// The device's time in a loop's statistics: the emulator's arithmetic when it computes in
// fast mode (the modelled board time does not elapse there), else the reported device time.
double device_ns_of(const ork_stats& s, bool emulator_fast) {
  return static_cast<double>(emulator_fast ? s.emulator_ns : s.device_ns);
}

// A loop's statistics split into kPhases, us per call: the plan (context lookup), pack, submit
// and unpack times, and the rest of the library's wall time in the call (argument checks,
// handles, the wait, statistics).
void add_phases(const ork_stats& before, const ork_stats& after, double calls, PhaseUs& out) {
  auto us = [&](uint64_t ork_stats::*f) { return static_cast<double>(after.*f - before.*f) / calls / 1e3; };
  const double parts[] = {us(&ork_stats::plan_ns), us(&ork_stats::pack_ns), us(&ork_stats::submit_ns),
                          us(&ork_stats::unpack_ns)};
  double other = us(&ork_stats::wall_ns);
  for (size_t i = 0; i < std::size(parts); ++i) {
    out[i].push_back(parts[i]);
    other -= parts[i];
  }
  out[kPhaseCount - 1].push_back(other);
}

// The calling thread's CPU time (ns): unlike wall time it stops while the thread waits for a
// core, so on a machine shared with other work it is the loop's own cost (the zero-time
// device's kernel runs in this thread; on emu and cpu it misses the library's workers).
double thread_cpu_ns() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e9 + static_cast<double>(ts.tv_nsec);
}

struct LoopUs {
  double wall = 0, host = 0, cpu = 0;  // us per call
};

// One loop over `order`: wall, host (wall - device, from the stats) and the thread's CPU us
// per call, and its phases.
bool timed_loop(ork_device* d, Model& model, const std::vector<size_t>& order, bool emulator_fast, LoopUs* us,
                PhaseUs& phases) {
  const ork_stats before = read_stats(d);
  const double cpu0 = thread_cpu_ns();
  const auto t0 = std::chrono::steady_clock::now();
  for (size_t i : order)
    if (!model.call(i)) return false;
  const double wall_ns = static_cast<double>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count());
  const double cpu_ns = thread_cpu_ns() - cpu0;
  const ork_stats after = read_stats(d);
  const double device_ns = device_ns_of(after, emulator_fast) - device_ns_of(before, emulator_fast);
  const double calls = static_cast<double>(order.size());
  add_phases(before, after, calls, phases);
  *us = LoopUs{.wall = wall_ns / calls / 1e3, .host = (wall_ns - device_ns) / calls / 1e3, .cpu = cpu_ns / calls / 1e3};
  return true;
}

DeviceRun run_device(const std::string& name, const DecodeArgs& a) {
  DeviceRun r{.name = name};
  tools::DevicePtr dev = open_device(name, r.error);
  if (!dev) return r;
  Model model(dev.get(), a);
  const auto t0 = std::chrono::steady_clock::now();
  if (!model.make_resident(r.error)) return r;
  r.weights = model.size();
  // Warm-up: every weight once (contexts built, the emulator's weights prepared), checked.
  for (size_t i = 0; i < model.size(); ++i) {
    if (name == "emu-zero-time") {
      if (!model.call(i)) r.error = ork_last_error();
    } else if (!model.check(i)) {
      r.exact = false;
      r.error = fmt::format("weight {}: {}", i, *ork_last_error() ? ork_last_error() : "result differs from the oracle");
    }
    if (!r.error.empty()) return r;
  }
  r.resident_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::vector<size_t> all(model.size()), layer0(model.size());
  for (size_t i = 0; i < all.size(); ++i) all[i] = i, layer0[i] = i % 7;  // layer 0, same call count
  ork_device_reset_stats(dev.get());
  const bool emulator_fast = timing_of(name) == "fast";
  for (int round = 0; round < a.rounds; ++round) {
    LoopUs u7, ua;
    const bool f = emulator_fast;
    auto loop7 = [&] { return timed_loop(dev.get(), model, layer0, f, &u7, r.phases7); };
    auto loop_all = [&] { return timed_loop(dev.get(), model, all, f, &ua, r.phases_all); };
    bool ok;
    if (a.only.empty()) ok = round % 2 == 0 ? loop7() && loop_all() : loop_all() && loop7();
    else ok = a.only == "layer" ? loop7() && loop7() : loop_all() && loop_all();
    if (!ok) {
      r.error = ork_last_error();
      return r;
    }
    r.wall7.push_back(u7.wall), r.host7.push_back(u7.host), r.wall_all.push_back(ua.wall), r.host_all.push_back(ua.host);
    r.cpu7.push_back(u7.cpu), r.cpu_all.push_back(ua.cpu);
  }
  r.stats = read_stats(dev.get());
  r.memory.struct_size = sizeof r.memory;
  ork_device_memory(dev.get(), &r.memory);
  return r;
}

// The command line and the memory the weights need: -1 to go on, else the exit code.
int parse_decode_args(int argc, char** argv, DecodeArgs& a) {
  CLI::App app{"ork_bench --decode: the 196-weight decode loop (Qwen2.5-1.5B shapes, M = 1) against one layer's "
               "7 weights, interleaved in one run; wall and host us per call, min/median/max over the rounds"};
  tools::add_conventions(app, "ork_bench");
  bool decode = true;
  app.add_flag("--decode", decode, "this mode");
  tools::add_number(app, "--layers", a.layers, "layers of 7 weights", 1, 256);
  tools::add_number(app, "--hidden", a.hidden, "hidden size (q, o: hidden x hidden)", int64_t{1}, int64_t{1} << 16);
  tools::add_number(app, "--kv", a.kv, "k and v projection width", int64_t{1}, int64_t{1} << 16);
  tools::add_number(app, "--ffn", a.ffn, "gate / up width, down height", int64_t{1}, int64_t{1} << 16);
  tools::add_repeat(app, a.rounds, 1000, "rounds, each runs both loops (min / median / max reported)", "--rounds");
  app.add_option("--devices", a.devices, "emu, emu-rknpu, emu-rocket, emu-zero-time, cpu (comma separated)")
      ->delimiter(',');
  app.add_option("--only", a.only, "run only the model's or the layer's loop (twice a round; the other's figures "
                 "are then not measured): for a profiler")
      ->check(CLI::IsMember({"model", "layer"}));
  tools::add_json(app, a.json);
  if (int rc = tools::parse_command_line(app, argc, argv); rc >= 0) return rc;
  // The int8 weights of every layer, on the host and resident on each device: checked
  // against the memory there is before anything is made.
  const auto h = static_cast<uint64_t>(a.hidden), kv = static_cast<uint64_t>(a.kv), f = static_cast<uint64_t>(a.ffn);
  const uint64_t layer_bytes = 2 * h * h + 2 * h * kv + 3 * h * f;
  if (const std::string e = tools::check_memory(fmt::format("--layers {} --hidden {} --kv {} --ffn {}", a.layers,
                                                            a.hidden, a.kv, a.ffn),
                                                static_cast<uint64_t>(a.layers) * layer_bytes * (1 + a.devices.size()));
      !e.empty()) {
    fmt::print(stderr, "ork_bench: {}\n", e);
    return 2;
  }
  return -1;
}

// One device's figures as JSON: per loop wall, host and the thread's CPU us per call
// (min / median / max), the 196/7 ratios, the phases, statistics and memory.
nlohmann::json device_json(const std::string& name, const DeviceRun& r) {
  nlohmann::json d = {{"device", name}, {"timing", timing_of(name)}, {"exact", r.exact}};
  const tools::Spread w7 = tools::spread(r.wall7), h7 = tools::spread(r.host7), c7 = tools::spread(r.cpu7),
                     wa = tools::spread(r.wall_all), ha = tools::spread(r.host_all), ca = tools::spread(r.cpu_all);
  const std::string all_key = std::to_string(r.weights);
  d["weights"] = r.weights;
  d["resident_seconds"] = r.resident_seconds;
  d["loops"]["7"] = {{"wall_us", to_json(w7)}, {"host_us", to_json(h7)}, {"cpu_us", to_json(c7)}};
  d["loops"][all_key] = {{"wall_us", to_json(wa)}, {"host_us", to_json(ha)}, {"cpu_us", to_json(ca)}};
  d["ratio"] = {{"wall", wa.median / w7.median}, {"host", ha.median / h7.median}, {"cpu", ca.median / c7.median},
                {"wall_min", wa.min / w7.min}, {"host_min", ha.min / h7.min}, {"cpu_min", ca.min / c7.min}};
  nlohmann::json phases;
  for (size_t i = 0; i < kPhaseCount; ++i)
    phases[kPhases[i]] = {{"7", tools::spread(r.phases7[i]).median}, {all_key, tools::spread(r.phases_all[i]).median}};
  d["phases_us_median"] = phases;
  d["stats"] = tools::stats_json(r.stats);
  d["memory"] = tools::memory_json(r.memory);
  return d;
}

void print_device(const std::string& name, const DeviceRun& r) {
  const tools::Spread w7 = tools::spread(r.wall7), h7 = tools::spread(r.host7), c7 = tools::spread(r.cpu7),
                     wa = tools::spread(r.wall_all), ha = tools::spread(r.host_all), ca = tools::spread(r.cpu_all);
  const auto line = [](const char* what, const tools::Spread& f) { return fmt::format("{} {:.2f}/{:.2f}/{:.2f}", what, f.min, f.median, f.max); };
  fmt::print("{:<14} {:>3} weights: {}  {}  {}   7 weights: {}  {}  {}\n", name, r.weights, line("wall", wa),
             line("host", ha), line("cpu", ca), line("wall", w7), line("host", h7), line("cpu", c7));
  fmt::print("{:<14} {}/7 ratio of medians: wall {:.3f} host {:.3f} cpu {:.3f}; of minima: wall {:.3f} host {:.3f} "
             "cpu {:.3f}\n", "", r.weights, wa.median / w7.median, ha.median / h7.median, ca.median / c7.median,
             wa.min / w7.min, ha.min / h7.min, ca.min / c7.min);
  std::string split;
  for (size_t i = 0; i < kPhaseCount; ++i)
    split += fmt::format("{}{} {:.2f} / {:.2f}", i ? ", " : "", kPhases[i], tools::spread(r.phases_all[i]).median,
                         tools::spread(r.phases7[i]).median);
  fmt::print("{:<14} per phase, median us per call, {} / 7 weights: {}\n", "", r.weights, split);
  fmt::print("{:<14} context builds {} hits {} evictions {}, weight cache hits {} misses {}, resident {:.1f} MiB "
             "(contexts {:.1f} MiB), prepared {:.1f} MiB, setup {:.1f} s\n",
             "", r.stats.context_builds, r.stats.context_hits, r.stats.context_evictions, r.stats.weight_cache_hits,
             r.stats.weight_cache_misses, r.memory.bytes_resident / 1048576.0, r.memory.context_bytes / 1048576.0,
             r.memory.weight_cache_bytes / 1048576.0, r.resident_seconds);
}

// One device's figures: appended to devices (JSON), and its text lines unless json.
// Returns false when the device failed.
bool report_device(const std::string& name, const DeviceRun& r, bool json, nlohmann::json& devices) {
  if (!r.error.empty()) {
    devices.push_back({{"device", name}, {"timing", timing_of(name)}, {"exact", r.exact}, {"error", r.error}});
    if (!json) fmt::print("{:<14} failed: {}\n", name, r.error);
    return false;
  }
  devices.push_back(device_json(name, r));
  if (!json) print_device(name, r);
  return true;
}

}  // namespace

int run_decode(int argc, char** argv) {
  DecodeArgs a;
  if (int rc = parse_decode_args(argc, argv, a); rc >= 0) return rc;
  nlohmann::json j;
  j["mode"] = "decode";
  j["shape"] = {{"layers", a.layers}, {"hidden", a.hidden}, {"kv", a.kv}, {"ffn", a.ffn}, {"m", 1}, {"rounds", a.rounds}};
  bool ok = true;
  if (!a.json)
    fmt::print("decode M = 1, {} layers x 7 int8 weights (hidden {}, kv {}, ffn {}), {} rounds; us per call min/median/max\n",
               a.layers, a.hidden, a.kv, a.ffn, a.rounds);
  for (const std::string& name : a.devices) {
    const bool good = report_device(name, run_device(name, a), a.json, j["devices"]);
    ok = ok && good;
  }
  if (a.json) fmt::print("{}\n", j.dump(2));
  return ok ? 0 : 1;
}

}  // namespace ork::bench
