// End to end through the public C API: int8 matmuls on the emulated NPU through both kernel
// interfaces and on the CPU backend, every byte of C compared with the CPU reference.
// ORK_SWEEP=large selects the large sample (suite 'slow'); the default sample stays fast.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <string_view>
#include <vector>

#include "lib/ref/fast.h"
#include "lib/ref/oracle.h"
#include "ork/ork.h"
#include "tests/e2e/sweep_cases.h"
#include "lib/ref/random.h"

namespace {

using ork::ref::random_int8;

using ork::test::SweepCase;

bool sweep_large_sweep() {
  const char* v = std::getenv("ORK_SWEEP");
  return v && std::string_view(v) == "large";
}

std::vector<SweepCase> sweep_cases() {
  // Default: every value once, cheap cases only. Large: up to 4e9 MACs a case, 8e10 total.
  return sweep_large_sweep() ? ork::test::sample_sweep(20261130, 4e9, 8e10)
                       : ork::test::sample_sweep(7, 6e7, 4e8);
}

// The expected C: the oracle itself for small shapes, the fast path (proved equal to the
// oracle in tests/lib/ref) for the rest.
std::vector<int32_t> expected_c(const std::vector<int8_t>& a, const std::vector<int8_t>& w, const SweepCase& c) {
  std::vector<int32_t> out(static_cast<size_t>(c.m * c.n));
  const ork::ref::Dims d{c.m, c.k, c.n};
  auto s = c.macs() <= 3e7 ? ork::ref::matmul_int8(a, w, out, d) : ork::ref::matmul_int8_fast(a, w, out, d);
  EXPECT_TRUE(s.ok()) << s.error().message;
  return out;
}

class Sweep : public ::testing::TestWithParam<SweepCase> {};

TEST_P(Sweep, BitExactOnEveryBackend) {
  const SweepCase c = GetParam();
  const auto a = random_int8(static_cast<size_t>(c.m * c.k), 1000 + c.m);
  const auto w = random_int8(static_cast<size_t>(c.k * c.n), 2000 + c.k * 7 + c.n);
  const auto want = expected_c(a, w, c);
  for (const char* backend : {"emu-rknpu", "emu-rocket", "cpu"}) {
    SCOPED_TRACE(backend);
    ork_device* dev = nullptr;
    ASSERT_EQ(ork_device_open(backend, &dev), ORK_OK) << ork_last_error();
    ork_weights* wt = nullptr;
    ASSERT_EQ(ork_weights_create(dev, ORK_DTYPE_INT8, c.k, c.n, w.data(), &wt), ORK_OK) << ork_last_error();
    std::vector<int32_t> got(want.size(), 0x5a5a5a5a);
    ork_matmul_options opt{.struct_size = sizeof(opt), .cores = c.cores, .mc_cap = 0};
    ASSERT_EQ(ork_matmul(dev, wt, a.data(), c.m, got.data(), &opt), ORK_OK) << ork_last_error();
    if (std::memcmp(got.data(), want.data(), want.size() * 4) != 0) {
      size_t i = 0;
      while (got[i] == want[i]) ++i;
      FAIL() << "first bad cell (" << i / c.n << ", " << i % c.n << "): got " << got[i] << ", want " << want[i];
    }
    ork_weights_destroy(wt);
    ork_device_close(dev);
  }
}

INSTANTIATE_TEST_SUITE_P(SweepShapes, Sweep, ::testing::ValuesIn(sweep_cases()),
                         [](const auto& info) { return info.param.name(); });

}  // namespace
