// ork_run's memory flags and what it reports of the process (docs/execution.md "ork_run"):
// --budget (host RAM for slots; default from the machine, tools/common/input_limits.h) and
// --window (the NPU address window for the slots; default the RK3588's 4 GiB), the device
// named as it was opened, the process's measured peak RSS, and --plan-out's file.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "driver/common/result.h"
#include "driver/kmd/kmd.h"
#include "lib/exec/executor.h"
#include "lib/exec/exec_plan.h"
#include "lib/matmul/run.h"
#include "ork/ork.h"
#include "tools/common/ork_handles.h"

namespace ork::tools {

struct Memory {
  uint64_t budget_bytes = 0, window_bytes = 0;
  bool budget_given = false;  // false: default_memory_budget of MemAvailable
};

// `budget_text` empty: the machine's default; else parsed (K/M/G) and checked against the
// memory available, as before. `window_text` empty: hw::kNpuWindowBytes; else parsed, and
// above 4 GiB refused (the NPU's address registers are 32 bits). Errors name the flag.
Result<Memory> parse_memory(const std::string& budget_text, const std::string& window_text);

// "emu-rknpu", "emu-rocket", "rknpu", "rocket", "cpu": the backend and, for a kernel
// interface, which one (the info's backend says "emu" for both emulated ones).
std::string device_label(const ork_device_info& info);

// The device --device names ("" = the default), opened through the C API, with its facts.
// The error names --device and ork_last_error(); its code is -EINVAL for a bad name (bad
// usage), -ENODEV for a device that is not there or failed to open.
struct OpenedDevice {
  DevicePtr device;
  ork_device_info info{};
};
Result<OpenedDevice> open_named_device(const std::string& name);

// Windows 1.. of a run over several NPU windows (lib/exec/windows.h): each its Kmd
// (Kmd::open_window) and runner. Declared after the device, so they go before it.
struct Windows {
  std::vector<std::unique_ptr<driver::Kmd>> kmds;
  std::vector<std::unique_ptr<matmul::MatmulRunner>> runners;
};
// Opens windows 1..n-1 of the device `ref` drives (its window 0) into `windows` and
// `ref.more_windows`: "" or the message. Nothing for n = 1 or the cpu device (no windows).
std::string open_windows(int n, Windows& windows, exec::DeviceRef& ref);

// The process's peak resident set so far (getrusage's ru_maxrss, KiB on Linux), bytes.
uint64_t peak_rss_bytes();

// Writes the plan in ork_sched's text format (lib/exec/plan_text.h) to `path`; the message
// when it cannot, else "".
std::string write_plan(const std::string& path, const exec::ExecPlan& plan, const exec::PlanOptions& options,
                       const std::string& model_path);

}  // namespace ork::tools
