// The PC (program controller) of one emulated core: fetches a task's regcmd through
// DeviceMemory, writes every entry into the register file, runs the pipeline when the
// op_en entry arrives, then follows the task's trailer to the next task.
// Rules: docs/regcmd-contract.md section 5, docs/emulator.md "The PC".
#include "driver/emu/npu/pc.h"

#include <fmt/format.h>

#include <cstring>
#include <memory>
#include <vector>

#include "driver/emu/npu/regfile.h"
#include "driver/emu/npu/task.h"
#include "driver/os/debug.h"
#include "driver/regcmd/regcmd.h"
#include "driver/regs/npu_regs.h"

namespace ork::emu {
namespace {

struct TaskFetch {
  std::vector<uint64_t> entries;
  bool ok = false;
};

TaskFetch fetch(const DeviceMemory& mem, uint64_t iova, uint32_t entries) {
  TaskFetch f;
  f.entries.resize(entries);
  f.ok = mem.read(iova, f.entries.data(), size_t{entries} * sizeof(uint64_t));
  return f;  // regcmd entries are little-endian u64, as is every host we build for
}

// What one task leaves behind for the PC: whether op_en fired, the pipeline's outcome and
// the chain pointer its trailer wrote (0 when it wrote none: the last task).
struct TaskRun {
  bool triggered = false;
  TaskOutcome outcome;
  uint64_t next_iova = 0;
  uint32_t next_entries = 0;
};

// A register entry must carry its block's target; returns an error message or "".
std::string check_target(const regcmd::Entry& e, size_t index) {
  const regs::BlockInfo* block = regs::block_for_offset(e.reg);
  if (block == nullptr) {
    return fmt::format("entry {}: register 0x{:04x} is in no known block (target 0x{:04x})",
                       index, e.reg, e.target);
  }
  if (block->target != e.target) {
    return fmt::format("entry {}: register 0x{:04x} belongs to {} (target 0x{:04x}) but the "
                       "entry names target 0x{:04x}",
                       index, e.reg, block->name, block->target, e.target);
  }
  return {};
}

// ORK_DEBUG=regcmd: every entry of every fetched task, as ork_regdump prints it.
void log_entries(int core, uint32_t task, std::span<const uint64_t> raw) {
  if (!driver::debug_enabled("regcmd")) return;
  const auto writes = regcmd::decode_buffer(raw);
  for (size_t i = 0; i < writes.size(); ++i)
    driver::debug_line("regcmd", fmt::format("core {} task {} #{:3} {}", core, task, i, regcmd::format(writes[i])));
}

TaskRun run_task(const DeviceMemory& mem, RegisterFile& regs, std::span<const uint64_t> raw, ChainWork work) {
  TaskRun run;
  bool wrote_base = false, wrote_amount = false;
  for (size_t i = 0; i < raw.size(); ++i) {
    const regcmd::Entry e = regcmd::decode(raw[i]);
    // Padding and the trailer's marker (regcmd.h) write no register.
    if (e.target == regcmd::kTargetPadding || e.target == regcmd::kTargetTrailerMarker) continue;
    if (e.target == regs::target_of(regs::Block::global) && e.reg == regs::GLOBAL_OPERATION_ENABLE) {
      run.triggered = true;
      run.outcome = execute_op_en(regs, mem, e.value, work);
      if (run.outcome.status != CoreStatus::ok) return run;
      continue;
    }
    if (std::string err = check_target(e, i); !err.empty()) {
      run.outcome = {CoreStatus::config_error, kIntDmaReadError, std::move(err)};
      return run;
    }
    regs.set(e.reg, e.value);
    if (e.reg == regs::PC_BASE_ADDRESS) wrote_base = true;
    if (e.reg == regs::PC_REGISTER_AMOUNTS) wrote_amount = true;
  }
  if (wrote_base) {
    const auto base = regs.view<regs::PcBaseAddress>();
    run.next_iova = uint64_t{base.pc_source_addr} << 4;  // PC_SOURCE_ADDR is bits 31:4
  }
  if (wrote_amount) {
    const auto amount = regs.view<regs::PcRegisterAmounts>();
    run.next_entries = (amount.pc_data_amount + 1) * 2;  // 128-bit units minus one
  }
  return run;
}

}  // namespace

TaskOutcome execute_op_en(const RegisterFile& regs, const DeviceMemory& mem, uint32_t op_en, ChainWork work) {
  // The DPU raises the completion interrupt; it needs the CNA and CORE feeding it. Without
  // all three no interrupt ever comes: the job times out (docs/emulator.md "op_en").
  constexpr uint32_t kNeeded = regcmd::kOpEnCnaCoreDpu;
  if ((op_en & kNeeded) != kNeeded) {
    return {CoreStatus::wedged, 0,
            fmt::format("op_en = 0x{:x} lacks CNA|CORE|DPU (0x{:x}): no completion interrupt",
                        op_en, kNeeded)};
  }
  return execute_task(regs, mem, work);
}

ChainResult run_chain(const DeviceMemory& mem, int core, uint64_t first_regcmd_iova,
                      uint32_t first_entries, uint32_t max_tasks, ChainWork work) {
  auto regs = std::make_unique<RegisterFile>();  // 64 KiB: on the heap, zero = after reset
  return run_chain(mem, *regs, core, first_regcmd_iova, first_entries, max_tasks, work);
}

ChainResult run_chain(const DeviceMemory& mem, RegisterFile& regs, int core, uint64_t first_regcmd_iova,
                      uint32_t first_entries, uint32_t max_tasks, ChainWork work) {
  ChainResult result;
  uint64_t iova = first_regcmd_iova;
  uint32_t entries = first_entries;
  while (result.tasks_done < max_tasks) {
    const uint32_t t = result.tasks_done;
    if (entries == 0) {
      result.status = CoreStatus::config_error;
      result.int_status = kIntDmaReadError;
      result.message = fmt::format("core {} task {}: regcmd of 0 entries", core, t);
      return result;
    }
    TaskFetch f = fetch(mem, iova, entries);
    if (!f.ok) {
      result.status = CoreStatus::dma_read_error;
      result.int_status = kIntDmaReadError;
      result.message = fmt::format("core {} task {}: regcmd fetch of {} entries at IOVA 0x{:x} "
                                   "is outside every BO", core, t, entries, iova);
      return result;
    }
    log_entries(core, t, f.entries);
    TaskRun run = run_task(mem, regs, f.entries, work);
    if (!run.triggered && run.outcome.status == CoreStatus::ok) {
      run.outcome = {CoreStatus::wedged, 0, "no op_en entry: the task never starts"};
    }
    result.int_status = run.outcome.int_status;
    if (run.outcome.status != CoreStatus::ok) {
      result.status = run.outcome.status;
      result.message = fmt::format("core {} task {} (regcmd IOVA 0x{:x}): {}", core, t, iova,
                                   run.outcome.message);
      driver::debug_log("emu", "{}", result.message);
      return result;
    }
    ++result.tasks_done;
    result.demands.push_back(run.outcome.demand);
    if (run.outcome.saturated_cells != 0) {
      result.saturated_cells += run.outcome.saturated_cells;
      driver::debug_log("emu", "core {} task {}: {} int4 output cells saturated to int16", core, t,
                        run.outcome.saturated_cells);
    }
    result.modelled_ns += timing::task_alone_ns(run.outcome.demand);
    if (run.next_iova == 0) break;  // the last task of the chain wrote no pointer
    iova = run.next_iova;
    entries = run.next_entries;
  }
  return result;
}

}  // namespace ork::emu
