// The execution plan (docs/execution.md "The plan"): a run of `tokens` tokens through a
// packed model becomes a sched::Stream — per tensor and token a load (a DMA op: its 4 KiB
// rounded bytes at the disk's rate), a program (the matmul, at the timing model's cycles)
// and its wait; weight buffers in the scheduled memory (the budget), activations outside
// it — and the list scheduler of lib/sched chooses the order, and so how far ahead the
// loads run. Units: 1 cycle = 1 ns. Then every weight buffer gets a slot: a slot is
// reused only after the wait of the last program that read its previous tensor.
#pragma once

#include <cstdint>
#include <span>
#include <utility>
#include <string>
#include <vector>

#include "driver/common/npu_cores.h"
#include "driver/common/npu_window.h"
#include "driver/common/result.h"
#include "lib/exec/fusion.h"
#include "lib/exec/pack_file.h"
#include "lib/sched/chooser.h"
#include "lib/sched/graph.h"
#include "lib/sched/stream.h"

namespace ork::exec {

enum class Order {
  scheduled,   // list schedule: the fifo one, or the critical-path one when that is priced faster
  fifo,        // list schedule, input-order priority
  sequential,  // the input order: load a tensor, compute with it, then the next
};
const char* order_name(Order order);
Result<Order> parse_order(const std::string& name);

struct PlanOptions {
  int64_t m = 1;              // rows per token step (1 decode, 64..512 prefill)
  int64_t tokens = 1;
  uint64_t budget_bytes = 0;  // weight slots, in bytes of host RAM
  // The NPU address window the slots (device buffers) must fit in, bytes: 4 GiB on the
  // RK3588 (driver/common/npu_window.h); a smaller one leaves room for other users of it.
  uint64_t window_bytes = hw::kNpuWindowBytes;
  // NPU windows the slots may span, each of window_bytes (windows.h: more than one holds a
  // resident model past 4 GiB, a layer whole in one window; 1..hw::kMaxNpuWindows).
  int windows = 1;
  Order order = Order::scheduled;
  int cores = hw::kNpuCores;  // NPU cores one matmul is planned on
  double disk_bytes_per_ns = 1.2;  // the loads' rate (GB/s); docs/io.md measured ~1.2 GB/s here
  uint32_t io_align = 4096;   // O_DIRECT alignment of the file (slots are multiples of it)
  // Keep tensors resident across tokens (pinned_tensors below): each is read from the file
  // once, by token 0, and every token's matmul reads that slot. false: every token reads
  // every tensor.
  bool pin = true;
  // Run the groups whose board plan with `fuse` is fused as one matmul (fusion.h): their
  // members' weights in one buffer; the plan the projection prices (project.h). false
  // (ork_run --no-fuse): every tensor its own buffer, every group unfused.
  bool fuse = true;
};

struct Step {
  enum Kind { load, compute, wait } kind = load;
  int token = 0, layer = 0, matmul = 0;
  int slot = -1;  // the weight's slot
  uint64_t offset = 0;  // a fused member's range in the stream (Fusion::offset); its reads: Fusion::reads
};

struct ExecPlan {
  sched::Stream stream;
  std::vector<Step> op_steps;      // per stream op
  std::vector<int> load_of;        // per stream op: the load that wrote its weights (a pinned
                                   // tensor's later tokens read token 0's load)
  int64_t computes = 0;            // matmuls (start ops) in the stream
  std::vector<bool> pinned;        // per (layer * matmuls + matmul): stays across tokens
  uint64_t pinned_bytes = 0;       // their slot bytes
  std::vector<int> order;          // the chosen order of stream ops
  std::vector<uint64_t> slot_bytes;
  uint64_t slot_total = 0;         // bytes of all slots: the run's weight memory
  int64_t predicted_ns = 0;        // simulate_order of the chosen order
  int64_t lower_bound_ns = 0;
  int64_t cap_bytes = 0;           // the cap the list scheduler ran with
  Order order_kind = Order::scheduled;
  std::string policy;              // "critical_path", "fifo", "input"
  Fusion fusion;                   // the groups run fused, their members' places in one buffer
};

// The modelled device time of one matmul (the timing model, driver/timing/timing_model.h: per-core task demands on shared DRAM, plus one submit), ns.
// `slice_k`: int4's K-slice width (matmul::PlanOptions::slice_k; 0 = the dtype's).
int64_t modelled_matmul_ns(matmul::DType dtype, int64_t m, int64_t k, int64_t n, int cores, int64_t slice_k = 0);
// The same for several matmuls (K, N each) in one submit: their tasks one after another on
// each core, one submit cost per core (a chained batch job, docs/execution.md "Projection").
// `slice_k`: per matmul as above (empty: the dtype's for all).
int64_t modelled_group_ns(matmul::DType dtype, int64_t m, std::span<const std::pair<int64_t, int64_t>> shapes,
                          int cores, std::span<const int64_t> slice_k = {});

// What the slots may take: the budget (host RAM) and the windows (NPU addresses) both hold
// them, so the smaller of the budget and windows x window_bytes, in bytes.
uint64_t slot_limit(const PlanOptions& options);

// The residency rule (as the board projection's, project.h): with more than one token, every
// tensor stays when the whole model fits the budget; otherwise room for two of the largest
// layers is kept for streaming and tensors are pinned in layer order while the rest of the
// budget holds them. Slot bytes (`align`-rounded), per (layer * matmuls + matmul).
std::vector<bool> pinned_tensors(const PackedModel& model, const PlanOptions& options);

// Checks the budget and the window (each >= the largest layer, named), builds the stream, schedules and assigns slots.
Result<ExecPlan> build_plan(const PackedModel& model, const PlanOptions& options);

// Slots for plan.order (lib/sched/slots.h on the stream's graph): a load takes a free slot of
// its size (else the smallest larger free one, else a new slot); the wait of the last program
// that reads it frees it. Fills slot_bytes, slot_total and every op step's slot.
void assign_slots(ExecPlan& plan, const sched::Graph& graph);

}  // namespace ork::exec
