// The NPU's interrupt status / mask bits (RKT-M registers.xml; docs/hardware.md sections 2
// and 3). A task completes with the DPU's pair of groups (int_mask 0x300, VND rknpu_ioctl.h);
// the vendor driver's irq handler folds bits into pairs and needs the result to equal
// int_mask exactly (VND rknpu_job.c), so a mask names whole pairs. The kernel drivers
// (driver/kmd), the emulated PC (driver/emu/npu) and the fake kernel all use these.
#pragma once

#include <cstdint>

namespace ork::hw {

inline constexpr uint32_t kIntDpuGroup0 = 1u << 8;
inline constexpr uint32_t kIntDpuGroup1 = 1u << 9;
inline constexpr uint32_t kIntDmaReadError = 1u << 12;
inline constexpr uint32_t kIntDmaWriteError = 1u << 13;
// A task is done when both DPU groups are (0x300): the mask every task is submitted with.
inline constexpr uint32_t kIntTaskDone = kIntDpuGroup0 | kIntDpuGroup1;

}  // namespace ork::hw
