#include "tools/mc_prof/measure.h"

#include <chrono>
#include <vector>

#include <fmt/format.h>

#include "lib/api/device.h"
#include "lib/matmul/run.h"
#include "lib/ref/fast.h"
#include "lib/ref/random.h"
#include "tools/common/spread.h"

namespace ork::tools {
namespace {

using ork::ref::random_int8;

double us(int64_t ns) { return static_cast<double>(ns) / 1000.0; }

}  // namespace

Result<double> cpu_fast_us(const Config& cfg) {
  const auto a = random_int8(static_cast<size_t>(cfg.m * cfg.k), 1);
  const auto w = random_int8(static_cast<size_t>(cfg.k * cfg.n), 2);
  std::vector<int32_t> c(static_cast<size_t>(cfg.m * cfg.n));
  const ref::Dims d{cfg.m, cfg.k, cfg.n};
  double total = 0;
  for (int i = -std::max(cfg.warmup, 1); i < cfg.iters; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    if (auto s = ref::matmul_int8_fast(a, w, c, d); !s) return s.error();
    if (i >= 0)
      total += us(std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count());
  }
  return total / std::max(cfg.iters, 1);
}

// --warmup 0 means none: the first measured call then builds the context, and its time
// (in the figures, and as build_us) says so. The runbook's --quick dry run asks for that
// (docs/board.md): one emulated matmul per configuration, not two (docs/reliability.md
// "CI time", lever 24).
Result<Measurement> measure(ork_device& device, const Config& cfg) {
  if (device.backend->kmd() == nullptr) return make_error(-EINVAL, "mc_prof needs an NPU device (rknpu, rocket or emu), not cpu");
  const auto a = random_int8(static_cast<size_t>(cfg.m * cfg.k), 1);
  const auto w = random_int8(static_cast<size_t>(cfg.k * cfg.n), 2);
  std::vector<int32_t> c(static_cast<size_t>(cfg.m * cfg.n));
  auto weights = matmul::ResidentWeights::create(*device.backend->kmd(), matmul::DType::int8, cfg.k, cfg.n, w.data());
  if (!weights) return weights.error();
  matmul::MatmulRunner runner(*device.backend->kmd());
  const matmul::RunOptions opt{.cores = cfg.cores, .mc_cap = cfg.mc_cap};
  Measurement out;
  out.config = cfg;
  matmul::RunStats st;
  for (int i = 0; i < cfg.warmup; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    if (auto s = runner.run(**weights, a.data(), cfg.m, c.data(), opt, &st); !s)
      return make_error(s.error().code, fmt::format("warm-up call {} failed: {}", i, s.error().message));
    if (st.built)
      out.build_us = us(std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count());
  }
  double total = 0, device_total = 0;
  std::vector<double> samples;
  samples.reserve(static_cast<size_t>(cfg.iters));
  bool device_known = true;
  for (int i = 0; i < cfg.iters; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    // A failed submit is reported, not averaged away.
    if (auto s = runner.run(**weights, a.data(), cfg.m, c.data(), opt, &st); !s)
      return make_error(s.error().code, fmt::format("call {} failed: {}", i, s.error().message));
    samples.push_back(us(std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count()));
    if (st.built) out.build_us = samples.back();
    total += samples.back();
    out.pack_us += us(st.pack_ns);
    out.submit_us += us(st.submit_ns);
    out.unpack_us += us(st.unpack_ns);
    out.lookup_us += us(st.plan_ns);
    if (st.device_ns < 0) device_known = false;  // rocket: no hw_elapse_time
    else device_total += us(st.device_ns);
    out.submits = st.submits;
  }
  const double n = std::max(cfg.iters, 1);
  out.us_per_matmul = total / n;
  const Spread sp = spread(std::move(samples));
  out.us_min = sp.min;
  out.us_median = sp.median;
  out.us_max = sp.max;
  out.pack_us /= n;
  out.submit_us /= n;
  out.unpack_us /= n;
  out.lookup_us /= n;
  // Device time from the kernel where it reports one, else the measured submit + wait.
  out.device_us = device_known ? device_total / n : out.submit_us;
  out.device_source = device_known ? "kernel" : "wall";
  out.us_per_submit = out.submits ? out.us_per_matmul / out.submits : 0;
  auto plan = matmul::make_plan({cfg.m, cfg.k, cfg.n}, {.dtype = matmul::DType::int8, .cores = cfg.cores, .mc_cap = cfg.mc_cap});
  if (plan) {
    out.tasks = static_cast<int64_t>(plan->tasks.size());
    out.mc = plan->mc;
  }
  return out;
}

}  // namespace ork::tools
