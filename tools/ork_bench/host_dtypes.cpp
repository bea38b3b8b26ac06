// ork_bench --host-dtypes: the library's own host cost per ork_matmul call of each dtype,
// measured side by side in one run (docs/matmul-schedule.md "Host cost per dtype"). The
// device is the emulated NPU (rknpu interface, 3 cores) with a PC that does no work
// (driver/emu/kernel/zero_work.h): it runs no arithmetic and models no time, so a call's
// wall time is what the library does on the host (plan lookup, packing A, the submit path,
// unpacking C), which is what the dtypes may differ in. Per shape, three resident weights
// (int8, fp16, int4; default A and C dtypes: int8 -> int32, fp16 -> fp32, int4 A -> int32),
// one warm-up call each (contexts built), then rounds: each round times `calls` calls of
// every dtype in turn (the order rotating), so a load burst on a shared machine hits all
// three alike; min / median / max microseconds per call over the rounds, and the ratios of
// medians. Nothing is computed, so nothing is checked here: the results' bytes are the e2e
// dtype sweeps' (tests/e2e).
//
// int4's host cost depends on its weights: they are sliced as wide as their own int16 bound
// allows (lib/matmul/int4_bound.h), and the unpacker reads one int16 output per slice. So the
// int4 weights are by default shaped like a real model's, normal values quantised as GGUF
// Q4_0 does, as the synthetic models' are (lib/exec/synthetic.h; 1344 .. 1408 wide at the 7B
// shapes), or, with --int4-weights uniform, uniform over -8..7 (about 1000 wide, near the
// worst a real model gets); each row reports the width its weights got (`int4_slice_k`).
#include "tools/ork_bench/host_dtypes.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <ctime>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "driver/emu/kernel/fake_kernel.h"
#include "driver/emu/kernel/zero_work.h"
#include "lib/api/device.h"
#include "lib/api/weights.h"
#include "lib/exec/synthetic.h"
#include "lib/matmul/dtype.h"
#include "lib/matmul/layout_host_sum.h"
#include "tools/common/cli.h"
#include "tools/common/input_limits.h"
#include "tools/common/ork_handles.h"
#include "tools/common/spread.h"

namespace ork::bench {
namespace {

struct ShapeArg {
  int64_t m, k, n;
};

struct HostArgs {
  std::vector<std::string> shapes;  // "MxKxN"; empty = the default table
  std::vector<int64_t> ms;          // --m: these M at every --kn (empty: unless --kn, the table)
  std::vector<std::string> kns;     // --kn: "KxN"; empty = kHostDefaultKn when --m is given
  int rounds = 7;
  double sample_ms = 2;  // calls per sample: enough for about this long (at least 1)
  bool json = false;
  std::string int4_weights = "q4_0";  // q4_0 (= synthetic) or uniform (lib/exec/synthetic.h)
};

// The table's M, and with --m / --kn its K x N (every M at every K x N).
constexpr std::array<std::array<int64_t, 2>, 3> kHostDefaultKn = {{{2048, 2048}, {3584, 18944}, {18944, 3584}}};
constexpr std::array<int64_t, 10> kHostDefaultM = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512};

// The default table: decode and prefill of a 2048-wide layer, M = 1..512, and a 7B model's
// FFN shapes (Qwen2.5-7B: hidden 3584, intermediate 18944) at M = 128.
std::vector<ShapeArg> default_shapes() {
  std::vector<ShapeArg> s;
  for (int64_t m : kHostDefaultM) s.push_back({m, 2048, 2048});
  s.push_back({128, 3584, 18944});
  s.push_back({128, 18944, 3584});
  return s;
}

constexpr std::array<ork_dtype, 3> kDtypes = {ORK_DTYPE_INT8, ORK_DTYPE_FP16, ORK_DTYPE_INT4};
const char* key_of(ork_dtype d) { return matmul::element_type(d)->name; }  // the dtype table

// Bytes of an M x K (or K x N) operand and of C, per dtype (int4: two per byte).
size_t operand_bytes(ork_dtype d, int64_t rows, int64_t cols) {
  return static_cast<size_t>((rows * cols * matmul::element_type(d)->bits + 7) / 8);
}

// Random bytes; fp16 as finite values in [-1, 1) (bit patterns of binary16 with exponent
// below 15), though the zero-work PC reads none of them.
std::vector<uint8_t> random_operand(ork_dtype d, int64_t rows, int64_t cols, uint32_t seed) {
  std::vector<uint8_t> v(operand_bytes(d, rows, cols));
  std::mt19937 rng(seed);
  for (auto& b : v) b = static_cast<uint8_t>(rng());
  if (d == ORK_DTYPE_FP16)
    for (size_t i = 1; i < v.size(); i += 2) v[i] = static_cast<uint8_t>(v[i] & 0xbb);  // exponent <= 0b01110
  return v;
}

// The K x N weights of dtype `d`: int4 as `int4_kind` makes them, the others random.
std::vector<uint8_t> weights_of(ork_dtype d, const ShapeArg& s, const std::string& int4_kind, uint32_t seed) {
  if (d == ORK_DTYPE_INT4 && int4_kind != "uniform") return exec::q4_0_like_weights(s.k, s.n, seed);
  return random_operand(d, s.k, s.n, seed);  // uniform int4: every byte random, two codes of -8..7
}

struct DtypeRun {
  tools::WeightsPtr w;
  std::vector<uint8_t> a, c;
  int calls = 1;
  std::vector<double> us;  // per call, one per round
  std::vector<double> pack_us, unpack_us;  // the library's own statistics of those calls, per call
  std::vector<double> cpu_us;              // the process's CPU time per call (every thread's)
  double bytes_from_device = 0;            // per call: the NPU's outputs the unpacker reads
};

Result<tools::DevicePtr> open_zero_work() {
  emu::FakeKernelConfig cfg;
  cfg.executor = emu::zero_work_executor();
  auto d = api::open_emulator(driver::KmdKind::rknpu, cfg);
  if (!d) return d.error();
  return tools::DevicePtr(d->release());
}

// CPU time of every thread of this process, us: unlike wall time, not counting the time
// slices other processes took (a long call on a loaded machine spans many).
double process_cpu_us() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e6 + static_cast<double>(ts.tv_nsec) / 1e3;
}

// Wall microseconds per call over `calls` calls; with `r` noting the calls' pack and unpack
// time from their statistics (ork_stats, one call's each) when `note`.
double us_of(ork_device* dev, DtypeRun& r, int64_t m, int calls, std::string& error, bool note = false) {
  ork_stats st{};
  st.struct_size = sizeof st;
  ork_matmul_options o{};
  o.struct_size = sizeof o;
  o.stats = &st;
  double pack = 0, unpack = 0;
  const double cpu0 = process_cpu_us();
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < calls; ++i) {
    if (ork_matmul(dev, r.w.get(), r.a.data(), m, r.c.data(), &o) != ORK_OK) {
      error = ork_last_error();
      return -1;
    }
    pack += static_cast<double>(st.pack_ns) / 1e3;
    unpack += static_cast<double>(st.unpack_ns) / 1e3;
  }
  const double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / calls;
  if (note) {
    r.cpu_us.push_back((process_cpu_us() - cpu0) / calls);
    r.pack_us.push_back(pack / calls);
    r.unpack_us.push_back(unpack / calls);
    r.bytes_from_device = static_cast<double>(st.bytes_from_device);
  }
  return us;
}

// One shape's rows: weights made (or `kept`'s, when it holds this K x N: --m's shapes share
// their K x N's, which take seconds to make at the 7B shapes), warmed up, timed round-robin.
// `error` set on failure.
std::array<DtypeRun, 3> run_shape(ork_device* dev, const ShapeArg& s, const HostArgs& args,
                                  std::array<DtypeRun, 3>& kept, std::string& error) {
  std::array<DtypeRun, 3> runs;
  const bool reuse = kept[0].w != nullptr && kept[0].w->k == s.k && kept[0].w->n == s.n;
  if (!reuse)
    for (DtypeRun& k : kept) k.w.reset();  // the last K x N's weights freed before these are made
  for (size_t i = 0; i < kDtypes.size() && error.empty(); ++i) {
    const ork_dtype d = kDtypes[i];
    if (reuse) {
      runs[i].w = std::move(kept[i].w);
    } else {
      const auto w = weights_of(d, s, args.int4_weights, 11 + static_cast<uint32_t>(i));
      ork_weights* h = nullptr;
      if (ork_weights_create(dev, d, s.k, s.n, w.data(), &h) != ORK_OK) {
        error = fmt::format("{} weights {} x {}: {}", key_of(d), s.k, s.n, ork_last_error());
        break;
      }
      runs[i].w.reset(h);
    }
    runs[i].a = random_operand(d, s.m, s.k, 21 + static_cast<uint32_t>(i));
    runs[i].c.resize(static_cast<size_t>(s.m * s.n) * 4);  // int32 / fp32 C
    const double warm = us_of(dev, runs[i], s.m, 1, error);  // builds the context
    if (warm >= 0) runs[i].calls = std::clamp(static_cast<int>(args.sample_ms * 1e3 / std::max(warm, 1.0)), 1, 1000);
  }
  for (int round = 0; round < args.rounds && error.empty(); ++round)
    for (size_t j = 0; j < kDtypes.size() && error.empty(); ++j) {
      DtypeRun& r = runs[(j + static_cast<size_t>(round)) % kDtypes.size()];
      const double us = us_of(dev, r, s.m, r.calls, error, true);
      if (us >= 0) r.us.push_back(us);
    }
  return runs;
}

// The int4 weights' K-slice width as packed (0 when the backend keeps none: not an NPU).
int64_t int4_slice_k(const DtypeRun& r) {
  const ork_weights* w = r.w.get();
  return w != nullptr && w->resident ? w->resident->slice_k() : 0;
}

nlohmann::json row_json(const ShapeArg& s, const std::array<DtypeRun, 3>& runs) {
  nlohmann::json row = {{"m", s.m}, {"k", s.k}, {"n", s.n}, {"int4_slice_k", int4_slice_k(runs[2])}};
  for (size_t i = 0; i < kDtypes.size(); ++i) {
    const tools::Spread sp = tools::spread(runs[i].us);
    const std::string key = key_of(kDtypes[i]);
    row[key + "_us"] = sp.median;
    row[key + "_us_min"] = sp.min;
    row[key + "_us_max"] = sp.max;
    row[key + "_calls_per_sample"] = runs[i].calls;
    // Where a call's host time goes (medians of the rounds' per-call means, the library's
    // statistics) and the bytes the unpacker reads (the NPU's outputs) and writes (C).
    row[key + "_cpu_us"] = tools::spread(runs[i].cpu_us).median;
    row[key + "_cpu_us_min"] = tools::spread(runs[i].cpu_us).min;
    row[key + "_pack_us"] = tools::spread(runs[i].pack_us).median;
    row[key + "_unpack_us"] = tools::spread(runs[i].unpack_us).median;
    row[key + "_unpack_bytes"] = runs[i].bytes_from_device + static_cast<double>(s.m * s.n * 4);
  }
  row["fp16_over_int8"] = row["fp16_us"].get<double>() / row["int8_us"].get<double>();
  row["int4_over_int8"] = row["int4_us"].get<double>() / row["int8_us"].get<double>();
  return row;
}

// "AxB" or "AxBxC" (`dims` numbers, each 1..65536) into out; false on anything else.
bool parse_host_dims(const std::string& t, int dims, int64_t* out) {
  char x1 = 0, x2 = 0, rest = 0;
  int64_t v[3] = {0, 0, 0};
  const int got = dims == 3 ? std::sscanf(t.c_str(), "%ld%c%ld%c%ld%c", &v[0], &x1, &v[1], &x2, &v[2], &rest)
                            : std::sscanf(t.c_str(), "%ld%c%ld%c", &v[0], &x1, &v[1], &rest);
  if (got != 2 * dims - 1 || x1 != 'x' || (dims == 3 && x2 != 'x')) return false;
  for (int i = 0; i < dims; ++i) {
    if (v[i] < 1 || v[i] > 65536) return false;
    out[i] = v[i];
  }
  return true;
}

// The shapes to run: --shapes, else --m crossed with --kn (either defaulting when the other
// is given), else the default table. False (after saying why) on a malformed shape.
bool host_shapes_of(const HostArgs& args, std::vector<ShapeArg>& shapes) {
  for (const std::string& t : args.shapes) {
    ShapeArg s{};
    if (!parse_host_dims(t, 3, &s.m)) {
      fmt::print(stderr, "ork_bench: --shapes {}: expected MxKxN, each 1..65536\n", t);
      return false;
    }
    shapes.push_back(s);
  }
  if (args.ms.empty() && args.kns.empty()) {
    if (shapes.empty()) shapes = default_shapes();
    return true;
  }
  std::vector<std::array<int64_t, 2>> kns;
  for (const std::string& t : args.kns) {
    std::array<int64_t, 2> kn{};
    if (!parse_host_dims(t, 2, kn.data())) {
      fmt::print(stderr, "ork_bench: --kn {}: expected KxN, each 1..65536\n", t);
      return false;
    }
    kns.push_back(kn);
  }
  if (kns.empty()) kns.assign(kHostDefaultKn.begin(), kHostDefaultKn.end());
  const std::vector<int64_t> ms = args.ms.empty() ? std::vector<int64_t>(kHostDefaultM.begin(), kHostDefaultM.end()) : args.ms;
  for (const auto& kn : kns)
    for (int64_t m : ms) shapes.push_back({m, kn[0], kn[1]});
  return true;
}

int parse_host_dtypes_args(HostArgs& args, int argc, char** argv, std::vector<ShapeArg>& shapes) {
  CLI::App app{"ork_bench --host-dtypes: host microseconds per ork_matmul call, int8 / fp16 / int4 side by side, on "
               "the emulated NPU with a PC that does no work (wall time = the library's host time)"};
  tools::add_conventions(app, "ork_bench");
  bool mode = false;
  app.add_flag("--host-dtypes", mode, "this mode");
  app.add_option("--shapes", args.shapes, "MxKxN shapes, comma separated (default: M = 1..512 at 2048 x 2048, "
                 "128x3584x18944, 128x18944x3584)")->delimiter(',');
  auto* m_opt = app.add_option("--m", args.ms, "rows of A: each at every --kn (comma separated or repeated; default "
                               "with --kn: 1,2,4,...,512)")->delimiter(',')->check(CLI::Range(1, 65536));
  auto* kn_opt = app.add_option("--kn", args.kns, "KxN shapes for --m, comma separated (default with --m: 2048x2048, "
                                "3584x18944, 18944x3584)")->delimiter(',');
  app.get_option("--shapes")->excludes(m_opt)->excludes(kn_opt);
  tools::add_repeat(app, args.rounds, 1000, "rounds (min / median / max reported)", "--rounds");
  tools::add_json(app, args.json);
  app.add_option("--int4-weights", args.int4_weights, "the int4 weights, whose own int16 bound sets their K-slice "
                 "width: q4_0 or synthetic (N(0,1) quantised as GGUF Q4_0 does, a real model's shape and the "
                 "synthetic models') or uniform (uniform -8..7)")
      ->check(CLI::IsMember({"q4_0", "synthetic", "uniform"}))
      ->capture_default_str();
  if (int rc = tools::parse_command_line(app, argc, argv); rc >= 0) return rc;
  if (!host_shapes_of(args, shapes)) return 2;
  uint64_t most = 0;  // one shape at a time: A, B (fp16 twice: the host copy) and C of the three dtypes
  for (const ShapeArg& s : shapes)
    most = std::max<uint64_t>(most, static_cast<uint64_t>(6 * s.m * s.k + 8 * s.k * s.n + 24 * s.m * s.n));
  if (const std::string e = tools::check_memory("--shapes", most); !e.empty()) {
    fmt::print(stderr, "ork_bench: {}\n", e);
    return 2;
  }
  return -1;
}

}  // namespace

int run_host_dtypes(int argc, char** argv) {
  HostArgs args;
  std::vector<ShapeArg> shapes;
  if (int rc = parse_host_dtypes_args(args, argc, argv, shapes); rc >= 0) return rc;
  auto dev = open_zero_work();
  if (!dev) {
    fmt::print(stderr, "ork_bench: the zero-work emulator: {}\n", dev.error().message);
    return 1;
  }
  // The tier the layout loops take (ORK_CPU_TIER hides those above it: cpu_features.h).
  const char* isa = matmul::sum_isa_name(matmul::sum_isa());
  nlohmann::json j = {{"mode", "host_dtypes"}, {"device", "emu (rknpu, 3 cores), zero-work PC"}, {"sum_isa", isa},
                      {"rounds", args.rounds}, {"int4_weights", args.int4_weights}, {"rows", nlohmann::json::array()}};
  if (!args.json)
    fmt::print("host us per ork_matmul call on the zero-work emulator, {} rounds, min / median / max; int4 weights "
               "{}; layout loops {}\n{:>22} {:>26} {:>26} {:>26} {:>7} {:>7} {:>6}\n", args.rounds, args.int4_weights, isa, "M x K x N", "int8",
               "fp16", "int4", "fp16/8", "int4/8", "int4 K");
  std::array<DtypeRun, 3> kept;  // the last shape's weights
  for (const ShapeArg& s : shapes) {
    std::string error;
    auto runs = run_shape(dev->get(), s, args, kept, error);
    if (!error.empty()) {
      fmt::print(stderr, "ork_bench: {} x {} x {}: {}\n", s.m, s.k, s.n, error);
      return 1;
    }
    const nlohmann::json row = row_json(s, runs);
    j["rows"].push_back(row);
    const int64_t slice_k = int4_slice_k(runs[2]);
    for (size_t i = 0; i < runs.size(); ++i) kept[i].w = std::move(runs[i].w);
    if (args.json) continue;
    const auto cell = [&](const char* k) {
      const std::string b = k;
      return fmt::format("{:.1f} / {:.1f} / {:.1f}", row[b + "_us_min"].get<double>(), row[b + "_us"].get<double>(),
                         row[b + "_us_max"].get<double>());
    };
    fmt::print("{:>22} {:>26} {:>26} {:>26} {:>7.2f} {:>7.2f} {:>6}\n", fmt::format("{} x {} x {}", s.m, s.k, s.n),
               cell("int8"), cell("fp16"), cell("int4"), row["fp16_over_int8"].get<double>(),
               row["int4_over_int8"].get<double>(), slice_k);
  }
  if (args.json) fmt::print("{}\n", j.dump(2));
  return 0;
}

}  // namespace ork::bench
