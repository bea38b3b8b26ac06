// A task's demand on the timing model (driver/timing/timing_model.h) as the emulated NPU
// reads it from the registers (task_config.h task_demand), alone and through a real task in
// the PC. The model itself: tests/driver/timing.
#include <chrono>

#include "driver/common/cbuf_limits.h"
#include "driver/emu/npu/task_config.h"
#include "driver/timing/timing_model.h"
#include "tests/driver/emu/npu/npu_fixture.h"

namespace ork::emu::testing {
namespace {

TEST(TimingModel, DemandComesFromTheRegisters) {
  TaskConfig cfg;
  cfg.type = NpuType::fp16;
  cfg.elem_bits = 16;
  cfg.mc = 8, cfg.kt = 1024, cfg.cols = 48, cfg.b_bytes = 48 * 1024 * 2;
  cfg.fp16_out = true;
  const timing::TaskDemand d = task_demand(cfg);
  EXPECT_EQ(d.weight_bytes, 98304.0);
  EXPECT_EQ(d.feature_bytes, 8.0 * 1024 * 2);
  EXPECT_EQ(d.output_bytes, 8.0 * 48 * 2);  // fp16 output
  EXPECT_EQ(d.macs, 8.0 * 1024 * 48);
  EXPECT_EQ(d.serial_macs, 0.0);  // 8 rows <= R(1024) = 64
  EXPECT_EQ(d.macs_per_cycle, 512.0);
  EXPECT_DOUBLE_EQ(timing::compute_ns(d), 8.0 * 1024 * 48 / 512);
}

// A real task through the emulated PC: the demand is read from the registers it ran with.
TEST(TimingModel, ChainReportsEachTasksDemand) {
  Device dev;
  Bo& A = dev.alloc(64 * 256);
  Bo& B = dev.alloc(256 * 96);
  Bo& C = dev.alloc(64 * 96 * 4);
  TaskSpec t;
  t.mc = 64, t.kt = 256, t.nt = 96;
  t.a = A.iova, t.b = B.iova, t.c = C.iova;
  t.a_surf = t.c_surf = 64;
  k_reduction_banks(t);
  const ChainResult r = run_one(dev, one_task(t));
  ASSERT_EQ(r.status, CoreStatus::ok) << r.message;
  ASSERT_EQ(r.demands.size(), 1u);
  const timing::TaskDemand& d = r.demands[0];
  EXPECT_EQ(d.weight_bytes, 256.0 * 96);
  EXPECT_EQ(d.feature_bytes, 64.0 * 256);
  EXPECT_EQ(d.output_bytes, 64.0 * 96 * 4);
  EXPECT_EQ(d.macs, 64.0 * 256 * 96);
  // Weight-bound (24576 B of weights take longer than 64*256*96 / 1024 = 1536 ns of MACs).
  ASSERT_GT(24576 / timing::kCoreDmaBytesPerNs, 1536.0);
  EXPECT_NEAR(r.modelled_ns, timing::kTaskNs + 24576 / timing::kCoreDmaBytesPerNs + (16384 + 24576) / timing::kCoreDmaBytesPerNs, 1e-6);
}

}  // namespace
}  // namespace ork::emu::testing
