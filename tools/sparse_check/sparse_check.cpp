// sparse_check M K N [cores]: fast sampled correctness of libork's matmul at shapes
// whose full reference takes minutes (the published M-tile experiment's tool, ours). Random seeded A (M x K) and W
// (K x N) go through the C API on the device; cells chosen from the plan the library runs
// (every M-tile, N-task, core and K-slice edge, plus random cells; --full: all) are compared
// with full-K int64 dot products on the host. --dtype int4 (W4A4) / w4a8 draw int4 values
// (-8..7; w4a8 A full int8) and check the same way; --dtype fp16 checks bit for bit against
// the defined fp16 order (verify_fp16.h), fp32 C or, with --out-dtype fp16, fp16 C.
// Exit 0 all match, 1 a mismatch (or the device / job failed), 2 bad usage, 3 no device.
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "tools/common/cli.h"
#include "tools/common/input_limits.h"
#include "tools/common/ork_handles.h"
#include "tools/common/progress.h"
#include "tools/sparse_check/cells.h"
#include "tools/sparse_check/verify.h"
#include "tools/sparse_check/verify_fp16.h"
#include "tools/sparse_check/verify_quant.h"
#include "driver/common/fp16.h"
#include "driver/common/int4.h"

namespace ork::tools {
namespace {

constexpr int64_t kBigShapeMacs = int64_t{1} << 30;  // progress above ~1 G multiply-adds
constexpr int64_t kMaxOperandBytes = int64_t{1} << 33;  // 8 GiB per buffer: a typo, not a job

struct Args {
  int64_t m = 0, k = 0, n = 0;
  int cores = 0;
  std::string device;
  bool full = false;
  uint64_t seed = 1;
  int mc_cap = 0;
  int64_t random_cells = 1024;
  bool json = false;
  std::string dtype = "int8", out_dtype = "fp32";
  std::string quant;     // w8a8, w4a8, w4a4: fp32 in/out through ork_qmatmul
  int64_t group = 0;     // 0 = per-channel, else 32, 64, 128
  bool per_row = false;  // one activation scale per row
};


// The operands of one run: integer values (int8, or int4 widened) or fp16 bit patterns, the
// bytes handed to the C API, and C's bytes.
struct Data {
  std::vector<int8_t> a, w;
  std::vector<uint16_t> ah, wh;
  std::vector<uint8_t> a_api, w_api, c;
};

std::vector<uint8_t> pack_nibbles(const std::vector<int8_t>& v) {
  std::vector<uint8_t> out((v.size() + 1) / 2, 0);
  for (size_t i = 0; i < v.size(); ++i) int4::put(out.data(), static_cast<int64_t>(i), v[i]);
  return out;
}

void fill_int4(std::vector<int8_t>& v, SplitMix64& rng) {
  for (auto& x : v) x = static_cast<int8_t>(rng.below(16) - 8);
}

// Halves of random sign, exponents 2^-3..2^1 and mantissas: finite, sums that round.
void fill_fp16(std::vector<uint16_t>& v, SplitMix64& rng) {
  for (auto& x : v) x = static_cast<uint16_t>((rng.next() & 0x83ff) | ((12 + rng.below(5)) << 10));
}

void make_data(const Args& a, Data& d) {
  SplitMix64 rng(a.seed);
  const size_t mk = static_cast<size_t>(a.m * a.k), kn = static_cast<size_t>(a.k * a.n);
  if (a.dtype == "fp16") {
    d.ah.resize(mk);
    d.wh.resize(kn);
    fill_fp16(d.ah, rng);
    fill_fp16(d.wh, rng);
    d.a_api.assign(reinterpret_cast<const uint8_t*>(d.ah.data()), reinterpret_cast<const uint8_t*>(d.ah.data() + mk));
    d.w_api.assign(reinterpret_cast<const uint8_t*>(d.wh.data()), reinterpret_cast<const uint8_t*>(d.wh.data() + kn));
    d.c.resize(static_cast<size_t>(a.m * a.n) * (a.out_dtype == "fp16" ? 2 : 4));
    return;
  }
  d.a.resize(mk);
  d.w.resize(kn);
  if (a.dtype == "int4") fill_int4(d.a, rng); else fill_random_int8(d.a, rng);
  if (a.dtype == "int8") fill_random_int8(d.w, rng); else fill_int4(d.w, rng);
  d.a_api = a.dtype == "int4" ? pack_nibbles(d.a) : std::vector<uint8_t>(d.a.begin(), d.a.end());
  d.w_api = a.dtype == "int8" ? std::vector<uint8_t>(d.w.begin(), d.w.end()) : pack_nibbles(d.w);
  d.c.resize(static_cast<size_t>(a.m * a.n) * 4);
}

struct Timing {
  double matmul_ms = 0, check_ms = 0;
};

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// Every cell with --full (the int8 full check walks C itself), else the plan's edges plus
// random cells.
std::vector<Cell> cells_to_check(const Args& a, const matmul::Plan& plan) {
  if (!a.full) return sample_cells(plan, a.random_cells, 4, a.seed);
  std::vector<Cell> cells;
  for (int64_t m = 0; m < a.m; ++m)
    for (int64_t n = 0; n < a.n; ++n) cells.push_back({m, n});
  return cells;
}

int fail(Exit exit, const std::string& message) {
  fmt::print(stderr, "sparse_check: {}\n", message);
  return code(exit);
}

// A and W from the seed, then C through the C API. Returns an exit code, or -1 to go on.
// The quantised modes: fp32 A and W in [-1, 1), C from ork_qweights_create + ork_qmatmul.
struct QuantData {
  std::vector<float> a, w, c;
};

int run_quant_device(const Args& a, QuantData& d, ork_device* device, Timing& timing) {
  SplitMix64 rng(a.seed);
  auto uniform = [&] { return static_cast<float>(rng.below(1u << 20)) / static_cast<float>(1u << 19) - 1.0f; };
  d.a.resize(static_cast<size_t>(a.m * a.k));
  d.w.resize(static_cast<size_t>(a.k * a.n));
  d.c.assign(static_cast<size_t>(a.m * a.n), 0.0f);
  for (auto& x : d.a) x = uniform();
  for (auto& x : d.w) x = uniform();
  const ork_quant_options qo{sizeof(ork_quant_options), a.quant == "w8a8" ? 8 : 4, static_cast<int32_t>(a.group)};
  const ork_qmatmul_options mo{sizeof(ork_qmatmul_options), a.quant == "w4a4" ? 4 : 8, a.per_row ? 1 : 0, a.cores};
  ork_qweights* qw = nullptr;
  const auto t0 = std::chrono::steady_clock::now();
  ork_status st = ork_qweights_create(device, d.w.data(), a.k, a.n, &qo, &qw);
  if (st == ORK_OK) st = ork_qmatmul(device, qw, d.a.data(), a.m, d.c.data(), &mo);
  timing.matmul_ms = ms_since(t0);
  ork_qweights_destroy(qw);
  if (st != ORK_OK)
    return fail(st == ORK_E_INVALID_ARGUMENT ? Exit::bad_usage : Exit::check_failed, "qmatmul: " + describe_failure(st));
  return -1;
}

int run_device(const Args& a, Data& d, ork_device* device, Timing& timing) {
  make_data(a, d);
  const ork_dtype wd = a.dtype == "fp16" ? ORK_DTYPE_FP16 : a.dtype == "int8" ? ORK_DTYPE_INT8 : ORK_DTYPE_INT4;
  ork_weights* raw = nullptr;
  ork_status st = ork_weights_create(device, wd, a.k, a.n, d.w_api.data(), &raw);
  WeightsPtr weights(raw);
  if (st != ORK_OK)
    return fail(st == ORK_E_INVALID_ARGUMENT ? Exit::bad_usage : Exit::check_failed,
                "weights: " + describe_failure(st));
  ork_matmul_options options{};
  options.struct_size = sizeof(options);
  options.cores = a.cores;
  options.mc_cap = a.mc_cap;
  options.a_dtype = a.dtype == "w4a8" ? ORK_DTYPE_INT8 : 0;
  options.c_dtype = a.dtype == "fp16" && a.out_dtype == "fp16" ? ORK_DTYPE_FP16 : 0;
  const auto t0 = std::chrono::steady_clock::now();
  st = ork_matmul(device, weights.get(), d.a_api.data(), a.m, d.c.data(), &options);
  timing.matmul_ms = ms_since(t0);
  if (st != ORK_OK)
    return fail(st == ORK_E_INVALID_ARGUMENT ? Exit::bad_usage : Exit::check_failed,
                "matmul: " + describe_failure(st));
  return -1;
}

nlohmann::json to_json(const Args& a, const ork_device_info& info, const matmul::Plan& plan,
                       const Outcome& out, const Timing& timing, const CellLocator& where) {
  nlohmann::json first = nlohmann::json::array();
  for (const Mismatch& mm : out.first) {
    const CellHome h = where.locate(mm.cell);
    first.push_back({{"m", mm.cell.m}, {"n", mm.cell.n}, {"expected", mm.expected},
                     {"got", mm.got}, {"m_tile", h.m_tile}, {"n_task", h.n_task},
                     {"core", h.core}});
  }
  return {{"m", a.m}, {"k", a.k}, {"n", a.n}, {"dtype", a.dtype}, {"device", device_label(a.device)},
          {"backend", info.backend}, {"kernel_interface", info.kernel_interface},
          {"emulated", info.emulated != 0}, {"cores", plan.cores_used}, {"seed", a.seed},
          {"full", a.full}, {"mc", plan.mc}, {"slices", plan.slices},
          {"tasks", plan.tasks.size()}, {"cells_checked", out.checked},
          {"mismatches", out.mismatches}, {"first_mismatches", first},
          {"matmul_ms", timing.matmul_ms}, {"check_ms", timing.check_ms},
          {"ok", out.mismatches == 0}};
}

void print_text(const Args& a, const ork_device_info& info, const matmul::Plan& plan,
                const Outcome& out, const Timing& timing, const CellLocator& where) {
  for (const Mismatch& mm : out.first) fmt::print("{}\n", format_mismatch(mm, where));
  fmt::print("sparse_check: M={} K={} N={} {} on {} ({}{}), {} core(s), seed {}: plan mc={} "
             "slices={} tasks={}; {} {} cells checked, {} mismatch(es); matmul {:.3f} ms, "
             "check {:.3f} ms: {}\n",
             a.m, a.k, a.n, a.dtype, device_label(a.device), info.backend,
             info.kernel_interface[0] ? fmt::format(" via {}", info.kernel_interface) : "",
             plan.cores_used, a.seed, plan.mc, plan.slices, plan.tasks.size(),
             a.full ? "all" : "sampled", out.checked, out.mismatches, timing.matmul_ms,
             timing.check_ms, out.mismatches == 0 ? "OK" : "FAILED");
}

// The library's own dimension limit (lib/api/api.cpp kMaxDim).
constexpr int64_t kMaxDim = int64_t{1} << 24;
constexpr int64_t kMaxRandomCells = int64_t{1} << 40;  // past M x N: every cell (cells.h)

void add_options(CLI::App& app, Args& args) {
  add_conventions(app, "sparse_check");
  add_number(app, "M", args.m, "rows of A and C", int64_t{1}, kMaxDim)->required();
  add_number(app, "K", args.k, "columns of A, rows of W", int64_t{1}, kMaxDim)->required();
  add_number(app, "N", args.n, "columns of W and C", int64_t{1}, kMaxDim)->required();
  add_number(app, "cores", args.cores,
             fmt::format("NPU cores 1..{} (0: all the device has); also --cores", matmul::kMaxCores), 0, matmul::kMaxCores);
  add_cores(app, args.cores);
  add_device(app, args.device);
  app.add_flag("--full", args.full, "check every cell, not a sample");
  add_seed(app, args.seed, "seed of the random A and W");
  add_number(app, "--mc-cap", args.mc_cap, "cap on rows per M-tile; 0 = the bank limit", 0, 1 << 24);
  add_number(app, "--random-cells", args.random_cells,
             "random cells checked on top of the edges (at least M x N: every cell)", int64_t{0}, kMaxRandomCells);
  add_json(app, args.json);
  app.add_option("--dtype", args.dtype, "int8 (default), fp16, int4 (W4A4), w4a8")
      ->check(CLI::IsMember({"int8", "fp16", "int4", "w4a8"}));
  app.add_option("--out-dtype", args.out_dtype, "fp16 only: C as fp32 (default) or fp16")
      ->check(CLI::IsMember({"fp32", "fp16"}));
  app.add_option("--quant", args.quant, "quantised fp32 matmul through ork_qmatmul: w8a8, w4a8, w4a4")
      ->check(CLI::IsMember({"w8a8", "w4a8", "w4a4"}));
  app.add_option("--group", args.group, "--quant: weight scale group along K (0 = per-channel, 32, 64, 128)")
      ->check(CLI::IsMember({0, 32, 64, 128}));
  app.add_flag("--per-row", args.per_row, "--quant: one activation scale per row of A");
}

// Host memory of a run, roughly: A and W in their element size and as the bytes handed to
// the C API, C, the cells to check (16 bytes each), and as much again for the device's
// copies (the emulator's BOs). Checked against MemAvailable before anything is allocated.
uint64_t bytes_needed(const Args& a) {
  const auto m = static_cast<uint64_t>(a.m), k = static_cast<uint64_t>(a.k), n = static_cast<uint64_t>(a.n);
  const uint64_t elt = a.quant.empty() ? (a.dtype == "fp16" ? 2 : 1) : 4;
  const uint64_t cells = a.full ? m * n : std::min<uint64_t>(m * n, static_cast<uint64_t>(a.random_cells) + 64 * (m + n));
  return 2 * (2 * elt * (m * k + k * n) + 4 * m * n) + 16 * cells;
}

// The flags that only go together, and the operands' sizes against memory: "" or the
// refusal (bad usage).
std::string check_args(const Args& a) {
  if (!a.quant.empty() && a.dtype != "int8")
    return fmt::format("--quant {} takes fp32 operands: drop --dtype {}", a.quant, a.dtype);
  if (a.quant.empty() && (a.group != 0 || a.per_row)) return "--group and --per-row go with --quant";
  if (a.out_dtype == "fp16" && a.dtype != "fp16")
    return fmt::format("--out-dtype fp16 needs --dtype fp16 (--dtype {} gives int32)", a.dtype);
  // Divisions, not products: M, K, N up to INT64_MAX must not overflow the check itself.
  if (a.m > kMaxOperandBytes / a.k || a.n > kMaxOperandBytes / a.k || a.m > kMaxOperandBytes / 4 / a.n)
    return fmt::format("M={} K={} N={}: an operand would exceed {} GiB", a.m, a.k, a.n, kMaxOperandBytes >> 30);
  return check_memory(fmt::format("M K N = {} {} {}", a.m, a.k, a.n), bytes_needed(a));
}

// The plan the library runs: the same shape and options, cores as the library resolves 0.
matmul::PlanOptions plan_options(const Args& a, const ork_device_info& info) {
  matmul::PlanOptions popt;
  popt.cores = a.cores ? a.cores : std::clamp(info.cores, 1, matmul::kMaxCores);
  popt.mc_cap = a.mc_cap;
  popt.dtype = a.dtype == "fp16" ? matmul::DType::fp16 : a.dtype == "int4" ? matmul::DType::int4 : matmul::DType::int8;
  popt.fp16_out = a.dtype == "fp16" && a.out_dtype == "fp16";
  return popt;
}

// The sampled (or --full) cells of C against the host reference, per mode.
void verify(Args& a, const matmul::Plan& plan, bool fp16_out, const Data& d, const QuantData& qd, Outcome& out) {
  if (!a.quant.empty()) {
    const std::vector<Cell> cells = cells_to_check(a, plan);
    const QuantProblem qp{qd.a, qd.w, a.m, a.k, a.n,
                          {a.quant == "w8a8" ? quant::Bits::int8 : quant::Bits::int4, a.group},
                          {a.quant == "w4a4" ? quant::Bits::int4 : quant::Bits::int8, a.per_row}};
    verify_quant_cells(qp, cells, qd.c, out);
    a.dtype = a.group ? fmt::format("{}/g{}", a.quant, a.group) : a.quant + "/per-channel";
  } else if (a.dtype == "fp16") {
    const std::vector<Cell> cells = cells_to_check(a, plan);
    const Fp16Problem fp{d.ah, d.wh, a.m, a.k, a.n, plan.slice_k, fp16_out};
    verify_fp16_cells(fp, cells, d.c, out);
  } else {
    const Problem problem{d.a, d.w, a.m, a.k, a.n};
    const std::span<const int32_t> C{reinterpret_cast<const int32_t*>(d.c.data()), d.c.size() / 4};
    if (a.full) {
      verify_full(problem, C, a.m * a.k * a.n >= kBigShapeMacs, out);
    } else {
      const std::vector<Cell> cells = cells_to_check(a, plan);
      const auto count = static_cast<int64_t>(cells.size());
      verify_cells(problem, cells, C, count * a.k >= kBigShapeMacs, out);
    }
  }
}

int run(int argc, char** argv) {
  CLI::App app{"sparse_check: sampled correctness of libork's matmul C = A x W (int8, fp16, int4, w4a8).\n"
               "Exit 0 all checked cells match, 1 a mismatch or a device failure, 2 bad usage, 3 device "
               "unavailable."};
  Args a;
  add_options(app, a);
  if (int rc = parse_command_line(app, argc, argv); rc >= 0) return rc;
  if (const std::string e = check_args(a); !e.empty()) return fail(Exit::bad_usage, e);
  ork_device* raw = nullptr;
  ork_status st = ork_device_open(a.device.empty() ? nullptr : a.device.c_str(), &raw);
  DevicePtr device(raw);
  ork_device_info info{};
  if (st == ORK_OK) st = ork_device_get_info(device.get(), &info);
  if (st != ORK_OK)
    return fail(st == ORK_E_INVALID_ARGUMENT ? Exit::bad_usage
                : st == ORK_E_NO_DEVICE          ? Exit::device_unavailable
                                                 : Exit::check_failed,
                fmt::format("device {}: {}", device_label(a.device), describe_failure(st)));
  const matmul::PlanOptions popt = plan_options(a, info);
  Result<matmul::Plan> plan = matmul::make_plan({a.m, a.k, a.n}, popt);
  if (!plan) return fail(Exit::bad_usage, "plan: " + plan.error().message);

  // One C API call has no progress to report: on a terminal, say what runs meanwhile.
  const bool big = a.m * a.k * a.n >= kBigShapeMacs && stderr_is_terminal();
  if (big) fmt::print(stderr, "sparse_check: running {} x {} x {} {} on {}...\n", a.m, a.k, a.n, a.dtype,
                      device_label(a.device));
  Timing timing;
  Data d;
  QuantData qd;
  if (int rc = a.quant.empty() ? run_device(a, d, device.get(), timing) : run_quant_device(a, qd, device.get(), timing);
      rc >= 0)
    return rc;
  Outcome out;
  const auto t0 = std::chrono::steady_clock::now();
  verify(a, *plan, popt.fp16_out, d, qd, out);
  timing.check_ms = ms_since(t0);
  CellLocator where(*plan);
  if (a.json)
    fmt::print("{}\n", to_json(a, info, *plan, out, timing, where).dump(2));
  else
    print_text(a, info, *plan, out, timing, where);
  return code(out.mismatches == 0 ? Exit::ok : Exit::check_failed);
}

}  // namespace
}  // namespace ork::tools

int main(int argc, char** argv) {
  return ork::tools::run_main("sparse_check", [&] { return ork::tools::run(argc, argv); });
}
