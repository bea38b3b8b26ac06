// ork_run's memory flags, device label, peak RSS and plan file (run_inputs.h).
#include "tools/ork_run/run_inputs.h"

#include <sys/resource.h>


#include <fmt/format.h>

#include "driver/common/npu_window.h"
#include "driver/common/safe_file.h"
#include "lib/api/device.h"
#include "lib/exec/plan_text.h"
#include "tools/common/input_limits.h"
#include "tools/common/size_arg.h"

namespace ork::tools {

Result<Memory> parse_memory(const std::string& budget_text, const std::string& window_text) {
  Memory m;
  m.budget_given = !budget_text.empty();
  if (!m.budget_given) {
    m.budget_bytes = default_memory_budget(available_memory());
  } else {
    auto b = io::tools::parse_size(budget_text);
    if (!b) return make_error(-EINVAL, fmt::format("--budget {}: {}", budget_text, b.error().message));
    if (auto e = check_memory(fmt::format("--budget {}", budget_text), *b); !e.empty()) return make_error(-EINVAL, e);
    m.budget_bytes = *b;
  }
  m.window_bytes = hw::kNpuWindowBytes;
  if (!window_text.empty()) {
    auto w = io::tools::parse_size(window_text);
    if (!w) return make_error(-EINVAL, fmt::format("--window {}: {}", window_text, w.error().message));
    if (*w > hw::kNpuWindowBytes)
      return make_error(-EINVAL, fmt::format("--window {}: above the NPU's 4 GiB address window (32-bit address "
                                             "registers)", window_text));
    m.window_bytes = *w;
  }
  return m;
}

std::string device_label(const ork_device_info& info) {
  const std::string backend = info.backend;
  if (backend != "emu") return backend;  // rknpu, rocket and cpu say which they are
  return "emu-" + std::string(info.kernel_interface);
}

Result<OpenedDevice> open_named_device(const std::string& name) {
  ork_device* raw = nullptr;
  const ork_status st = ork_device_open(name.empty() ? nullptr : name.c_str(), &raw);
  OpenedDevice out;
  out.device.reset(raw);
  if (st != ORK_OK)
    return make_error(st == ORK_E_INVALID_ARGUMENT ? -EINVAL : -ENODEV, fmt::format("--device: {}", ork_last_error()));
  if (ork_device_get_info(raw, &out.info) != ORK_OK)
    return make_error(-ENODEV, fmt::format("--device: {}", ork_last_error()));
  return out;
}

std::string open_windows(int n, Windows& w, exec::DeviceRef& ref) {
  if (!ref.on_npu()) return {};  // the cpu device: host memory, no NPU windows
  driver::Kmd* first = ref.kmd;
  for (int i = 1; i < n; ++i) {
    auto kmd = first->open_window(i);
    if (!kmd) return fmt::format("opening NPU window {} of {}: {}", i, n, kmd.error().message);
    w.runners.push_back(std::make_unique<matmul::MatmulRunner>(**kmd));
    w.kmds.push_back(std::move(*kmd));
    ref.more_windows.emplace_back(w.kmds.back().get(), w.runners.back().get());
  }
  return {};
}

uint64_t peak_rss_bytes() {
  rusage u{};
  if (::getrusage(RUSAGE_SELF, &u) != 0) return 0;
  return static_cast<uint64_t>(u.ru_maxrss) * 1024;  // Linux reports KiB
}

std::string write_plan(const std::string& path, const exec::ExecPlan& plan, const exec::PlanOptions& options,
                       const std::string& model_path) {
  auto text = exec::format_plan(plan, options, model_path);
  if (!text) return fmt::format("--plan-out {}: {}", path, text.error().message);
  if (Status s = write_file_atomically(path, *text); !s) return fmt::format("--plan-out {}", s.error().message);
  return {};
}

}  // namespace ork::tools
