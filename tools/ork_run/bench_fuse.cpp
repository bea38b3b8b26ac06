// ork_run --bench-fuse (bench_fuse.h).
#include "tools/ork_run/bench_fuse.h"

#include <sys/resource.h>

#include <cstdio>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "driver/common/result.h"
#include "lib/api/backend.h"
#include "lib/exec/chain_reference.h"
#include "lib/exec/exec_plan.h"
#include "lib/exec/executor.h"
#include "tools/common/cli.h"
#include "tools/common/spread.h"
#include "tools/ork_run/run_inputs.h"
#include "tools/ork_run/zero_work_device.h"

namespace ork::tools {
namespace {

const char* kFuseNotChecked =
    "zero-work run: the emulated PC computes nothing, so outputs are not computed; the computing device's runs check "
    "the same plans";

// Process CPU time so far (user + system, every thread), ns.
int64_t fuse_bench_cpu_ns() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return (int64_t{u.ru_utime.tv_sec} + u.ru_stime.tv_sec) * 1'000'000'000 +
         (int64_t{u.ru_utime.tv_usec} + u.ru_stime.tv_usec) * 1000;
}

// One way of running (fused or not) on one device: per round, per token.
struct FuseSamples {
  std::vector<double> cpu_us, calls_us;
  int64_t fused_groups = 0;
  bool checked = true;
  std::string check_error;
};

// The two plans (index 0 fused, 1 unfused) on one device.
struct FuseDevice {
  const char* key;
  exec::DeviceRef ref;
  const exec::ChainResult* want;  // null: the zero-work device, nothing to check
  FuseSamples runs[2];
};

Status fuse_bench_run(const BenchFuseArgs& a, const exec::PackedModel& model, const exec::ExecPlan& plan,
                      const exec::PlanOptions& po, FuseDevice& d, FuseSamples& s) {
  exec::RunOptions ro;
  ro.inflight = a.inflight;
  const int64_t cpu0 = fuse_bench_cpu_ns();
  auto run = exec::run_plan(a.path, model, plan, po, d.ref, ro);
  const int64_t cpu = fuse_bench_cpu_ns() - cpu0;
  if (!run) return run.error();
  const auto t = static_cast<double>(a.tokens);
  s.cpu_us.push_back(static_cast<double>(cpu) / 1e3 / t);
  s.calls_us.push_back(static_cast<double>(run->stats.device_ns) / 1e3 / t);
  s.fused_groups = run->stats.fused_groups;
  if (d.want == nullptr) return Status::success();
  if (Status c = exec::compare_chains(model, run->chain, *d.want); !c) {
    s.checked = false;
    s.check_error = c.error().message;
  }
  return Status::success();
}

nlohmann::json fuse_spread_json(const std::vector<double>& v) {
  const Spread s = spread(v);
  return {{"min", s.min}, {"median", s.median}, {"max", s.max}, {"n", s.n}};
}

// Per round, fused over unfused.
std::vector<double> fuse_ratios(const std::vector<double>& fused, const std::vector<double>& plain) {
  std::vector<double> r;
  for (size_t i = 0; i < fused.size() && i < plain.size(); ++i) r.push_back(plain[i] > 0 ? fused[i] / plain[i] : 0);
  return r;
}

nlohmann::json fuse_device_json(const FuseDevice& d) {
  nlohmann::json j;
  const char* names[] = {"fused", "unfused"};
  for (int f = 0; f < 2; ++f) {
    const FuseSamples& s = d.runs[f];
    j[names[f]] = {{"cpu_us_per_token", fuse_spread_json(s.cpu_us)}, {"calls_us_per_token", fuse_spread_json(s.calls_us)},
                   {"fused_groups", s.fused_groups}, {"checked", d.want != nullptr && s.checked}};
    if (d.want == nullptr) j[names[f]]["check_skipped"] = kFuseNotChecked;
    if (!s.check_error.empty()) j[names[f]]["check_error"] = s.check_error;
  }
  j["ratio_fused_over_unfused"] = {{"cpu", fuse_spread_json(fuse_ratios(d.runs[0].cpu_us, d.runs[1].cpu_us))},
                                   {"calls", fuse_spread_json(fuse_ratios(d.runs[0].calls_us, d.runs[1].calls_us))}};
  return j;
}

void fuse_print_text(const BenchFuseArgs& a, const nlohmann::json& devices, bool checked) {
  std::printf("bench     %s: fused against --no-fuse, %lld tokens of m = %lld, %d rounds interleaved\n", a.path.c_str(),
              static_cast<long long>(a.tokens), static_cast<long long>(a.m), a.repeats);
  for (const auto& [key, d] : devices.items()) {
    for (const char* f : {"fused", "unfused"}) {
      const auto& s = d[f];
      std::printf("%-10s %-8s CPU %.1f / %.1f / %.1f us a token, in calls %.1f / %.1f / %.1f us (min / median / max), "
                  "%s fused group jobs\n", key.c_str(), f, s["cpu_us_per_token"]["min"].get<double>(),
                  s["cpu_us_per_token"]["median"].get<double>(), s["cpu_us_per_token"]["max"].get<double>(),
                  s["calls_us_per_token"]["min"].get<double>(), s["calls_us_per_token"]["median"].get<double>(),
                  s["calls_us_per_token"]["max"].get<double>(), s["fused_groups"].dump().c_str());
    }
    const auto& r = d["ratio_fused_over_unfused"];
    std::printf("%-10s fused / unfused: CPU %.3f / %.3f / %.3f, calls %.3f / %.3f / %.3f\n", key.c_str(),
                r["cpu"]["min"].get<double>(), r["cpu"]["median"].get<double>(), r["cpu"]["max"].get<double>(),
                r["calls"]["min"].get<double>(), r["calls"]["median"].get<double>(), r["calls"]["max"].get<double>());
  }
  std::printf("%s  zero-work runs not checked (%s); the computing device's: %s\n", checked ? "checked " : "MISMATCH",
              kFuseNotChecked, checked ? "every output equals the CPU reference" : "see --json's check_error");
}

int fuse_fail(const std::string& msg, Exit e) {
  std::fprintf(stderr, "ork_run: %s\n", msg.c_str());
  return code(e);
}

// The rounds: on each device the two plans, which goes first alternating round by round, so
// a drift of the shared machine hits both alike.
Status fuse_rounds(const BenchFuseArgs& a, const exec::PackedModel& model, const exec::ExecPlan (&plans)[2],
                   const exec::PlanOptions (&pos)[2], std::vector<FuseDevice>& devices) {
  for (int r = 0; r < a.repeats; ++r)
    for (FuseDevice& d : devices)
      for (int i = 0; i < 2; ++i) {
        const int f = (r + i) % 2;
        if (Status s = fuse_bench_run(a, model, plans[f], pos[f], d, d.runs[f]); !s)
          return make_error(s.error().code, fmt::format("{} run ({}): {}", d.key, f == 0 ? "fused" : "unfused",
                                                        s.error().message));
      }
  return Status::success();
}

}  // namespace

int run_bench_fuse(const BenchFuseArgs& a) {
  auto model = exec::read_packed(a.path);
  if (!model) return fuse_fail(model.error().message, Exit::bad_usage);
  exec::PlanOptions pos[2];
  exec::ExecPlan plans[2];
  for (int f = 0; f < 2; ++f) {
    pos[f].m = a.m, pos[f].tokens = a.tokens, pos[f].budget_bytes = a.budget_bytes, pos[f].window_bytes = a.window_bytes;
    pos[f].cores = a.cores, pos[f].disk_bytes_per_ns = a.disk_bytes_per_ns, pos[f].fuse = f == 0;
    auto p = exec::build_plan(*model, pos[f]);
    if (!p) return fuse_fail(p.error().message, Exit::bad_usage);
    plans[f] = std::move(*p);
  }
  auto zero = open_zero_work_emulator();
  if (!zero) return fuse_fail(fmt::format("the zero-work emulator: {}", zero.error().message), Exit::device_unavailable);
  auto dev = open_named_device(a.device_name);
  if (!dev) return fuse_fail(dev.error().message, dev.error().code == -EINVAL ? Exit::bad_usage : Exit::device_unavailable);
  auto want = exec::reference_chain(a.path, *model, a.m, a.tokens);
  if (!want) return fuse_fail(fmt::format("the CPU reference failed: {}", want.error().message), Exit::check_failed);
  std::vector<FuseDevice> devices = {{"zero_work", api::exec_device(**zero, a.cores), nullptr, {}},
                                     {"device", api::exec_device(*dev->device, a.cores), &*want, {}}};
  if (Status s = fuse_rounds(a, *model, plans, pos, devices); !s) return fuse_fail(s.error().message, Exit::check_failed);
  nlohmann::json out = {{"model", a.path}, {"tokens", a.tokens}, {"m", a.m}, {"cores", a.cores}, {"repeats", a.repeats},
                        {"inflight", a.inflight}, {"budget_bytes", a.budget_bytes}, {"device", device_label(dev->info)},
                        {"zero_work_device", "emu, a PC that does no work (every job completes at once)"}};
  bool checked = true;
  for (const FuseDevice& d : devices) {
    out["devices"][d.key] = fuse_device_json(d);
    if (d.want != nullptr) checked = checked && d.runs[0].checked && d.runs[1].checked;
  }
  out["checked"] = checked;
  if (a.json)
    std::printf("%s\n", out.dump().c_str());
  else
    fuse_print_text(a, out["devices"], checked);
  return code(checked ? Exit::ok : Exit::check_failed);
}

}  // namespace ork::tools
