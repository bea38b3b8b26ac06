// The zero-work PC: a ChainExecutor (fake_kernel.h) that reports every task of a chain done
// without reading or writing a byte. What is left of a call on such a kernel is the host's
// own work (plan lookup, packing, ioctls, unpacking) and the bytes libork hands the kernel,
// which is what the host-time benchmarks (ork_bench emu-zero-time, mc_prof --zero-time,
// ork_run --project) and the uAPI-layout tests measure. Results are not computed.
#pragma once

#include <cstdint>

#include "driver/emu/kernel/fake_kernel.h"
#include "driver/emu/npu/pc.h"

namespace ork::emu {

// `int_status`: the interrupt status each chain reports (hw::kIntTaskDone, npu_irq.h: both
// DPU groups done, what the real PC raises at a chain's end); `modelled_ns`: the device time each chain claims.
inline ChainExecutor zero_work_executor(uint32_t int_status = 0, double modelled_ns = 0) {
  return [int_status, modelled_ns](const DeviceMemory&, int, uint64_t, uint32_t, uint32_t max_tasks) {
    ChainResult r;
    r.tasks_done = max_tasks;
    r.int_status = int_status;
    r.modelled_ns = modelled_ns;
    return r;
  };
}

// The timing-only PC: each chain walked and each task timed as run_chain does, on a core
// fresh from reset, with no byte of memory read or written (ChainWork::timing_only). In
// timed mode a job then takes the modelled board time and the host's CPU does only the
// library's work, so a benchmark of overlap sees host and device apart (ork_bench --async).
inline ChainExecutor timing_only_executor() {
  return [](const DeviceMemory& mem, int core, uint64_t iova, uint32_t entries, uint32_t max_tasks) {
    return run_chain(mem, core, iova, entries, max_tasks, ChainWork::timing_only);
  };
}

}  // namespace ork::emu
