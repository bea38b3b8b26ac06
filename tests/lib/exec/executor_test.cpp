// The executor, bit for bit against the CPU reference of the whole chain: tiny models on
// cpu, emu and emu-rocket, every order, decode and prefill, every dtype; and the check
// itself fails when the reference is of another model.
#include <set>

#include <unistd.h>

#include <gtest/gtest.h>

#include "lib/api/device.h"
#include "lib/exec/executor.h"
#include "lib/exec/synthetic.h"
#include "tests/lib/exec/exec_util.h"

namespace ork::exec {
namespace {

struct Case {
  const char* device;
  Order order;
  int64_t m;
  matmul::DType dtype = matmul::DType::int8;
};

std::string case_name(const ::testing::TestParamInfo<Case>& i) {
  std::string d = i.param.device;
  for (auto& c : d)
    if (c == '-') c = '_';
  return d + "_" + order_name(i.param.order) + "_m" + std::to_string(i.param.m) + "_" + dtype_key(i.param.dtype);
}

struct Model {
  std::string path;
  PackedModel packed;
};

Model make_model(matmul::DType dtype, int layers, uint64_t seed, const std::string& name) {
  auto d = synthetic_desc("tiny", layers, dtype);
  EXPECT_TRUE(d);
  Model m{testing::scratch(name), {}};
  EXPECT_TRUE(write_synthetic(m.path, *d, seed));
  auto p = read_packed(m.path);
  EXPECT_TRUE(p) << p.error().message;
  m.packed = *p;
  return m;
}

Result<RunOutput> run(const Model& model, const PlanOptions& o, ork_device& dev) {
  auto plan = build_plan(model.packed, o);
  if (!plan) return plan.error();
  DeviceRef ref{dev.kmd.get(), dev.runner.get(), dev.kmd ? 3 : 1};
  return run_plan(model.path, model.packed, *plan, o, ref);
}

class ExecutorBitExact : public ::testing::TestWithParam<Case> {};

TEST_P(ExecutorBitExact, EveryMatmulOutputEqualsTheReference) {
  const Case& c = GetParam();
  const Model model = make_model(c.dtype, 5, 3, std::string("exec_") + dtype_key(c.dtype) + ".ork");
  auto dev = api::open_device(c.device);
  ASSERT_TRUE(dev) << dev.error().message;
  PlanOptions o;
  o.m = c.m;
  o.tokens = 3;
  o.order = c.order;
  o.budget_bytes = 96 << 10;  // under the model's 5 x 53 KiB
  auto out = run(model, o, **dev);
  ASSERT_TRUE(out) << out.error().message;
  EXPECT_LE(out->stats.peak_bytes, o.budget_bytes);
  EXPECT_EQ(out->stats.loads, 3u * 5u * 7u);
  EXPECT_EQ(out->stats.bytes_read, 3 * model.packed.weight_bytes());
  EXPECT_EQ(out->stats.token_ns.size(), 3u);
  auto want = reference_chain(model.path, model.packed, c.m, 3);
  ASSERT_TRUE(want) << want.error().message;
  const Status same = compare_chains(model.packed, out->chain, *want);
  EXPECT_TRUE(same) << same.error().message;
  // The outputs carry information: not all zero or saturated.
  const auto& y = want->outputs.back();
  std::set<int> distinct(y.i8.begin(), y.i8.end());
  std::set<uint16_t> distinct16(y.f16.begin(), y.f16.end());
  EXPECT_GT(distinct.size() + distinct16.size(), c.dtype == matmul::DType::int4 ? 5u : 16u);
  for (uint16_t h : y.f16) EXPECT_NE(h & 0x7c00, 0x7c00) << "an fp16 output is inf or NaN";
}

INSTANTIATE_TEST_SUITE_P(
    Orders, ExecutorBitExact,
    ::testing::Values(Case{"cpu", Order::scheduled, 1}, Case{"cpu", Order::fifo, 1}, Case{"cpu", Order::sequential, 1},
                      Case{"emu", Order::scheduled, 1}, Case{"emu", Order::fifo, 1}, Case{"emu", Order::sequential, 1},
                      Case{"emu-rocket", Order::scheduled, 1}, Case{"emu-rocket", Order::fifo, 1},
                      Case{"emu-rocket", Order::sequential, 1}, Case{"cpu", Order::scheduled, 64},
                      Case{"emu", Order::scheduled, 64}, Case{"emu-rocket", Order::fifo, 128},
                      Case{"emu", Order::sequential, 64}, Case{"emu", Order::scheduled, 1, matmul::DType::int4},
                      Case{"emu", Order::scheduled, 1, matmul::DType::fp16},
                      Case{"emu-rocket", Order::fifo, 64, matmul::DType::fp16},
                      Case{"cpu", Order::scheduled, 1, matmul::DType::fp16},
                      Case{"cpu", Order::fifo, 1, matmul::DType::int4}),
    case_name);

TEST(ExecutorCheck, AnotherModelsReferenceDoesNotMatch) {
  const Model a = make_model(matmul::DType::int8, 2, 3, "check_a.ork");
  const Model b = make_model(matmul::DType::int8, 2, 4, "check_b.ork");
  auto dev = api::open_device("emu");
  ASSERT_TRUE(dev);
  PlanOptions o;
  o.budget_bytes = 64 << 10;
  o.tokens = 2;
  auto out = run(a, o, **dev);
  ASSERT_TRUE(out) << out.error().message;
  auto want = reference_chain(b.path, b.packed, 1, 2);
  ASSERT_TRUE(want);
  const Status same = compare_chains(a.packed, out->chain, *want);
  ASSERT_FALSE(same);
  EXPECT_NE(same.error().message.find("token 0: layer 0 matmul \"q\" differs"), std::string::npos) << same.error().message;
}

TEST(ExecutorErrors, TruncatedAfterOpeningIsAnError) {
  Model a = make_model(matmul::DType::int8, 2, 3, "trunc.ork");
  ASSERT_EQ(::truncate(a.path.c_str(), static_cast<off_t>(a.packed.file_bytes - 8192)), 0);
  auto dev = api::open_device("emu");
  ASSERT_TRUE(dev);
  PlanOptions o;
  o.budget_bytes = 64 << 10;
  auto out = run(a, o, **dev);
  ASSERT_FALSE(out);
  EXPECT_NE(out.error().message.find("end of file"), std::string::npos) << out.error().message;
  // The device stays usable.
  Model b = make_model(matmul::DType::int8, 2, 3, "after_trunc.ork");
  EXPECT_TRUE(run(b, o, **dev));
}

}  // namespace
}  // namespace ork::exec
