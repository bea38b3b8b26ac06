// The executor, bit for bit against the CPU reference of the whole chain: tiny models on
// cpu, emu and emu-rocket, every order, decode and prefill, every dtype; and the check
// itself fails when the reference is of another model; the int4 reference is the int4
// oracle's bytes and refuses values outside -8..7, the fp16 reference the oracle's bytes.
#include <cstring>
#include <new>
#include <random>
#include <set>

#include <unistd.h>

#include <gtest/gtest.h>

#include "driver/common/fp16.h"
#include "driver/emu/kernel/fake_kernel.h"
#include "driver/emu/kernel/fault_spec.h"
#include "lib/api/device.h"
#include "lib/exec/executor.h"
#include "lib/exec/synthetic.h"
#include "lib/ref/oracle.h"
#include "tests/lib/exec/exec_util.h"
#include "tests/support/device_names.h"

namespace ork::exec {
namespace {

struct ExecutorCase {
  const char* device;
  Order order;
  int64_t m;
  matmul::DType dtype = matmul::DType::int8;
  int inflight = 2;  // RunOptions::inflight (the default)
};

std::string executor_case_name(const ::testing::TestParamInfo<ExecutorCase>& i) {
  return ork::testing::device_test_name(i.param.device) + "_" + order_name(i.param.order) + "_m" +
         std::to_string(i.param.m) + "_" + dtype_key(i.param.dtype) +
         (i.param.inflight == 2 ? "" : "_inflight" + std::to_string(i.param.inflight));
}

struct ExecutorModel {
  std::string path;
  PackedModel packed;
};

ExecutorModel make_executor_model(matmul::DType dtype, int layers, uint64_t seed, const std::string& name) {
  auto d = synthetic_desc("tiny", layers, dtype);
  EXPECT_TRUE(d);
  ExecutorModel m{testing::scratch(name), {}};
  EXPECT_TRUE(write_synthetic(m.path, *d, seed));
  auto p = read_packed(m.path);
  EXPECT_TRUE(p) << p.error().message;
  m.packed = *p;
  return m;
}

Result<RunOutput> run_executor(const ExecutorModel& model, const PlanOptions& o, ork_device& dev, int inflight = 2, bool groups = true) {
  auto plan = build_plan(model.packed, o);
  if (!plan) return plan.error();
  DeviceRef ref = api::exec_device(dev, 3);
  if (!ref.on_npu()) ref.cores = 1;
  RunOptions ro;
  ro.inflight = inflight;
  ro.groups = groups;
  return run_plan(model.path, model.packed, *plan, o, ref, ro);
}

class ExecutorBitExact : public ::testing::TestWithParam<ExecutorCase> {};

TEST_P(ExecutorBitExact, EveryMatmulOutputEqualsTheReference) {
  const ExecutorCase& c = GetParam();
  const ExecutorModel model = make_executor_model(c.dtype, 5, 3, std::string("exec_") + dtype_key(c.dtype) + ".ork");
  auto dev = api::open_device(c.device);
  ASSERT_TRUE(dev) << dev.error().message;
  PlanOptions o;
  o.m = c.m;
  o.tokens = 3;
  o.order = c.order;
  o.budget_bytes = 96 << 10;  // under the model's 5 x 53 KiB
  auto out = run_executor(model, o, **dev, c.inflight);
  ASSERT_TRUE(out) << out.error().message;
  EXPECT_LE(out->stats.peak_bytes, o.budget_bytes);
  // One at a time on cpu, in the sequential order and when asked; never more than asked.
  const bool one = !api::exec_device(**dev, 3).on_npu() || c.order == Order::sequential || c.inflight == 1;
  if (one) {
    EXPECT_EQ(out->stats.max_inflight, 1);
  }
  EXPECT_LE(out->stats.max_inflight, c.inflight);
  // Every tensor read by every token, except those pinned (int4's smaller layers leave room
  // beside two streaming layers: docs/execution.md "The plan").
  const std::vector<bool> pinned = pinned_tensors(model.packed, o);
  uint64_t loads = 0, bytes = 0;
  for (size_t i = 0; i < pinned.size(); ++i) {
    const int reads = pinned[i] ? 1 : 3;
    loads += static_cast<uint64_t>(reads);
    bytes += static_cast<uint64_t>(reads) * model.packed.tensor(static_cast<int>(i / 7), static_cast<int>(i % 7)).bytes;
  }
  EXPECT_EQ(pinned[0], c.dtype == matmul::DType::int4);
  EXPECT_EQ(out->stats.loads, loads);
  EXPECT_EQ(out->stats.bytes_read, bytes);
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
    ::testing::Values(ExecutorCase{"cpu", Order::scheduled, 1}, ExecutorCase{"cpu", Order::fifo, 1}, ExecutorCase{"cpu", Order::sequential, 1},
                      ExecutorCase{"emu", Order::scheduled, 1}, ExecutorCase{"emu", Order::fifo, 1}, ExecutorCase{"emu", Order::sequential, 1},
                      ExecutorCase{"emu-rocket", Order::scheduled, 1}, ExecutorCase{"emu-rocket", Order::fifo, 1},
                      ExecutorCase{"emu-rocket", Order::sequential, 1}, ExecutorCase{"cpu", Order::scheduled, 64},
                      ExecutorCase{"emu", Order::scheduled, 64}, ExecutorCase{"emu-rocket", Order::fifo, 128},
                      ExecutorCase{"emu", Order::sequential, 64}, ExecutorCase{"emu", Order::scheduled, 1, matmul::DType::int4},
                      ExecutorCase{"emu", Order::scheduled, 1, matmul::DType::fp16},
                      ExecutorCase{"emu-rocket", Order::fifo, 64, matmul::DType::fp16},
                      ExecutorCase{"cpu", Order::scheduled, 1, matmul::DType::fp16},
                      ExecutorCase{"cpu", Order::fifo, 1, matmul::DType::int4},
                      ExecutorCase{"emu", Order::scheduled, 1, matmul::DType::int8, 1},
                      ExecutorCase{"emu", Order::fifo, 64, matmul::DType::int8, 4},
                      ExecutorCase{"emu-rocket", Order::scheduled, 1, matmul::DType::int8, 3},
                      ExecutorCase{"emu-rocket", Order::scheduled, 1, matmul::DType::fp16, 1},
                      ExecutorCase{"emu", Order::scheduled, 64, matmul::DType::int4, 8}),
    executor_case_name);

// With room for the whole model no load waits for a slot, so the walk hands the device
// thread every start at once: q, k and v of a layer (and gate and up) go to the NPU
// together, each its own job (RunOptions::groups off), and the result is still the
// reference's. With groups they go as one chained job (executor_groups_test.cpp).
TEST(ExecutorInflight, IndependentMatmulsOfALayerAreOnTheDeviceTogether) {
  const ExecutorModel model = make_executor_model(matmul::DType::int8, 3, 7, "inflight.ork");
  for (const char* name : {"emu", "emu-rocket"}) {
    auto dev = api::open_device(name);
    ASSERT_TRUE(dev) << dev.error().message;
    PlanOptions o;
    o.tokens = 2;
    o.budget_bytes = 4 << 20;
    for (int inflight : {1, 2, 3}) {
      auto out = run_executor(model, o, **dev, inflight, false);
      ASSERT_TRUE(out) << out.error().message;
      EXPECT_EQ(out->stats.max_inflight, inflight) << name;
      EXPECT_EQ(out->stats.max_group, inflight > 1 ? 1 : 0) << name;
      // The whole model fits: every tensor read once, by token 0, and kept for token 1.
      EXPECT_EQ(out->stats.loads, 3u * 7u);
      EXPECT_EQ(out->stats.bytes_read, model.packed.weight_bytes());
      auto want = reference_chain(model.path, model.packed, 1, 2);
      ASSERT_TRUE(want);
      const Status same = compare_chains(model.packed, out->chain, *want);
      EXPECT_TRUE(same) << name << " inflight " << inflight << ": " << same.error().message;
    }
    for (int bad : {0, 9}) {
      auto out = run_executor(model, o, **dev, bad);
      ASSERT_FALSE(out);
      EXPECT_NE(out.error().message.find("inflight = " + std::to_string(bad) + ": must be 1..8"), std::string::npos)
          << out.error().message;
    }
  }
}

// RunOptions::count_cpu: the device thread's CPU time counted (RunStats::device_cpu_ns, what
// ork_run --bench-fuse reports), and without it none, the outputs the reference's either way.
TEST(ExecutorCpu, TheDeviceThreadsCpuTimeIsCountedOnlyWhenAsked) {
  const ExecutorModel model = make_executor_model(matmul::DType::int8, 2, 7, "cpu_time.ork");
  auto dev = api::open_device("emu");
  ASSERT_TRUE(dev) << dev.error().message;
  PlanOptions o;
  o.tokens = 2;
  o.budget_bytes = 4 << 20;
  auto plan = build_plan(model.packed, o);
  ASSERT_TRUE(plan);
  auto want = reference_chain(model.path, model.packed, 1, 2);
  ASSERT_TRUE(want);
  for (bool count : {true, false}) {
    RunOptions ro;
    ro.count_cpu = count;
    auto out = run_plan(model.path, model.packed, *plan, o, api::exec_device(**dev, 3), ro);
    ASSERT_TRUE(out) << out.error().message;
    if (count) {
      EXPECT_GT(out->stats.device_cpu_ns, 0);
    } else {
      EXPECT_EQ(out->stats.device_cpu_ns, 0);
    }
    EXPECT_TRUE(compare_chains(model.packed, out->chain, *want));
  }
}

// Part of the model pinned (room for two layers and a half beside streaming): the pinned
// tensors are read once, the rest every token, and the chain is the reference's on every
// device.
TEST(ExecutorPinned, APinnedPrefixIsReadOnceAndTheRestEveryToken) {
  const ExecutorModel model = make_executor_model(matmul::DType::int8, 5, 11, "pinned.ork");
  const uint64_t layer = model.packed.weight_bytes() / 5;
  for (const char* name : {"cpu", "emu", "emu-rocket"}) {
    auto dev = api::open_device(name);
    ASSERT_TRUE(dev) << dev.error().message;
    PlanOptions o;
    o.tokens = 3;
    o.budget_bytes = 2 * layer + layer * 5 / 2;
    auto plan = build_plan(model.packed, o);
    ASSERT_TRUE(plan) << plan.error().message;
    ASSERT_GT(plan->pinned_bytes, 0u);
    uint64_t pinned = 0, bytes = 0;
    for (size_t i = 0; i < plan->pinned.size(); ++i) {
      const uint64_t b = model.packed.tensor(static_cast<int>(i / 7), static_cast<int>(i % 7)).bytes;
      pinned += plan->pinned[i] ? 1 : 0;
      bytes += plan->pinned[i] ? b : 3 * b;
    }
    auto out = run_executor(model, o, **dev);
    ASSERT_TRUE(out) << name << ": " << out.error().message;
    EXPECT_EQ(out->stats.loads, pinned + 3 * (5 * 7 - pinned)) << name;
    EXPECT_EQ(out->stats.bytes_read, bytes) << name;
    EXPECT_LE(out->stats.peak_bytes, o.budget_bytes) << name;
    auto want = reference_chain(model.path, model.packed, 1, 3);
    ASSERT_TRUE(want);
    const Status same = compare_chains(model.packed, out->chain, *want);
    EXPECT_TRUE(same) << name << ": " << same.error().message;
  }
}

// A job that faults on the device while others are in flight: the run fails naming the
// matmul, every job in flight is drained before the slots go, and the device runs the
// next model bit for bit.
TEST(ExecutorInflight, ADeviceFaultInFlightIsNamedAndTheDeviceStaysUsable) {
  const ExecutorModel model = make_executor_model(matmul::DType::int8, 3, 7, "inflight_fault.ork");
  for (const char* name : {"emu", "emu-rocket"}) {
    auto dev = api::open_device(name);
    ASSERT_TRUE(dev) << dev.error().message;
    auto rules = emu::parse_fault_spec("job:dma@5");
    ASSERT_TRUE(rules);
    (*dev)->fake->faults().rules = *rules;
    PlanOptions o;
    o.tokens = 2;
    o.budget_bytes = 4 << 20;
    auto out = run_executor(model, o, **dev, 3);
    ASSERT_FALSE(out) << name;
    EXPECT_NE(out.error().message.find("token 0 layer 0 matmul"), std::string::npos) << out.error().message;
    EXPECT_NE(out.error().message.find("failed on the device"), std::string::npos) << out.error().message;
    auto again = run_executor(model, o, **dev, 3);
    ASSERT_TRUE(again) << name << ": " << again.error().message;
    auto want = reference_chain(model.path, model.packed, 1, 2);
    ASSERT_TRUE(want);
    EXPECT_TRUE(compare_chains(model.packed, again->chain, *want)) << name;
  }
}

TEST(ExecutorCheck, AnotherModelsReferenceDoesNotMatch) {
  const ExecutorModel a = make_executor_model(matmul::DType::int8, 2, 3, "check_a.ork");
  const ExecutorModel b = make_executor_model(matmul::DType::int8, 2, 4, "check_b.ork");
  auto dev = api::open_device("emu");
  ASSERT_TRUE(dev);
  PlanOptions o;
  o.budget_bytes = 64 << 10;
  o.tokens = 2;
  auto out = run_executor(a, o, **dev);
  ASSERT_TRUE(out) << out.error().message;
  auto want = reference_chain(b.path, b.packed, 1, 2);
  ASSERT_TRUE(want);
  const Status same = compare_chains(a.packed, out->chain, *want);
  ASSERT_FALSE(same);
  EXPECT_NE(same.error().message.find("token 0: layer 0 matmul \"q\" differs"), std::string::npos) << same.error().message;
}

// The reference of an int4 chain (reference_matmul) is the int4 oracle's bytes, computed by
// the fast int8 kernels: odd K, K not a multiple of 32, decode and prefill rows; and an
// operand outside -8..7, which the oracle refuses, is refused the same way, never multiplied.
TEST(ReferenceMatmul, Int4IsTheOraclesBytesAndRefusesValuesOutsideMinus8To7) {
  const ref::Dims shapes[] = {{1, 7, 3}, {3, 33, 17}, {1, 97, 64}, {5, 480, 31}, {16, 1409, 40}};
  uint32_t seed = 3;
  for (ref::Dims d : shapes) {
    std::mt19937 rng(seed++);
    std::uniform_int_distribution<int> v(-8, 7);
    Activation a{.rows = d.m, .width = d.k};
    a.i8.resize(static_cast<size_t>(d.m * d.k));
    for (auto& x : a.i8) x = static_cast<int8_t>(v(rng));
    std::vector<int8_t> w(static_cast<size_t>(d.k * d.n));
    for (auto& x : w) x = static_cast<int8_t>(v(rng));
    const std::span<const uint8_t> wb{reinterpret_cast<const uint8_t*>(w.data()), w.size()};
    std::vector<uint8_t> got;
    ASSERT_TRUE(reference_matmul(matmul::DType::int4, a, wb, d.k, d.n, got));
    std::vector<int32_t> want(static_cast<size_t>(d.m * d.n));
    ASSERT_TRUE(ref::matmul_int4(a.i8, w, want, d));
    ASSERT_EQ(got.size(), want.size() * sizeof(int32_t));
    EXPECT_EQ(std::memcmp(got.data(), want.data(), got.size()), 0) << d.m << " x " << d.k << " x " << d.n;
    w[w.size() - 1] = 8;
    const Status bad_w = reference_matmul(matmul::DType::int4, a, wb, d.k, d.n, got);
    ASSERT_FALSE(bad_w);
    EXPECT_EQ(bad_w.error().message, "B[" + std::to_string(w.size() - 1) + "] = 8: int4 values must be in -8..7");
    w[w.size() - 1] = 0;
    a.i8[0] = -9;
    const Status bad_a = reference_matmul(matmul::DType::int4, a, wb, d.k, d.n, got);
    ASSERT_FALSE(bad_a);
    EXPECT_EQ(bad_a.error().message, "A[0] = -9: int4 values must be in -8..7");
  }
}

// The reference of an fp16 chain (reference_matmul) is the oracle's bytes in the slice order
// of the matmul's plan (matmul_fp16_sliced at make_plan's slice_k): decode and prefill rows,
// N not a multiple of the kernels' strips, and K past one slice, with values whose sums round.
TEST(ReferenceMatmul, Fp16IsTheOraclesBytesInThePlansSliceOrder) {
  const ref::Dims shapes[] = {{1, 64, 48}, {3, 100, 17}, {5, 4160, 33}};
  std::mt19937 rng(4);
  std::uniform_int_distribution<int> v(-384, 383);  // multiples of 1/128 in [-3, 3)
  bool sliced = false;
  for (ref::Dims d : shapes) {
    auto plan = matmul::make_plan(matmul::Shape{1, d.k, d.n}, matmul::PlanOptions{.dtype = matmul::DType::fp16, .cores = 1});
    ASSERT_TRUE(plan);
    sliced = sliced || plan->slice_k < d.k;
    Activation a{.rows = d.m, .width = d.k};
    a.f16.resize(static_cast<size_t>(d.m * d.k));
    for (auto& x : a.f16) x = float_to_half(static_cast<float>(v(rng)) / 128.0f);
    std::vector<uint16_t> w(static_cast<size_t>(d.k * d.n));
    for (auto& x : w) x = float_to_half(static_cast<float>(v(rng)) / 128.0f);
    std::vector<uint8_t> got;
    ASSERT_TRUE(reference_matmul(matmul::DType::fp16, a, {reinterpret_cast<const uint8_t*>(w.data()), w.size() * 2},
                                 d.k, d.n, got));
    std::vector<float> want(static_cast<size_t>(d.m * d.n));
    ASSERT_TRUE(ref::matmul_fp16_sliced(a.f16, w, want, d, plan->slice_k));
    ASSERT_EQ(got.size(), want.size() * sizeof(float));
    EXPECT_EQ(std::memcmp(got.data(), want.data(), got.size()), 0) << d.m << " x " << d.k << " x " << d.n;
  }
  EXPECT_TRUE(sliced);  // one shape's K spans several slices
}

TEST(ExecutorErrors, TruncatedAfterOpeningIsAnError) {
  ExecutorModel a = make_executor_model(matmul::DType::int8, 2, 3, "trunc.ork");
  ASSERT_EQ(::truncate(a.path.c_str(), static_cast<off_t>(a.packed.file_bytes - 8192)), 0);
  auto dev = api::open_device("emu");
  ASSERT_TRUE(dev);
  PlanOptions o;
  o.budget_bytes = 64 << 10;
  auto out = run_executor(a, o, **dev);
  ASSERT_FALSE(out);
  EXPECT_NE(out.error().message.find("end of file"), std::string::npos) << out.error().message;
  // The device stays usable.
  ExecutorModel b = make_executor_model(matmul::DType::int8, 2, 3, "after_trunc.ork");
  EXPECT_TRUE(run_executor(b, o, **dev));
}

// What the device thread calls may throw: std::bad_alloc there (the activations of a large M)
// once ended the process in std::terminate. Thrown from the progress callback, which runs on
// the device thread after each matmul, it is the run's error, and the device stays usable.
TEST(ExecutorErrors, OutOfMemoryOnTheDeviceThreadIsTheRunsError) {
  ExecutorModel a = make_executor_model(matmul::DType::int8, 2, 3, "oom.ork");
  for (const char* device : {"cpu", "emu", "emu-rocket"}) {
    SCOPED_TRACE(device);
    auto dev = api::open_device(device);
    ASSERT_TRUE(dev) << dev.error().message;
    PlanOptions o;
    o.budget_bytes = 64 << 10;
    o.tokens = 2;
    auto plan = build_plan(a.packed, o);
    ASSERT_TRUE(plan);
    RunOptions ro;
    int calls = 0;
    ro.progress = [&](int64_t, int64_t) {
      if (++calls == 3) throw std::bad_alloc();
    };
    DeviceRef ref = api::exec_device(**dev, 3);
    if (!ref.on_npu()) ref.cores = 1;
    auto out = run_plan(a.path, a.packed, *plan, o, ref, ro);
    ASSERT_FALSE(out);
    EXPECT_EQ(out.error().code, -ENOMEM);
    EXPECT_EQ(out.error().message, "out of host memory on the device thread (the activations of M = 1 rows, hidden 64)");
    EXPECT_EQ(calls, 3);
    EXPECT_TRUE(run_executor(a, o, **dev));
  }
}

}  // namespace
}  // namespace ork::exec
