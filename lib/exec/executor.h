// The executor (docs/execution.md "Execution"): runs an ExecPlan for real. One I/O thread
// reads each tensor from the packed file into its slot (io_uring with O_DIRECT and the slots
// registered as fixed buffers, else the fallbacks of lib/io), in the plan's order of loads;
// the calling thread walks the plan's order, and a device thread runs each matmul as soon as
// its weights are there and its inputs computed, with up to RunOptions::inflight of them
// handed to the NPU at once (completed in submission order). Slots are device buffers (BOs) on an NPU or the emulated
// one, host memory on the cpu backend; all of them are allocated once, before the run, and
// their total never exceeds the budget. A load into a slot is issued only when the order
// reaches it, which is after the wait of the last program that read the slot's previous
// tensor (exec_plan.h), so a slot is reused only when the schedule frees it.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "driver/common/result.h"
#include "driver/kmd/kmd.h"
#include "lib/exec/pack_file.h"
#include "lib/exec/exec_plan.h"
#include "lib/exec/chain_reference.h"
#include "lib/exec/trace.h"
#include "lib/io/file_os.h"
#include "lib/matmul/run.h"

namespace ork::exec {

// Where the matmuls run, as the device's backend describes it (lib/api's
// Backend::exec_device): an NPU (or emulated NPU) through its kernel interface and runner, or
// the cpu (the lib/ref fast path on weights unpacked from the slot). The kind is said, not
// inferred from a null kernel interface.
struct DeviceRef {
  enum class Kind { cpu, npu };
  Kind kind = Kind::cpu;
  driver::Kmd* kmd = nullptr;              // npu only
  matmul::MatmulRunner* runner = nullptr;  // npu only
  int cores = 3;
  // A plan over several NPU windows (PlanOptions::windows, windows.h): window w > 0 is
  // more_windows[w - 1], its own Kmd (Kmd::open_window) and runner; window 0 is kmd, runner.
  std::vector<std::pair<driver::Kmd*, matmul::MatmulRunner*>> more_windows;

  static DeviceRef cpu(int cores) { return DeviceRef{Kind::cpu, nullptr, nullptr, cores, {}}; }
  static DeviceRef npu(driver::Kmd& kmd, matmul::MatmulRunner& runner, int cores) {
    return DeviceRef{Kind::npu, &kmd, &runner, cores, {}};
  }
  bool on_npu() const { return kind == Kind::npu; }
  DeviceRef window(int w) const {
    return w == 0 ? DeviceRef{kind, kmd, runner, cores, {}}
                  : DeviceRef{kind, more_windows[static_cast<size_t>(w - 1)].first,
                              more_windows[static_cast<size_t>(w - 1)].second, cores, {}};
  }
};

struct RunStats {
  std::vector<int64_t> token_ns;  // per token: from the previous token's output to this one's
  int64_t wall_ns = 0;
  int64_t io_ns = 0;              // the I/O thread reading (sum over reads)
  int64_t device_ns = 0;          // matmul calls (submit, device, wait, pack/unpack)
  int64_t wait_ns = 0;            // the compute thread waiting for a read
  uint64_t loads = 0, hits = 0;   // hit: the weights were there when the matmul wanted them
  uint64_t bytes_read = 0;
  int max_inflight = 0;           // most jobs on the device at once (observed)
  int max_group = 0;              // most matmuls in one job handed to the NPU (a chained group)
  int64_t stacked_matmuls = 0;    // matmuls run with their int4 K-slices stacked (matmul::Plan::stacked)
  int max_pieces = 0;             // most row pieces a group ran in (row_pieces, board_plan.h)
  // Groups launched piece by piece as the previous group's pieces were unpacked (across the
  // groups of a layer and into the next layer; docs/execution.md "Host and device overlapped").
  int64_t pipelined = 0;
  int64_t fused_groups = 0;       // group jobs run as one fused matmul (fusion.h; PlanOptions::fuse)
  // The plan's fused groups, each token's (ExecPlan::fusion): every one runs as a fused group
  // job (fused_groups) or, where the run's options make every matmul run alone (one in flight,
  // the cpu backend, group jobs off, a plan that does not chain), its members each run the
  // fused matmul alone (fused_alone, with the reason). fused_groups + fused_alone = fused_planned.
  int64_t fused_planned = 0;
  int64_t fused_alone = 0;
  std::string fused_alone_reason;
  // With RunOptions::count_cpu: the device thread's CPU time (plan lookups, packing A, the
  // submits, unpacking and routing C; helper threads included, lib/exec/cpu_clock.h).
  int64_t device_cpu_ns = 0;
  uint64_t peak_bytes = 0;        // slot memory held (all slots; allocated once)
  uint64_t budget_bytes = 0;
  int windows = 1;                // NPU windows the slots spread over (windows.h)
  std::string engine;             // "uring", "pread", "mmap"
  bool direct = false, registered = false;
  std::vector<std::string> fallbacks;
  double hit_rate() const { return loads == 0 ? 0.0 : static_cast<double>(hits) / static_cast<double>(loads); }
};

struct RunOutput {
  ChainResult chain;
  RunStats stats;
  std::vector<TraceEvent> trace;
};

struct RunOptions {
  bool want_trace = false;
  // Token 0's input (m x hidden); null = the synthetic token_input(0). Later tokens add
  // the previous token's output to their synthetic input (synthetic.h).
  const Activation* first_input = nullptr;
  std::function<void(int64_t done, int64_t total)> progress;  // after each matmul
  double io_rate_cap_bytes_per_ns = 0;  // > 0: the reader no faster than this (lib/io/tensor_reader.h)
  // The file system the tensor reader reads the model through (lib/io/file_os.h); null =
  // the real one. Tests pass a FileOs that injects faults; it must outlive the run.
  io::FileOs* file_os = nullptr;
  // Matmuls handed to the NPU at once (1..8): with 2 or more the device thread packs and
  // submits the next matmul of a layer that does not read the running one (k and v beside
  // q; up beside gate) while the NPU runs it (lib/matmul/job.h). 1: each matmul is waited before
  // the next is prepared. The cpu backend always uses 1.
  int inflight = 2;
  // With inflight >= 2 on an NPU: each group of a layer's matmuls that read the same input
  // (q/k/v, o, gate/up, down) runs as its board plan (board_plan.h), one chained job whose
  // tasks sit on the cores the list scheduler chose (group_job.h), the plan the board
  // projection prices. false: each matmul its own job, split over all cores.
  bool groups = true;
  bool count_cpu = false;  // RunStats::device_cpu_ns measured (a thread clock read per call)
};

// Runs the plan's tokens through the model in `path` on `device`.
Result<RunOutput> run_plan(const std::string& path, const PackedModel& model, const ExecPlan& plan,
                           const PlanOptions& plan_options, DeviceRef device, const RunOptions& options = {});

}  // namespace ork::exec
