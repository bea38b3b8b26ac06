// Helpers for the driver tests: a recording stand-in for the PC (so the fake kernel's own
// mechanics can be checked call by call), a backend opened over a fake kernel, and raw-uAPI
// shorthands over any Os.
#pragma once

#include <gtest/gtest.h>
#include <sys/mman.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "driver/common/npu_irq.h"
#include "driver/emu/kernel/fake_kernel.h"
#include "driver/kmd/kmd.h"
#include "driver/os/ioctl.h"
#include "uapi/rknpu_ioctl.h"
#include "uapi/rocket_accel.h"

namespace ork::testing {

// One run_chain call as the kernel made it.
struct ChainCall {
  int core;
  uint64_t iova;
  uint32_t entries;
  uint32_t max_tasks;
  friend bool operator==(const ChainCall&, const ChainCall&) = default;
};

// Stands in for the PC: records each call, checks that the first regcmd is inside a BO (DMA
// error otherwise, like the real PC), completes every task, models 1000 ns per task.
struct Recorder {
  std::vector<ChainCall> calls;
  emu::ChainExecutor executor() {
    return [this](const emu::DeviceMemory& mem, int core, uint64_t iova, uint32_t entries,
                  uint32_t max_tasks) {
      calls.push_back({core, iova, entries, max_tasks});
      emu::ChainResult r;
      if (!mem.span(iova, size_t{entries} * 8)) {
        r.status = emu::CoreStatus::dma_read_error;
        r.int_status = 1u << 12;
        return r;
      }
      r.tasks_done = max_tasks;
      r.int_status = ork::hw::kIntTaskDone;
      r.modelled_ns = 1000.0 * max_tasks;
      return r;
    };
  }
};

inline emu::FakeKernelConfig recorded(Recorder& rec) {
  emu::FakeKernelConfig cfg;
  cfg.executor = rec.executor();
  return cfg;
}

// A backend of `kind` over the fake kernel `k`, at the node each kernel interface has on a
// board (rknpu /dev/dri/card1, rocket /dev/accel/accel0); nullptr, with a failed
// expectation naming the error, when it does not open.
inline std::unique_ptr<driver::Kmd> open_kmd(emu::FakeKernel& k, driver::KmdKind kind) {
  auto r = kind == driver::KmdKind::rknpu ? driver::open_rknpu(k, "/dev/dri/card1")
                                          : driver::open_rocket(k, "/dev/accel/accel0");
  EXPECT_TRUE(r.ok()) << r.error().message;
  return r.ok() ? std::move(r.value()) : nullptr;
}

// A raw rknpu BO: MEM_CREATE (48-byte), MEM_MAP, mmap.
struct RawRknpuBo {
  rknpu_mem_create create{};
  uint8_t* map = nullptr;
};

inline RawRknpuBo raw_rknpu_bo(driver::Os& os, int fd, uint64_t size, uint32_t flags) {
  RawRknpuBo bo;
  bo.create.size = size;
  bo.create.flags = flags;
  EXPECT_EQ(driver::ioctl_retry(os, fd, DRM_IOCTL_RKNPU_MEM_CREATE, &bo.create), 0);
  rknpu_mem_map map{.handle = bo.create.handle};
  EXPECT_EQ(driver::ioctl_retry(os, fd, DRM_IOCTL_RKNPU_MEM_MAP, &map), 0);
  int err = 0;
  void* p = os.mmap(nullptr, bo.create.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
                    static_cast<off_t>(map.offset), &err);
  EXPECT_NE(p, nullptr) << "mmap: " << err;
  bo.map = static_cast<uint8_t*>(p);
  return bo;
}

}  // namespace ork::testing
