// sparse_check M K N [cores]: fast sampled correctness of libork's int8 matmul at shapes
// whose full reference takes minutes (seed 004's tool, ours). Random seeded A (M x K) and W
// (K x N) go through the C API on the device; cells chosen from the plan the library runs
// (every M-tile, N-task, core and K-slice edge, plus random cells; --full: all) are compared
// with full-K int64 dot products on the host.
// Exit 0 all match, 1 a mismatch (or the device / job failed), 2 bad usage.
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "tools/common/cli.h"
#include "tools/common/ork_handles.h"
#include "tools/common/progress.h"
#include "tools/sparse_check/cells.h"
#include "tools/sparse_check/verify.h"

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
};

struct Timing {
  double matmul_ms = 0, check_ms = 0;
};

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

int fail(Exit exit, const std::string& message) {
  fmt::print(stderr, "sparse_check: {}\n", message);
  return code(exit);
}

// A and W from the seed, then C through the C API. Returns an exit code, or -1 to go on.
int run_device(const Args& a, std::vector<int8_t>& A, std::vector<int8_t>& W,
               std::vector<int32_t>& C, ork_device* device, Timing& timing) {
  SplitMix64 rng(a.seed);
  fill_random_int8(A, rng);
  fill_random_int8(W, rng);
  ork_weights* raw = nullptr;
  ork_status st = ork_weights_create(device, ORK_DTYPE_INT8, a.k, a.n, W.data(), &raw);
  WeightsPtr weights(raw);
  if (st != ORK_OK)
    return fail(st == ORK_E_INVALID_ARGUMENT ? Exit::bad_usage : Exit::check_failed,
                "weights: " + describe_failure(st));
  ork_matmul_options options{};
  options.struct_size = sizeof(options);
  options.cores = a.cores;
  options.mc_cap = a.mc_cap;
  const auto t0 = std::chrono::steady_clock::now();
  st = ork_matmul(device, weights.get(), A.data(), a.m, C.data(), &options);
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
  return {{"m", a.m}, {"k", a.k}, {"n", a.n}, {"device", device_label(a.device)},
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
  fmt::print("sparse_check: M={} K={} N={} on {} ({}{}), {} core(s), seed {}: plan mc={} "
             "slices={} tasks={}; {} {} cells checked, {} mismatch(es); matmul {:.3f} ms, "
             "check {:.3f} ms: {}\n",
             a.m, a.k, a.n, device_label(a.device), info.backend,
             info.kernel_interface[0] ? fmt::format(" via {}", info.kernel_interface) : "",
             plan.cores_used, a.seed, plan.mc, plan.slices, plan.tasks.size(),
             a.full ? "all" : "sampled", out.checked, out.mismatches, timing.matmul_ms,
             timing.check_ms, out.mismatches == 0 ? "OK" : "FAILED");
}

void add_options(CLI::App& app, Args& args) {
  app.add_option("M", args.m, "rows of A and C")->required()->check(CLI::PositiveNumber);
  app.add_option("K", args.k, "columns of A, rows of W")->required()->check(CLI::PositiveNumber);
  app.add_option("N", args.n, "columns of W and C")->required()->check(CLI::PositiveNumber);
  app.add_option("cores", args.cores, "NPU cores 1..3 (default: all the device has)")
      ->check(CLI::Range(0, 3));
  app.add_option("--device,-d", args.device,
                 "rknpu, rocket, emu, emu-rknpu, emu-rocket, cpu, auto (default: $ORK_DEVICE, "
                 "else auto)");
  app.add_flag("--full", args.full, "check every cell, not a sample");
  app.add_option("--seed", args.seed, "seed of the random A and W (default 1)");
  app.add_option("--mc-cap", args.mc_cap, "cap on rows per M-tile; 0 = the bank limit")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--random-cells", args.random_cells,
                 "random cells checked on top of the edges (default 1024)")
      ->check(CLI::NonNegativeNumber);
  app.add_flag("--json", args.json, "print the result as JSON on stdout");
}

int run(int argc, char** argv) {
  CLI::App app{"sparse_check: sampled correctness of libork's int8 matmul C = A x W.\n"
               "Exit 0 all checked cells match, 1 a mismatch or a device failure, 2 bad usage."};
  Args a;
  add_options(app, a);
  if (int rc = parse_command_line(app, argc, argv); rc >= 0) return rc;
  // Divisions, not products: M, K, N up to INT64_MAX must not overflow the check itself.
  if (a.m > kMaxOperandBytes / a.k || a.n > kMaxOperandBytes / a.k ||
      a.m > kMaxOperandBytes / 4 / a.n)
    return fail(Exit::bad_usage, fmt::format("M={} K={} N={}: an operand would exceed {} GiB",
                                             a.m, a.k, a.n, kMaxOperandBytes >> 30));
  ork_device* raw = nullptr;
  ork_status st = ork_device_open(a.device.empty() ? nullptr : a.device.c_str(), &raw);
  DevicePtr device(raw);
  ork_device_info info{};
  if (st == ORK_OK) st = ork_device_get_info(device.get(), &info);
  if (st != ORK_OK)
    return fail(st == ORK_E_INVALID_ARGUMENT ? Exit::bad_usage : Exit::check_failed,
                fmt::format("device {}: {}", device_label(a.device), describe_failure(st)));
  // The plan the library runs: same shape and options, cores as the library resolves 0.
  matmul::PlanOptions popt;
  popt.cores = a.cores ? a.cores : std::clamp(info.cores, 1, matmul::kMaxCores);
  popt.mc_cap = a.mc_cap;
  Result<matmul::Plan> plan = matmul::make_plan({a.m, a.k, a.n}, popt);
  if (!plan) return fail(Exit::bad_usage, "plan: " + plan.error().message);

  std::vector<int8_t> A(static_cast<size_t>(a.m * a.k)), W(static_cast<size_t>(a.k * a.n));
  std::vector<int32_t> C(static_cast<size_t>(a.m * a.n));
  // One C API call has no progress to report: on a terminal, say what runs meanwhile.
  const bool big = a.m * a.k * a.n >= kBigShapeMacs && stderr_is_terminal();
  if (big) fmt::print(stderr, "sparse_check: running {} x {} x {} on {}...\n", a.m, a.k, a.n,
                      device_label(a.device));
  Timing timing;
  if (int rc = run_device(a, A, W, C, device.get(), timing); rc >= 0) return rc;
  const Problem problem{A, W, a.m, a.k, a.n};
  Outcome out;
  const auto t0 = std::chrono::steady_clock::now();
  if (a.full) {
    verify_full(problem, C, a.m * a.k * a.n >= kBigShapeMacs, out);
  } else {
    const std::vector<Cell> cells = sample_cells(*plan, a.random_cells, 4, a.seed);
    const auto count = static_cast<int64_t>(cells.size());
    verify_cells(problem, cells, C, count * a.k >= kBigShapeMacs, out);
  }
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

int main(int argc, char** argv) { return ork::tools::run(argc, argv); }
