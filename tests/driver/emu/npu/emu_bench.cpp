// emu_bench: how fast the emulated core runs a matmul, against a plain loop over the same
// data measured in the same run. Prints both times and their ratio; --json for scripts.
// Not a test: no timing asserts.
//   build-*/tests/driver/emu/npu/emu_bench [--dtype int8|fp16] [--m 512] [--k 2048] [--n 2048]
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <string>

#include "driver/common/cbuf_limits.h"
#include "driver/common/fp16.h"
#include "tests/driver/emu/npu/npu_fixture.h"

using namespace ork::emu;
using ork::float_to_half;
using ork::half_to_float;
using namespace ork::emu::testing;

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// The baseline: the plain row-major loop (m, k, n order so B is read along its rows; the
// m, n, k order is ~60x slower still and not a fair baseline).
int64_t plain_loop(const std::vector<int8_t>& a, const std::vector<int8_t>& b, size_t M, size_t K, size_t N) {
  int64_t checksum = 0;
  std::vector<int32_t> row(N);
  for (size_t m = 0; m < M; ++m) {
    std::fill(row.begin(), row.end(), 0);
    for (size_t k = 0; k < K; ++k) {
      const int32_t av = a[m * K + k];
      for (size_t n = 0; n < N; ++n) row[n] += av * int32_t{b[k * N + n]};
    }
    for (int32_t v : row) checksum += v;
  }
  return checksum;
}

// fp16 baseline: the plain loop in the defined order (acc += a*b, ascending k).
double plain_loop_f16(const std::vector<uint16_t>& a, const std::vector<uint16_t>& b, size_t M, size_t K, size_t N) {
  double checksum = 0;
  std::vector<float> row(N), bf(K * N);
  for (size_t i = 0; i < bf.size(); ++i) bf[i] = half_to_float(b[i]);  // converted once
  for (size_t m = 0; m < M; ++m) {
    std::fill(row.begin(), row.end(), 0.0f);
    for (size_t k = 0; k < K; ++k) {
      const float av = half_to_float(a[m * K + k]);
      for (size_t n = 0; n < N; ++n) row[n] = row[n] + av * bf[k * N + n];
    }
    for (float v : row) checksum += v;
  }
  return checksum;
}

struct Timing {
  double emu_s = 0, plain_s = 0;
  size_t tasks = 0, mc = 0;
  bool same = false;
  std::string error;  // the failed task's message (int8), empty when every task ran
};

Timing run_f16(size_t M, size_t K, size_t N) {
  std::mt19937 rng(3);
  std::uniform_int_distribution<int> d(-4, 4);  // small integers: every sum exact, any order
  std::vector<uint16_t> a(M * K), b(K * N);
  for (auto& x : a) x = float_to_half(static_cast<float>(d(rng)));
  for (auto& x : b) x = float_to_half(static_cast<float>(d(rng)));
  Device dev;
  Bo& A = dev.alloc(M * K * 2);
  Bo& B = dev.alloc(K * N * 2);
  Bo& C = dev.alloc(M * N * 4);
  std::memcpy(A.bytes.data(), pack_a_f16(a, M, K).data(), A.bytes.size());
  std::memcpy(B.bytes.data(), pack_b_f16(b, K, N).data(), B.bytes.size());
  Timing t;
  t.mc = 8;  // docs/hardware.md 10.4: fp16 on the K-reduction schedule is exact up to 8 rows
  const auto t0 = std::chrono::steady_clock::now();
  for (size_t m0 = 0; m0 < M; m0 += t.mc, ++t.tasks) {
    TaskSpec s{.type = Type::fp16, .mc = uint32_t(std::min(t.mc, M - m0)), .kt = uint32_t(K), .nt = uint32_t(N),
               .a = A.iova + m0 * 16, .b = B.iova, .c = C.iova + m0 * 16, .a_surf = uint32_t(M), .c_surf = uint32_t(M)};
    k_reduction_banks(s);
    if (run_one(dev, one_task(s)).status != CoreStatus::ok) return t;
  }
  t.emu_s = seconds_since(t0);
  const auto t1 = std::chrono::steady_clock::now();
  const double plain = plain_loop_f16(a, b, M, K, N);
  t.plain_s = seconds_since(t1);
  double emu = 0;
  for (size_t m = 0; m < M; ++m)
    for (size_t n = 0; n < N; ++n) emu += c_at<float>(C.bytes, M, m, n);
  t.same = emu == plain;
  return t;
}

Timing run_i8(size_t M, size_t K, size_t N) {
  const auto a = random_i8(M * K, 1), b = random_i8(K * N, 2);
  Device dev;
  auto [A, B, C] = alloc_int8(dev, a, b, M, K, N);
  Timing t;
  // M-tiles at the bank limit (the most whole 64-row groups leaving one weight bank), and
  // at most kMaxRowsPerTask rows a task (DATAIN_HEIGHT, cbuf_limits.h).
  t.mc = static_cast<size_t>(std::min(ork::hw::kreduction_rows_max(static_cast<int64_t>(K)), ork::hw::kMaxRowsPerTask));
  const auto t0 = std::chrono::steady_clock::now();
  for (size_t m0 = 0; m0 < M; m0 += t.mc, ++t.tasks) {
    TaskSpec s{.mc = uint32_t(std::min(t.mc, M - m0)), .kt = uint32_t(K), .nt = uint32_t(N), .a = A.iova + m0 * 16,
               .b = B.iova, .c = C.iova + m0 * 16, .a_surf = uint32_t(M), .c_surf = uint32_t(M)};
    k_reduction_banks(s);
    const ChainResult r = run_one(dev, one_task(s));
    if (r.status != CoreStatus::ok) {
      t.error = r.message;
      return t;
    }
  }
  t.emu_s = seconds_since(t0);
  const auto t1 = std::chrono::steady_clock::now();
  const int64_t plain_sum = plain_loop(a, b, M, K, N);
  t.plain_s = seconds_since(t1);
  int64_t emu_sum = 0;
  for (size_t m = 0; m < M; ++m)
    for (size_t n = 0; n < N; ++n) emu_sum += c_at<int32_t>(C.bytes, M, m, n);
  t.same = emu_sum == plain_sum;
  return t;
}

void print(const std::string& dtype, size_t M, size_t K, size_t N, const Timing& t, bool json) {
  if (json) {
    fmt::print("{{\"dtype\":\"{}\",\"m\":{},\"k\":{},\"n\":{},\"tasks\":{},\"emu_ms\":{:.1f},\"plain_loop_ms\":{:.1f},"
               "\"speedup\":{:.2f},\"checksums_equal\":{}}}\n",
               dtype, M, K, N, t.tasks, t.emu_s * 1e3, t.plain_s * 1e3, t.plain_s / t.emu_s, t.same);
  } else {
    fmt::print("{} {}x{}x{} in {} task(s) of <= {} rows\n", dtype, M, K, N, t.tasks, t.mc);
    fmt::print("  emulated NPU : {:8.1f} ms\n  plain loop   : {:8.1f} ms (baseline, same run)\n", t.emu_s * 1e3,
               t.plain_s * 1e3);
    fmt::print("  ratio        : {:.2f} (plain loop time / emulator time); checksums {}\n", t.plain_s / t.emu_s,
               t.same ? "equal" : "DIFFER");
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Emulated NPU int8 matmul speed vs a plain loop (same run)"};
  size_t M = 512, K = 2048, N = 2048;
  bool json = false;
  std::string dtype = "int8";
  app.add_option("--dtype", dtype, "int8 or fp16")->check(CLI::IsMember({"int8", "fp16"}));
  app.add_option("--m", M, "rows");
  app.add_option("--k", K, "K (multiple of 32, <= 4096)")->check(CLI::Range(32, 4096));
  app.add_option("--n", N, "columns (multiple of 32, <= 8192)")->check(CLI::Range(32, 8192));
  app.add_flag("--json", json, "JSON output");
  CLI11_PARSE(app, argc, argv);
  if (K % 32 || N % 32 || M == 0) {
    std::fprintf(stderr, "emu_bench: K and N must be multiples of 32 and M >= 1\n");
    return 2;
  }
  Timing t;
  if (dtype == "fp16") {
    t = run_f16(M, K, N);
  } else {
    t = run_i8(M, K, N);
    if (!t.error.empty()) {
      std::fprintf(stderr, "emu_bench: task failed: %s\n", t.error.c_str());
      return 1;
    }
  }
  print(dtype, M, K, N, t, json);
  return t.same ? 0 : 1;
}
