// ork_run --project (project_report.h): the modelled board time per step of a model's matmuls.
#include "tools/ork_run/project_report.h"

#include <cstdio>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "lib/api/backend.h"
#include "lib/exec/board_plan.h"
#include "lib/exec/int4_widths.h"
#include "lib/exec/pack_file.h"
#include "lib/exec/project.h"
#include "tools/common/cli.h"
#include "tools/ork_run/zero_work_device.h"

namespace ork::tools {
namespace {

int project_fail(const std::string& msg, Exit e = Exit::bad_usage) {
  std::fprintf(stderr, "ork_run: %s\n", msg.c_str());
  return code(e);
}

// The board plan in words, its tolerance from the one constant (board_plan.h).
const std::string& board_plan_words() {
  static const std::string text = fmt::format(
      "each group of a layer's matmuls with one input (q/k/v, o, gate/up, down) as one chained submit per core, its "
      "tasks placed on the cores by the list scheduler or as the plans place them (a matmul split into 1..3 column "
      "parts, int4 K-slices stacked or not, or stacked in the fewest tasks; of the plans within {:.1f} % of the "
      "fastest on the timing model the fewest tasks; q/k/v and gate/up also as one matmul of K x their N summed, "
      "weights side by side K-slice by K-slice, in the row pieces its members take, unless --no-fuse); the scheduled order "
      "overlaps the loads of streamed tensors with compute",
      exec::kFewerTasksTolerance * 100);
  return text;
}
const char* kSplitEachText = "one synchronous submit per matmul, each split over all cores";
const char* kPerSubmitText =
    "the same plan with the fitted fixed cost all per submit (none per task): the other end of the assumed split";
const char* kRuleText =
    "resident when the weights fit the budget and their layers, each whole, at most 16 NPU windows (rknpu IOMMU "
    "domains, rocket files; each entered once a step); else two largest layers' slots stream through one window and "
    "the rest of min(budget, window) is pinned; the remainder is read from disk every step";

nlohmann::json figures_json(const exec::StepFigures& f, const char* plan) {
  return {{"tokens_per_s", f.tokens_per_s}, {"step_us", f.step_ns / 1e3}, {"device_us", f.device_ns / 1e3},
          {"tasks", f.tasks}, {"submits", f.submits}, {"plan", plan}};
}

nlohmann::json groups_json(const exec::Projection& p, const std::vector<exec::BatchGroup>& gs) {
  nlohmann::json groups;
  for (const auto& g : gs) {
    nlohmann::json names;
    for (int j : g.matmuls) names.push_back(p.per_matmul[static_cast<size_t>(j)].name);
    groups.push_back({{"matmuls", names}, {"device_us", static_cast<double>(g.device_ns) / 1e3}, {"tasks", g.tasks},
                      {"submits", g.submits}, {"parts", g.parts}, {"stacked", g.stacked}, {"pieces", g.pieces},
                      {"fused", g.fused}, {"host_us", g.host_ns / 1e3}});
  }
  return groups;
}

nlohmann::json step_json(const exec::Projection& p) {
  nlohmann::json per;
  for (const auto& mp : p.per_matmul)
    per.push_back({{"name", mp.name}, {"k", mp.k}, {"n", mp.n}, {"bytes", mp.bytes},
                   {"device_us", static_cast<double>(mp.device_ns) / 1e3}, {"host_us", mp.host_ns / 1e3},
                   {"tasks", mp.tasks}, {"slice_k", mp.slice_k}});
  return {{"m", p.m},
          {"tokens_per_s", p.tokens_per_s},
          {"step_us", p.step_ns / 1e3},
          {"device_us", p.device_ns / 1e3},
          {"host_us", p.host_ns / 1e3},
          {"host_exposed_us", p.host_exposed_ns / 1e3},
          {"host_overlapped_us", p.host_overlapped_ns / 1e3},
          {"compute_us", p.compute_ns / 1e3},
          {"io_us", p.io_ns / 1e3},
          {"sequential_us", p.sequential_ns / 1e3},
          {"submits", p.submits},
          {"tasks", p.tasks},
          {"tasks_per_layer", p.tasks_per_layer},
          {"windows", p.windows},
          {"dram_floor_us", p.dram_floor_ns / 1e3},
          {"window_switches", p.window_switches},
          {"switch_us", p.switch_ns / 1e3},
          {"split", {{"stream_us", p.dram_floor_ns / 1e3}, {"submit_us", p.submit_ns / 1e3},
                     {"fixed_not_overlapped_us", p.fixed_ns / 1e3}, {"host_us", p.host_ns / 1e3},
                     {"host_exposed_us", p.host_exposed_ns / 1e3}, {"host_overlapped_us", p.host_overlapped_ns / 1e3},
                     {"switch_us", p.switch_ns / 1e3}, {"io_us", p.io_ns / 1e3}}},
          {"plan", board_plan_words()},
          {"groups", groups_json(p, p.groups)},
          {"per_matmul", per},
          {"per_submit", figures_json(p.per_submit, kPerSubmitText)},
          {"split_each", figures_json(p.split_each, kSplitEachText)}};
}

void print_step(const char* label, const exec::Projection& p) {
  std::printf("%-13s %7.1f tok/s  step %8.2f ms = max(I/O %8.2f, device %7.2f + host exposed %6.2f + switch %.2f); "
              "sequential %.2f ms; host %.2f ms, %.2f of it under the NPU's jobs\n",
              label, p.tokens_per_s, p.step_ns / 1e6, p.io_ns / 1e6, p.device_ns / 1e6, p.host_exposed_ns / 1e6,
              p.switch_ns / 1e6, p.sequential_ns / 1e6, p.host_ns / 1e6, p.host_overlapped_ns / 1e6);
  std::printf("%-13s %7s        %lld NPU tasks (%lld a layer), %lld submits, %d window(s); device = stream %.2f (the "
              "weights once through shared DRAM: the model's floor) + submits %.2f + fixed not overlapped %.2f ms\n",
              "", "", static_cast<long long>(p.tasks), static_cast<long long>(p.tasks_per_layer),
              static_cast<long long>(p.submits), p.windows, p.dram_floor_ns / 1e6, p.submit_ns / 1e6, p.fixed_ns / 1e6);
  std::printf("%-13s %7.1f tok/s  all fixed cost per submit: device %7.2f ms\n", "", p.per_submit.tokens_per_s,
              p.per_submit.device_ns / 1e6);
  std::printf("%-13s %7.1f tok/s  %s: device %7.2f ms, %lld tasks, %lld submits\n", "", p.split_each.tokens_per_s,
              kSplitEachText, p.split_each.device_ns / 1e6, static_cast<long long>(p.split_each.tasks),
              static_cast<long long>(p.split_each.submits));
}

// The model's shapes: a synthetic model's by name, or a packed file's description and, per
// matmul, its int4 tensors' narrowest K-slice width over the layers (the file's layout; 0 =
// the dtype's). -1 to go on, else the exit code.
int load_desc(const ProjectArgs& a, exec::ModelDesc& desc, std::vector<int64_t>& file_widths) {
  if (a.path.empty() == a.synthetic.empty())
    return project_fail("--project needs a packed model file or --synthetic NAME (one of them)");
  if (!a.synthetic.empty()) {
    auto dt = exec::parse_dtype(a.dtype);
    if (!dt) return project_fail(fmt::format("--dtype {}: {}", a.dtype, dt.error().message));
    auto d = exec::synthetic_desc(a.synthetic, a.layers, *dt);
    if (!d) return project_fail(fmt::format("--synthetic {}: {}", a.synthetic, d.error().message));
    desc = std::move(*d);
  } else {
    auto m = exec::read_packed(a.path);
    if (!m) return project_fail(m.error().message);
    desc = m->desc;
    file_widths.assign(desc.matmuls.size(), 0);
    for (const exec::PackedTensor& t : m->tensors) {
      int64_t& w = file_widths[static_cast<size_t>(t.matmul)];
      const int64_t width = t.slice_k == 0 ? matmul::kInt4SliceK : t.slice_k;
      w = t.layer == 0 ? width : std::min(w, width);
    }
    if (desc.dtype != matmul::DType::int4) file_widths.assign(desc.matmuls.size(), 0);
  }
  return -1;
}

// Each matmul's int4 K-slice width: from the synthetic model's layer 0 weights of the chosen
// kind; a packed file's own (load_desc). -1 to go on, else the exit code.
int load_widths(const ProjectArgs& a, const exec::ModelDesc& desc, std::vector<int64_t>& widths) {
  auto kind = exec::parse_int4_weights(a.int4_weights);
  if (!kind) return project_fail(fmt::format("--int4-weights: {}", kind.error().message));
  if (a.synthetic.empty()) return -1;  // the file's, as load_desc found them
  widths.assign(desc.matmuls.size(), 0);
  if (desc.dtype != matmul::DType::int4) return -1;
  auto w = exec::int4_slice_widths(desc, *kind, 0, a.seed);
  if (!w) return project_fail(fmt::format("--int4-weights {}: {}", a.int4_weights, w.error().message));
  widths = std::move(*w);
  return -1;
}

// What every step shares (weights, budget, residency): into the JSON once, and the text
// header unless --json.
void report_model(const ProjectArgs& a, const exec::ModelDesc& desc, const exec::Projection& p, uint64_t window,
                  nlohmann::json& out) {
  out["weight_bytes"] = p.weight_bytes;
  out["budget_bytes"] = p.budget_bytes;
  out["resident"] = p.resident;
  out["windows"] = p.windows;
  out["resident_bytes"] = p.resident_bytes;
  out["streamed_bytes"] = p.streamed_bytes;
  if (a.json) return;
  const double mib = 1024.0 * 1024.0;
  std::printf("model     %s: %s %s, %d layers, %.0f MiB of weights; %d cores; disk %.2f GB/s\n",
              a.path.empty() ? a.synthetic.c_str() : a.path.c_str(), desc.name.c_str(), exec::dtype_key(desc.dtype),
              desc.layers, static_cast<double>(p.weight_bytes) / mib, a.cores, a.disk_bytes_per_s / 1e9);
  std::printf("memory    %s: %.0f MiB resident, %.0f MiB streamed per step (budget %.0f MiB, %d window(s) of %.0f MiB, "
              "%lld switch(es) a step at %.0f us)\n",
              p.resident ? "resident" : "streamed", static_cast<double>(p.resident_bytes) / mib,
              static_cast<double>(p.streamed_bytes) / mib, static_cast<double>(p.budget_bytes) / mib, p.windows,
              static_cast<double>(window) / mib, static_cast<long long>(p.window_switches), exec::kWindowSwitchNs / 1e3);
  std::printf("host      %s\n", out["host_source"].get<std::string>().c_str());
}

// The host's parts per call at m rows, of each group's fused call where it may fuse (with
// fusion on), and at m / 2 for the groups run in two row pieces (exec::row_pieces; a fused
// one's call a piece too). -1 to go on, else the exit code.
int measure_host(const exec::DeviceRef& ref, const exec::ModelDesc& desc, int64_t m, int repeats,
                 const std::vector<int64_t>& widths, exec::ProjectOptions& po, int& submits) {
  auto h = exec::measure_host_parts(ref, desc, m, repeats, &submits, widths);
  if (!h) return project_fail(fmt::format("measuring host time at M = {}: {}", m, h.error().message), Exit::check_failed);
  po.host_parts = std::move(*h);
  po.host_ns.clear();
  for (const exec::HostParts& p : po.host_parts) po.host_ns.push_back(p.total_ns());
  if (po.fuse) {
    auto f = exec::measure_fused_host_parts(ref, desc, m, repeats, widths);
    if (!f) return project_fail(fmt::format("measuring host time at M = {}: {}", m, f.error().message), Exit::check_failed);
    po.fused_host_parts = std::move(*f);
  }
  if (m % 2 != 0) return -1;  // one piece (row_pieces)
  auto half = exec::measure_host_parts(ref, desc, m / 2, repeats, nullptr, widths);
  if (!half) return project_fail(fmt::format("measuring host time at M = {}: {}", m / 2, half.error().message), Exit::check_failed);
  po.half_host_parts = std::move(*half);
  if (po.fuse) {  // a fused group in two row pieces: one call a piece
    auto f = exec::measure_fused_host_parts(ref, desc, m, repeats, widths, 2);
    if (!f) return project_fail(fmt::format("measuring host time at M = {}: {}", m / 2, f.error().message), Exit::check_failed);
    po.half_fused_host_parts = std::move(*f);
  }
  return -1;
}

}  // namespace

int run_project(const ProjectArgs& a) {
  exec::ModelDesc desc;
  std::vector<int64_t> widths;
  if (int rc = load_desc(a, desc, widths); rc >= 0) return rc;
  if (int rc = load_widths(a, desc, widths); rc >= 0) return rc;
  auto dev = open_zero_work_emulator();
  if (!dev) return project_fail(fmt::format("the zero-work emulator: {}", dev.error().message), Exit::device_unavailable);
  ork_device& d = **dev;
  const exec::DeviceRef ref = api::exec_device(d, a.cores);
  ork_memory_info mem{};
  mem.struct_size = sizeof mem;
  if (ork_device_memory(&d, &mem) != ORK_OK) return project_fail(fmt::format("the zero-work emulator: {}", ork_last_error()), Exit::device_unavailable);
  const uint64_t window = mem.window_bytes;  // 4 GiB: 32-bit NPU addresses
  nlohmann::json out = {{"model", a.path.empty() ? a.synthetic : a.path}, {"name", desc.name},
                        {"dtype", exec::dtype_key(desc.dtype)}, {"layers", desc.layers}, {"cores", a.cores},
                        {"disk_rate", a.disk_bytes_per_s}, {"window_bytes", window},
                        {"int4_weights", desc.dtype != matmul::DType::int4 ? "floor" : a.synthetic.empty() ? "file" : a.int4_weights},
                        {"residency_rule", kRuleText}, {"fuse", a.fuse},
                        {"host_source", a.host_us >= 0 ? "given (--host-us)" : "measured: zero-work emulator, medians of the runner's plan+pack+submit and unpack as CPU time (every thread of the step, this machine's cores), a fused group's one call (its C's columns unpacked straight into the members') as such; the part not under the NPU's jobs added (host_exposed_us)"},
                        {"device_source", "timing model (docs/timing-model.md): the board plan's per-core chains on shared DRAM"}};
  struct Step {
    const char* key;
    const char* label;
    int64_t m;
  };
  const std::string pkey = fmt::format("prefill_m{}", a.prefill_m), plabel = fmt::format("prefill M={}", a.prefill_m);
  std::vector<Step> steps = {{"decode", "decode M=1", 1}, {pkey.c_str(), plabel.c_str(), a.prefill_m}};
  if (a.prefill_m != 512) steps.push_back({"prefill_m512", "prefill M=512", 512});  // the table's second prefill
  bool first = true;
  for (const Step& s : steps) {
    exec::ProjectOptions po;
    po.m = s.m;
    po.cores = a.cores;
    po.disk_bytes_per_s = a.disk_bytes_per_s;
    po.window_bytes = window;
    po.budget_bytes = a.budget_bytes == 0 ? window : a.budget_bytes;
    po.slice_k = widths;
    po.fuse = a.fuse;
    int submits = 0;
    if (a.host_us >= 0) {
      po.host_ns.assign(desc.matmuls.size(), a.host_us * 1e3);
      po.fused_host_parts.assign(desc.matmuls.size(), {a.host_us * 1e3, 0});  // a fused group is one call
    } else if (int rc = measure_host(ref, desc, s.m, a.repeats, widths, po, submits); rc >= 0) {
      return rc;
    }
    auto p = exec::project(desc, po);
    if (!p) return project_fail(p.error().message);
    if (first) report_model(a, desc, *p, window, out);
    first = false;
    nlohmann::json j = step_json(*p);
    if (a.host_us < 0) j["measured_submits_per_call"] = submits;
    out["project"][s.key] = j;
    if (!a.json) print_step(s.label, *p);
  }
  if (a.json) std::printf("%s\n", out.dump().c_str());
  return code(Exit::ok);
}

}  // namespace ork::tools
