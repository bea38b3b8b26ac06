// int8 K-slices as wide as the resident-row budget allows (docs/execution.md "Fewer tasks",
// driver/common/cbuf_limits.h kWideSliceK): the planner's slices at K past 4096, and int8
// matmuls at such K through the public C API on emu (rknpu) and emu-rocket, 1 and 3 cores,
// every byte of C against the CPU reference (sync, a submitted call and a batch on shared
// weights); the packed weights exported there and imported on the cpu backend give the same C.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "lib/matmul/plan.h"
#include "lib/ref/fast.h"
#include "lib/ref/random.h"
#include "ork/ork.h"
#include "tests/support/host_tensor.h"

namespace {

using ork::matmul::DType;
using ork::test::host_tensor;

constexpr int64_t kWideN = 64;  // two weight atoms: both cores' column ranges and one core's whole

// The K the task names, with the slices the rule gives them (fewest of at most 3072, in a
// multiple of the 3 cores where the slices stay wider than 1536 (R = 32), 32-aligned, evened
// out, the last narrower): 4097 -> kp 4128 = 2080 + 2048 (three would be 1376, R = 64);
// 6144 = 2048 x 3; 8960 = 3008 + 3008 + 2944; 18944 = 2112 x 8 + 2048.
struct WideK {
  int64_t k, slices, width, last;
};
constexpr WideK kWideKs[] = {{4097, 2, 2080, 2048}, {6144, 3, 2048, 2048}, {8960, 3, 3008, 2944}, {18944, 9, 2112, 2048}};
constexpr int64_t kWideMs[] = {1, 2, 64, 128};

TEST(Int8WideSlices, PlansTakeSlicesOfAtMost3072InAMultipleOfTheCores) {
  for (const WideK& w : kWideKs)
    for (int64_t m : kWideMs) {
      auto p = ork::matmul::make_plan({m, w.k, kWideN}, {.dtype = DType::int8, .cores = 3});
      ASSERT_TRUE(p) << p.error().message;
      EXPECT_EQ(p->slices, w.slices) << "K " << w.k;
      EXPECT_EQ(p->slice_k, w.width) << "K " << w.k;
      for (const ork::matmul::Task& t : p->tasks) {
        EXPECT_EQ(t.kt, t.slice + 1 == w.slices ? w.last : w.width) << "K " << w.k << " slice " << t.slice;
        EXPECT_LE(t.mc, 32) << "K " << w.k;  // R(2048 .. 3072) = 32
      }
    }
}

struct WideOperands {
  std::vector<int8_t> a, w;
  std::vector<int32_t> want;
};

WideOperands wide_operands(int64_t m, int64_t k) {
  WideOperands o{ork::ref::random_int8(static_cast<size_t>(m * k), 31 * m + k),
             ork::ref::random_int8(static_cast<size_t>(k * kWideN), 7 * k + 1), {}};
  o.want.resize(static_cast<size_t>(m * kWideN));
  EXPECT_TRUE(ork::ref::matmul_int8_fast(o.a, o.w, o.want, {m, k, kWideN}).ok());
  return o;
}

std::string first_bad(const std::vector<int32_t>& got, const std::vector<int32_t>& want) {
  if (got.size() == want.size() && std::memcmp(got.data(), want.data(), want.size() * 4) == 0) return "";
  size_t i = 0;
  while (i < got.size() && got[i] == want[i]) ++i;
  return "first bad cell (" + std::to_string(i / kWideN) + ", " + std::to_string(i % kWideN) + ")";
}

std::vector<int32_t> run_call(ork_device* dev, const ork_weights* wt, const WideOperands& o, int64_t m, int cores) {
  std::vector<int32_t> got(o.want.size(), 0x5a5a5a5a);
  const ork_matmul_options opt{.struct_size = sizeof(opt), .cores = cores, .mc_cap = 0};
  EXPECT_EQ(ork_matmul(dev, wt, o.a.data(), m, got.data(), &opt), ORK_OK) << ork_last_error();
  return got;
}

class Int8WideCalls : public ::testing::TestWithParam<const char*> {};

TEST_P(Int8WideCalls, EveryCellEqualsTheReference) {
  ork_device* dev = nullptr;
  ASSERT_EQ(ork_device_open(GetParam(), &dev), ORK_OK) << ork_last_error();
  for (const WideK& w : kWideKs)
    for (int64_t m : kWideMs) {
      SCOPED_TRACE(::testing::Message() << "M " << m << " K " << w.k);
      const WideOperands o = wide_operands(m, w.k);
      ork_weights* wt = nullptr;
      ASSERT_EQ(ork_weights_create(dev, ORK_DTYPE_INT8, w.k, kWideN, o.w.data(), &wt), ORK_OK) << ork_last_error();
      for (int cores : {1, 3}) EXPECT_EQ(first_bad(run_call(dev, wt, o, m, cores), o.want), "") << cores << " cores";
      ork_weights_destroy(wt);
    }
  ork_device_close(dev);
}

// The other call patterns on one set of wide-K weights: a submitted call, then a batch of two
// (wide_operands draws W from K alone, so M = 1, 2, 3 are three A on the same weights).
TEST_P(Int8WideCalls, SubmitAndBatchOnSharedWeightsAreExact) {
  ork_device* dev = nullptr;
  ASSERT_EQ(ork_device_open(GetParam(), &dev), ORK_OK) << ork_last_error();
  for (int64_t k : {int64_t{8960}, int64_t{18944}}) {
    SCOPED_TRACE(::testing::Message() << "K " << k);
    std::vector<WideOperands> ops;
    std::vector<std::vector<int32_t>> got;
    for (int64_t m = 1; m <= 3; ++m) {
      ops.push_back(wide_operands(m, k));
      got.emplace_back(ops.back().want.size(), 0x5a5a5a5a);
    }
    ork_weights* wt = nullptr;
    ASSERT_EQ(ork_weights_create(dev, ORK_DTYPE_INT8, k, kWideN, ops[0].w.data(), &wt), ORK_OK) << ork_last_error();
    ork_tensor t0 = host_tensor(ops[0].a.data()), u0 = host_tensor(got[0].data());
    ork_job* job = nullptr;
    ASSERT_EQ(ork_matmul_submit(dev, wt, &t0, 1, &u0, nullptr, &job), ORK_OK) << ork_last_error();
    ASSERT_EQ(ork_job_wait(job, -1), ORK_OK) << ork_last_error();
    ork_job_release(job);
    ork_batch* batch = nullptr;
    ASSERT_EQ(ork_batch_create(dev, &batch), ORK_OK) << ork_last_error();
    ork_tensor t1 = host_tensor(ops[1].a.data()), u1 = host_tensor(got[1].data());
    ork_tensor t2 = host_tensor(ops[2].a.data()), u2 = host_tensor(got[2].data());
    ASSERT_EQ(ork_batch_add_matmul(batch, wt, &t1, 2, &u1, nullptr), ORK_OK) << ork_last_error();
    ASSERT_EQ(ork_batch_add_matmul(batch, wt, &t2, 3, &u2, nullptr), ORK_OK) << ork_last_error();
    ork_job* bj = nullptr;
    ASSERT_EQ(ork_batch_submit(batch, &bj), ORK_OK) << ork_last_error();
    ASSERT_EQ(ork_job_wait(bj, -1), ORK_OK) << ork_last_error();
    ork_job_release(bj);
    ork_batch_destroy(batch);
    for (size_t i = 0; i < ops.size(); ++i) EXPECT_EQ(first_bad(got[i], ops[i].want), "") << "call " << i;
    ork_weights_destroy(wt);
  }
  ork_device_close(dev);
}

// The native bytes of the new layout, exported from the emulated NPU, read back by the cpu
// backend (lib/matmul/layout_source.h: native -> K x N) and by the other interface.
TEST_P(Int8WideCalls, PackedWeightsImportedOnTheCpuBackendGiveTheSameC) {
  ork_device* dev = nullptr;
  ASSERT_EQ(ork_device_open(GetParam(), &dev), ORK_OK) << ork_last_error();
  for (const WideK& w : kWideKs) {
    SCOPED_TRACE(::testing::Message() << "K " << w.k);
    const WideOperands o = wide_operands(2, w.k);
    ork_weights* wt = nullptr;
    ASSERT_EQ(ork_weights_create(dev, ORK_DTYPE_INT8, w.k, kWideN, o.w.data(), &wt), ORK_OK) << ork_last_error();
    size_t size = 0;
    ASSERT_EQ(ork_weights_export_packed(wt, nullptr, 0, &size), ORK_OK) << ork_last_error();  // the size
    std::vector<uint8_t> blob(size);
    ASSERT_EQ(ork_weights_export_packed(wt, blob.data(), blob.size(), &size), ORK_OK) << ork_last_error();
    for (const char* other : {"cpu", "emu-rknpu", "emu-rocket"}) {
      ork_device* d2 = nullptr;
      ASSERT_EQ(ork_device_open(other, &d2), ORK_OK) << ork_last_error();
      ork_weights* w2 = nullptr;
      ASSERT_EQ(ork_weights_import_packed(d2, blob.data(), blob.size(), &w2), ORK_OK) << other << ": " << ork_last_error();
      EXPECT_EQ(first_bad(run_call(d2, w2, o, 2, 3), o.want), "") << other;
      ork_weights_destroy(w2);
      ork_device_close(d2);
    }
    ork_weights_destroy(wt);
  }
  ork_device_close(dev);
}

INSTANTIATE_TEST_SUITE_P(Interfaces, Int8WideCalls, ::testing::Values("emu-rknpu", "emu-rocket"),
                         [](const auto& info) { return std::string(info.param).substr(4); });

}  // namespace
