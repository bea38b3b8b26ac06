// The executor on int4 models packed at their weights' own K-slice widths (lib/exec
// device_calls.cpp): bit for bit against the CPU reference with no int4 cell clamped on the
// emulated NPU, every way a matmul reaches the device (blocking, in flight, a group as one
// chained job), and a file whose width its weights do not allow refused before it runs.
#include <gtest/gtest.h>

#include "driver/emu/kernel/fake_kernel.h"
#include "lib/api/device.h"
#include "lib/exec/executor.h"
#include "lib/exec/synthetic.h"
#include "tests/lib/exec/exec_util.h"
#include "tests/support/device_names.h"

namespace ork::exec {
namespace {

struct Int4ExecCase {
  const char* device;
  int inflight;
  bool groups;
};

std::string int4_exec_case_name(const ::testing::TestParamInfo<Int4ExecCase>& i) {
  return ork::testing::device_test_name(i.param.device) + "_inflight" + std::to_string(i.param.inflight) +
         (i.param.groups ? "_groups" : "");
}

uint64_t clamped(const ork_device& dev) { return dev.fake ? dev.fake->stats().int4_saturated_cells : 0; }

Result<RunOutput> run_int4_exec(const std::string& path, const PackedModel& model, ork_device& dev, const Int4ExecCase& c, int64_t m) {
  PlanOptions o;
  o.m = m;
  o.tokens = 2;
  o.budget_bytes = model.weight_bytes() * 2;
  auto plan = build_plan(model, o);
  if (!plan) return plan.error();
  DeviceRef ref = api::exec_device(dev, 3);
  if (!ref.on_npu()) ref.cores = 1;
  RunOptions ro;
  ro.inflight = c.inflight;
  ro.groups = c.groups;
  return run_plan(path, model, *plan, o, ref, ro);
}

class ExecutorInt4Widths : public ::testing::TestWithParam<Int4ExecCase> {};

// A gate/up/down block of Q4_0-shaped weights: gate and up (K = 256) one full-K task each,
// down (K = 3072) in K-slices of its weights' width, 2.5-3x the floor's 480 and under K, so
// the tasks' K ranges are the file's widths; every output equals the reference.
TEST_P(ExecutorInt4Widths, WideSlicesEqualTheReferenceWithNoCellClamped) {
  const Int4ExecCase& c = GetParam();
  auto d = parse_desc(R"({"name": "mlp", "dtype": "int4", "hidden": 256, "layers": 2, "matmuls": [
      {"name": "gate", "tensor": "g.{layer}", "k": 256, "n": 3072, "input": ["x"]},
      {"name": "up", "tensor": "u.{layer}", "k": 256, "n": 3072, "input": ["x"]},
      {"name": "down", "tensor": "d.{layer}", "k": 3072, "n": 256, "input": ["gate", "up"]}], "output": ["x", "down"]})");
  ASSERT_TRUE(d) << d.error().message;
  const std::string path = testing::scratch("int4_wide.ork");
  ASSERT_TRUE(write_synthetic(path, *d, 5));
  auto model = read_packed(path);
  ASSERT_TRUE(model) << model.error().message;
  for (int l = 0; l < 2; ++l) {
    EXPECT_GE(model->tensor(l, 2).slice_k, 2 * matmul::kInt4SliceK);
    EXPECT_LT(model->tensor(l, 2).slice_k, 3072);
  }
  auto dev = api::open_device(c.device);
  ASSERT_TRUE(dev) << dev.error().message;
  for (int64_t m : {int64_t{1}, int64_t{40}}) {
    const uint64_t before = clamped(**dev);
    auto out = run_int4_exec(path, *model, **dev, c, m);
    ASSERT_TRUE(out) << out.error().message;
    EXPECT_EQ(clamped(**dev), before) << "M = " << m;
    auto want = reference_chain(path, *model, m, 2);
    ASSERT_TRUE(want) << want.error().message;
    const Status same = compare_chains(*model, out->chain, *want);
    EXPECT_TRUE(same) << "M = " << m << ": " << same.error().message;
  }
}

INSTANTIATE_TEST_SUITE_P(Devices, ExecutorInt4Widths,
                         ::testing::Values(Int4ExecCase{"emu", 2, true}, Int4ExecCase{"emu-rocket", 2, true}, Int4ExecCase{"emu", 2, false},
                                           Int4ExecCase{"emu", 1, false}, Int4ExecCase{"cpu", 1, false}),
                         int4_exec_case_name);

// Every tensor written 4096 wide whatever its weights allow (PackWriter's forced width: what a
// tampered or foreign file holds): "wide" (K = 4096 in one task, Q4_0-shaped, 7P + 8Q about
// 90,000) is far over the bound. The run stops naming it before anything runs on it, on
// every device, and nothing is clamped.
TEST(ExecutorInt4Widths, AWidthTheWeightsDoNotAllowIsRefused) {
  auto d = parse_desc(R"({"name": "tampered", "dtype": "int4", "hidden": 4096, "layers": 1, "matmuls": [
      {"name": "wide", "tensor": "w", "k": 4096, "n": 64, "input": ["x"]},
      {"name": "back", "tensor": "b", "k": 64, "n": 4096, "input": ["wide"]}], "output": ["x", "back"]})");
  ASSERT_TRUE(d) << d.error().message;
  const std::string path = testing::scratch("int4_tampered.ork");
  {
    auto w = PackWriter::create(path, *d);
    ASSERT_TRUE(w);
    for (int j = 0; j < 2; ++j) ASSERT_TRUE(w->add(0, j, synthetic_weights(*d, 0, j, 5).data(), {}, matmul::kInt4MaxSliceK));
    ASSERT_TRUE(w->finish());
  }
  auto model = read_packed(path);
  ASSERT_TRUE(model) << model.error().message;  // the header is well formed: the weights tell
  for (const char* name : {"emu", "emu-rocket", "cpu"}) {
    auto dev = api::open_device(name);
    ASSERT_TRUE(dev) << dev.error().message;
    const uint64_t before = clamped(**dev);
    auto out = run_int4_exec(path, *model, **dev, Int4ExecCase{name, 2, true}, 1);
    ASSERT_FALSE(out) << name;
    const std::string& msg = out.error().message;
    EXPECT_NE(msg.find("tensor \"wide\" of layer 0: the file's K-slice width 4096 is wider than its weights allow"),
              std::string::npos) << name << ": " << msg;
    EXPECT_NE(msg.find("column"), std::string::npos) << msg;
    EXPECT_NE(msg.find("repack the model with ork_pack"), std::string::npos) << msg;
    EXPECT_EQ(clamped(**dev), before) << name;
  }
}

}  // namespace
}  // namespace ork::exec
