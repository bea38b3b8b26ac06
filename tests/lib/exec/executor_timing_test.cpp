// Timing runs and the reader's rate cap (the board-speed measurement of docs/execution.md
// "Measurements"): on the timing-only emulator in timed mode (each job takes its modelled
// board time, no byte moves) a run's device time is at least the modelled time of every
// matmul it ran with one matmul in flight (the jobs then run one after another). With two in
// flight a job's task may start on a core the previous job has left while that job's other
// cores still run (the emulator's per-core timeline, driver/emu/npu/timeline.cpp), so the
// device is busy for less than the sum (97.5-98.5 % of it where the old bound failed, about
// half the runs on an idle 2-vCPU VM): with at most two jobs on it at once, each for its
// modelled time, at least half the sum. Its I/O time is at least the bytes at the capped rate; its slots stay
// within the budget; and a negative rate cap is refused.
#include <gtest/gtest.h>

#include "driver/emu/kernel/fake_kernel.h"
#include "lib/api/device.h"
#include "lib/exec/executor.h"
#include "lib/exec/synthetic.h"
#include "tests/lib/exec/exec_util.h"
#include "driver/emu/kernel/zero_work.h"

namespace ork::exec {
namespace {

std::unique_ptr<ork_device> timing_only() {
  emu::FakeKernelConfig cfg;
  cfg.timing = emu::TimingMode::timed;
  cfg.executor = emu::timing_only_executor();
  auto d = api::open_emulator(driver::KmdKind::rknpu, cfg);
  EXPECT_TRUE(d);
  return d ? std::move(*d) : nullptr;
}

TEST(TimingOnly, DeviceTimeCoversTheModelAndIoTheCap) {
  auto d = synthetic_desc("tiny", 3, matmul::DType::int8);
  ASSERT_TRUE(d);
  const std::string path = testing::scratch("timing.ork");
  ASSERT_TRUE(write_synthetic(path, *d, 5));
  auto model = read_packed(path);
  ASSERT_TRUE(model);
  auto dev = timing_only();
  ASSERT_TRUE(dev);
  for (Order order : {Order::scheduled, Order::fifo, Order::sequential})
  for (int inflight : {1, 2}) {
    PlanOptions po;
    po.tokens = 2;
    po.budget_bytes = 96 * 1024;
    po.order = order;
    auto plan = build_plan(*model, po);
    ASSERT_TRUE(plan) << plan.error().message;
    int64_t modelled = 0;
    uint64_t bytes = 0;
    for (size_t i = 0; i < plan->stream.ops.size(); ++i) {
      if (plan->op_steps[i].kind == Step::compute) modelled += plan->stream.ops[i].cycles;
      if (plan->op_steps[i].kind == Step::load)
        bytes += model->tensor(plan->op_steps[i].layer, plan->op_steps[i].matmul).bytes;
    }
    ASSERT_GT(modelled, 0);
    RunOptions ro;
    ro.io_rate_cap_bytes_per_ns = 0.05;  // 50 MB/s
    ro.inflight = inflight;
    auto run = run_plan(path, *model, *plan, po, api::exec_device(*dev, 3), ro);
    ASSERT_TRUE(run) << run.error().message;
    EXPECT_GE(run->stats.device_ns, modelled / inflight) << order_name(order) << " inflight " << inflight;
    EXPECT_EQ(run->stats.bytes_read, bytes);
    EXPECT_GE(run->stats.io_ns, static_cast<int64_t>(static_cast<double>(bytes) / 0.05) - 1000) << order_name(order);
    EXPECT_LE(run->stats.peak_bytes, po.budget_bytes);
    EXPECT_EQ(run->stats.token_ns.size(), 2u);
  }
  PlanOptions po;
  po.budget_bytes = 96 * 1024;
  auto plan = build_plan(*model, po);
  ASSERT_TRUE(plan);
  RunOptions bad;
  bad.io_rate_cap_bytes_per_ns = -1;
  auto neg = run_plan(path, *model, *plan, po, api::exec_device(*dev, 3), bad);
  ASSERT_FALSE(neg);
  EXPECT_NE(neg.error().message.find("read rate cap"), std::string::npos);
}

}  // namespace
}  // namespace ork::exec
