// ork_run --bench-fuse (bench_fuse.h).
#include "tools/ork_run/bench_fuse.h"

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

// One way of running (fused or not) on one device: per round, per token past the first.
struct FuseSamples {
  std::vector<double> cpu_us, calls_us;
  int64_t fused_groups = 0;
  bool checked = true;
  std::string check_error;
};

// The plans, per way (0 fused, 1 unfused) and length (0: one token, 1: --tokens).
struct FusePlans {
  exec::PlanOptions po[2][2];
  exec::ExecPlan plan[2][2];
};

// The runs on one device; want[l]: the reference of length l (nulls: the zero-work device,
// nothing to check).
struct FuseDevice {
  const char* key;
  exec::DeviceRef ref;
  const exec::ChainResult* want[2];
  FuseSamples runs[2];
};

// One run of way f and length l: its device thread's CPU ns (RunStats::device_cpu_ns) and
// time in calls (RunStats::device_ns) into cost.
Status fuse_bench_run(const BenchArgs& a, const exec::PackedModel& model, const FusePlans& p, int f, int l,
                      FuseDevice& d, int64_t (&cost)[2]) {
  exec::RunOptions ro;
  ro.inflight = a.inflight;
  ro.count_cpu = true;
  auto run = exec::run_plan(a.path, model, p.plan[f][l], p.po[f][l], d.ref, ro);
  if (!run) return run.error();
  cost[0] = run->stats.device_cpu_ns;
  cost[1] = run->stats.device_ns;
  FuseSamples& s = d.runs[f];
  s.fused_groups = run->stats.fused_groups;  // the longer run's, the last written
  if (d.want[l] == nullptr) return Status::success();
  if (Status c = exec::compare_chains(model, run->chain, *d.want[l]); !c) {
    s.checked = false;
    s.check_error = c.error().message;
  }
  return Status::success();
}

// Way f once at one token and once at --tokens: the second's cost less the first's, per
// token past the first (the run's setup, the weights' one read and the first token's
// context builds cancel: what is left is every later token's own host work and device time).
Status fuse_bench_pair(const BenchArgs& a, const exec::PackedModel& model, const FusePlans& p, int f, FuseDevice& d) {
  int64_t one[2] = {}, all[2] = {};
  if (Status s = fuse_bench_run(a, model, p, f, 0, d, one); !s) return s;
  if (Status s = fuse_bench_run(a, model, p, f, 1, d, all); !s) return s;
  const auto later = static_cast<double>(a.tokens - 1);
  d.runs[f].cpu_us.push_back(static_cast<double>(all[0] - one[0]) / 1e3 / later);
  d.runs[f].calls_us.push_back(static_cast<double>(all[1] - one[1]) / 1e3 / later);
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
                   {"fused_groups", s.fused_groups}, {"checked", d.want[0] != nullptr && s.checked}};
    if (d.want[0] == nullptr) j[names[f]]["check_skipped"] = kFuseNotChecked;
    if (!s.check_error.empty()) j[names[f]]["check_error"] = s.check_error;
  }
  j["ratio_fused_over_unfused"] = {{"cpu", fuse_spread_json(fuse_ratios(d.runs[0].cpu_us, d.runs[1].cpu_us))},
                                   {"calls", fuse_spread_json(fuse_ratios(d.runs[0].calls_us, d.runs[1].calls_us))}};
  return j;
}

void fuse_print_text(const BenchArgs& a, const nlohmann::json& devices, bool checked) {
  std::printf("bench     %s: fused against --no-fuse, %lld tokens of m = %lld, %d rounds interleaved\n", a.path.c_str(),
              static_cast<long long>(a.tokens), static_cast<long long>(a.m), a.repeats);
  for (const auto& [key, d] : devices.items()) {
    for (const char* f : {"fused", "unfused"}) {
      const auto& s = d[f];
      std::printf("%-10s %-8s CPU %.1f / %.1f / %.1f us a later token, in calls %.1f / %.1f / %.1f us (min / median / max), "
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

// The rounds: on each device the two ways, which goes first alternating round by round, so
// a drift of the shared machine hits both alike.
Status fuse_rounds(const BenchArgs& a, const exec::PackedModel& model, const FusePlans& p,
                   std::vector<FuseDevice>& devices) {
  for (int r = 0; r < a.repeats; ++r)
    for (FuseDevice& d : devices)
      for (int i = 0; i < 2; ++i) {
        const int f = (r + i) % 2;
        if (Status s = fuse_bench_pair(a, model, p, f, d); !s)
          return make_error(s.error().code, fmt::format("{} run ({}): {}", d.key, f == 0 ? "fused" : "unfused",
                                                        s.error().message));
      }
  return Status::success();
}

// The four plans: fused and not, one token and --tokens.
Status fuse_plans(const BenchArgs& a, const exec::PackedModel& model, FusePlans& p) {
  for (int f = 0; f < 2; ++f)
    for (int l = 0; l < 2; ++l) {
      exec::PlanOptions& po = p.po[f][l];
      po.m = a.m, po.tokens = l == 0 ? 1 : a.tokens, po.budget_bytes = a.budget_bytes, po.window_bytes = a.window_bytes;
      po.cores = a.cores, po.disk_bytes_per_ns = a.disk_bytes_per_ns, po.fuse = f == 0;
      auto plan = exec::build_plan(model, po);
      if (!plan) return plan.error();
      p.plan[f][l] = std::move(*plan);
    }
  return Status::success();
}

}  // namespace

int run_bench_fuse(const BenchArgs& a) {
  if (a.tokens < 2) return fuse_fail("--bench-fuse: --tokens must be 2 or more (a run's later tokens are measured)", Exit::bad_usage);
  auto model = exec::read_packed(a.path);
  if (!model) return fuse_fail(model.error().message, Exit::bad_usage);
  FusePlans plans;
  if (Status s = fuse_plans(a, *model, plans); !s) return fuse_fail(s.error().message, Exit::bad_usage);
  auto zero = open_zero_work_emulator();
  if (!zero) return fuse_fail(fmt::format("the zero-work emulator: {}", zero.error().message), Exit::device_unavailable);
  auto dev = open_named_device(a.device_name);
  if (!dev) return fuse_fail(dev.error().message, dev.error().code == -EINVAL ? Exit::bad_usage : Exit::device_unavailable);
  auto want1 = exec::reference_chain(a.path, *model, a.m, 1);
  auto want = exec::reference_chain(a.path, *model, a.m, a.tokens);
  if (!want1 || !want)
    return fuse_fail(fmt::format("the CPU reference failed: {}", (!want1 ? want1 : want).error().message), Exit::check_failed);
  std::vector<FuseDevice> devices = {{"zero_work", api::exec_device(**zero, a.cores), {nullptr, nullptr}, {}},
                                     {"device", api::exec_device(*dev->device, a.cores), {&*want1, &*want}, {}}};
  if (Status s = fuse_rounds(a, *model, plans, devices); !s) return fuse_fail(s.error().message, Exit::check_failed);
  nlohmann::json out = {{"model", a.path}, {"tokens", a.tokens}, {"m", a.m}, {"cores", a.cores}, {"repeats", a.repeats},
                        {"inflight", a.inflight}, {"budget_bytes", a.budget_bytes}, {"device", device_label(dev->info)},
                        {"zero_work_device", "emu, a PC that does no work (every job completes at once)"},
                        {"per_token", "a run of --tokens less a run of one, per token past the first: the device "
                                      "thread's CPU time (cpu_us) and time in calls (calls_us, wall)"}};
  bool checked = true;
  for (const FuseDevice& d : devices) {
    out["devices"][d.key] = fuse_device_json(d);
    if (d.want[0] != nullptr) checked = checked && d.runs[0].checked && d.runs[1].checked;
  }
  out["checked"] = checked;
  if (a.json)
    std::printf("%s\n", out.dump().c_str());
  else
    fuse_print_text(a, out["devices"], checked);
  return code(checked ? Exit::ok : Exit::check_failed);
}

}  // namespace ork::tools
