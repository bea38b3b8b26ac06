// The emulated NPU core: the PC (fetches regcmd, follows task trailers) and the
// CNA -> CORE -> DPU pipeline it triggers. The fake kernel (driver/emu/kernel/fake_kernel.h) calls this;
// semantics in docs/regcmd-contract.md.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "driver/emu/npu/memory.h"
#include "driver/timing/timing_model.h"

namespace ork::emu {

enum class CoreStatus {
  ok,              // every task raised its completion interrupt
  dma_read_error,  // interrupt status bit 12
  dma_write_error, // interrupt status bit 13
  config_error,    // a checked register was inconsistent (logged in `message`)
  wedged,          // a task never completes: the job times out, the core needs a reset
};

struct ChainResult {
  CoreStatus status = CoreStatus::ok;
  uint32_t tasks_done = 0;       // tasks that completed before the chain stopped
  uint32_t int_status = 0;       // last task's interrupt status bits
  double modelled_ns = 0;        // completed tasks alone on one core (timing_model.h task_alone_ns),
                                 // without the per-submit cost: the fake kernel adds it
  std::vector<timing::TaskDemand> demands;  // each completed task's bytes and MACs (timeline.h)
  uint64_t saturated_cells = 0;  // int4 cells clamped to int16 by the chain's tasks (dpu.h)
  std::string message;           // names the task and register on error
};

class RegisterFile;

// What a chain's tasks do: the whole pipeline (the default), or only what the timing model
// needs (each task's registers read and checked, its demand timed; no byte of memory read or
// written, so the results are not computed). Timing-only runs a benchmark at the modelled
// board time without the emulator's arithmetic on the host's CPU (zero_work.h).
enum class ChainWork { compute, timing_only };

// How the PC walks: the vendor kernel programs the first task and the PC follows the
// trailers for `max_tasks` tasks; rocket kicks exactly one task (max_tasks = 1). `regs` is
// the core's register file: the chain starts from what it holds and leaves its writes there
// (a real core keeps them across jobs: driver/emu/npu/prior_state.h).
ChainResult run_chain(const DeviceMemory& mem, RegisterFile& regs, int core, uint64_t first_regcmd_iova,
                      uint32_t first_entries, uint32_t max_tasks, ChainWork work = ChainWork::compute);
// The same on a core fresh from reset (every register zero): for tests of one chain.
ChainResult run_chain(const DeviceMemory& mem, int core, uint64_t first_regcmd_iova,
                      uint32_t first_entries, uint32_t max_tasks, ChainWork work = ChainWork::compute);

}  // namespace ork::emu
