// The NPU's address window: every NPU address register (the PC's regcmd address, the CNA's
// feature and weight addresses, the DPU's output address) is 32 bits wide, so every buffer
// the NPU reads or writes must sit below 4 GiB of NPU address space: the IOVA under the
// IOMMU (docs/hardware.md section 5, "All NPU address registers are 32 bits": JAS post 1,
// ORK's trace). The backends refuse a BO the kernel placed above it, the planner sizes its
// plans to it, the fake kernel's IOVA allocator hands out no address past it.
#pragma once

#include <cstdint>

namespace ork::hw {

inline constexpr uint64_t kNpuWindowBytes = uint64_t{1} << 32;  // 4 GiB

// Windows one device may hold at once (docs/kernel-interfaces.md "Windows"): the vendor
// driver's IOMMU domains, RKNPU_MAX_IOMMU_DOMAIN_NUM = 16 (rknpu_drv.h, orangepi-xunlong/
// linux-orangepi commit 57be1fd, drivers/rknpu/include/rknpu_drv.h). Rocket has a window per
// open file and no such bound; libork keeps the same 16 there, so a plan runs on both.
inline constexpr int kMaxNpuWindows = 16;

}  // namespace ork::hw
