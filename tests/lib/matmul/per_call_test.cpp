// The runner's per-call path once a call's context is cached (MatmulRunner::run: the lookup,
// pack A, the checked job's submit from its flat layout, unpack C) allocates nothing on the
// library's side, on both kernel interfaces, with one K-slice or several; and every C stays
// exact (docs/library.md "The job a submit reads, flat"). The kernel, here the emulated NPU
// computing, is left out of the count (KernelNotCounted).
#include "tests/support/alloc_counter.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "driver/emu/kernel/fake_kernel.h"
#include "driver/kmd/kmd.h"
#include "lib/matmul/run.h"
#include "lib/ref/oracle.h"
#include "lib/ref/random.h"

namespace {

using ork::driver::KmdKind;

struct Shape {
  int64_t m, k, n;
};

class PerCall : public ::testing::TestWithParam<KmdKind> {
 protected:
  void SetUp() override {
    auto k = GetParam() == KmdKind::rknpu ? ork::driver::open_rknpu(os_, "/dev/dri/card1")
                                          : ork::driver::open_rocket(os_, "/dev/accel/accel0");
    ASSERT_TRUE(k.ok()) << k.error().message;
    kmd_ = std::move(*k);
  }
  ork::emu::FakeKernel kernel_;
  ork::test::KernelNotCounted os_{kernel_};
  std::unique_ptr<ork::driver::Kmd> kmd_;
};

TEST_P(PerCall, ACachedCallAllocatesNothingAndStaysExact) {
  // Decode (M = 1) and a few rows; K = 5000 runs in three K-slices (2048 each).
  const std::vector<Shape> shapes = {{1, 512, 256}, {1, 5000, 64}, {3, 256, 96}, {1, 64, 8192}};
  ork::matmul::MatmulRunner runner(*kmd_);
  for (const Shape& s : shapes) {
    SCOPED_TRACE(::testing::PrintToString(std::vector<int64_t>{s.m, s.k, s.n}));
    const auto w = ork::ref::random_int8(static_cast<size_t>(s.k * s.n), 11);
    auto rw = ork::matmul::ResidentWeights::create(*kmd_, ork::matmul::DType::int8, s.k, s.n, w.data());
    ASSERT_TRUE(rw.ok()) << rw.error().message;
    std::vector<int32_t> want(static_cast<size_t>(s.m * s.n)), c(want.size());
    const ork::matmul::RunOptions options;
    for (uint64_t call = 0; call < 4; ++call) {
      const auto a = ork::ref::random_int8(static_cast<size_t>(s.m * s.k), 20 + call);
      ASSERT_TRUE(ork::ref::matmul_int8(a, w, want, {s.m, s.k, s.n}).ok());
      std::fill(c.begin(), c.end(), 0x5a5a5a5a);
      ork::Status st;
      const long allocations = ork::test::allocations_in([&] { st = runner.run(**rw, a.data(), s.m, c.data(), options); });
      ASSERT_TRUE(st.ok()) << st.error().message;
      EXPECT_EQ(c, want) << "call " << call;
      if (call > 0) {  // the first builds the context
        EXPECT_EQ(allocations, 0) << "call " << call;
      }
    }
    runner.forget(**rw);
  }
}

INSTANTIATE_TEST_SUITE_P(BothInterfaces, PerCall, ::testing::Values(KmdKind::rknpu, KmdKind::rocket),
                         [](const auto& info) { return std::string(ork::driver::kmd_kind_name(info.param)); });

}  // namespace
