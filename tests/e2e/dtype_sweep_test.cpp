// fp16 (fp32 and fp16 C), W4A4 and w4a8 end to end through the public C API: the emulated NPU
// through both kernel interfaces and the CPU backend, every byte of C compared with the
// reference oracle (lib/ref). ORK_SWEEP=large selects the large sample (suite 'slow').
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <random>
#include <string_view>
#include <vector>

#include "lib/matmul/layout.h"
#include "lib/matmul/plan.h"
#include "lib/ref/fast.h"
#include "lib/ref/fp16_matmul.h"
#include "driver/common/fp16.h"
#include "lib/ref/oracle.h"
#include "ork/ork.h"
#include "tests/e2e/dtype_cases.h"

namespace {

using ork::test::DtypeCase;
using ork::test::Mode;

bool dtype_large_sweep() {
  const char* v = std::getenv("ORK_SWEEP");
  return v && std::string_view(v) == "large";
}

std::vector<DtypeCase> dtype_cases() {
  std::vector<DtypeCase> all;
  const bool big = dtype_large_sweep();
  // The emulated fp16 core is ~10x slower per MAC than the integer one: smaller budgets.
  for (Mode m : {Mode::fp16, Mode::fp16_out}) {
    auto v = big ? ork::test::sample_dtype(m, ork::test::fp16_values(), 91 + int(m), 3e8, 3e9)
                 : ork::test::sample_dtype(m, ork::test::fp16_values(), 11 + int(m), 1.2e7, 8e7);
    all.insert(all.end(), v.begin(), v.end());
  }
  for (Mode m : {Mode::int4, Mode::w4a8}) {
    auto v = big ? ork::test::sample_dtype(m, ork::test::int4_values(), 93 + int(m), 2e9, 2e10)
                 : ork::test::sample_dtype(m, ork::test::int4_values(), 13 + int(m), 6e7, 4e8);
    all.insert(all.end(), v.begin(), v.end());
  }
  return all;
}

// Finite halves in [-4, 4): every sign, many exponents, products that need rounding.
std::vector<uint16_t> random_halves(size_t count, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> d(-4.0f, 4.0f);
  std::vector<uint16_t> v(count);
  for (auto& x : v) x = ork::float_to_half(d(rng));
  return v;
}

std::vector<uint8_t> random_bytes(size_t count, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<uint8_t> v(count);
  for (auto& x : v) x = static_cast<uint8_t>(rng());  // every nibble -8..7
  return v;
}

std::vector<int8_t> widen(const std::vector<uint8_t>& packed, int64_t count) {
  std::vector<int8_t> out(static_cast<size_t>(count));
  EXPECT_TRUE(ork::matmul::widen_int4(packed, count, out).ok());
  return out;
}

int64_t dtype_fp16_slice_k(const DtypeCase& c) {
  auto p = ork::matmul::make_plan({1, c.k, c.n}, {.dtype = ork::matmul::DType::fp16, .cores = 1});
  EXPECT_TRUE(p.ok());
  return p->slice_k;
}

struct Inputs {
  std::vector<uint8_t> a, w;    // the bytes handed to the C API
  std::vector<uint8_t> want;    // C's expected bytes
  ork_dtype w_dtype = ORK_DTYPE_INT8;
  ork_matmul_options opt{};
};

template <class T>
std::vector<uint8_t> as_bytes(const std::vector<T>& v) {
  std::vector<uint8_t> out(v.size() * sizeof(T));
  std::memcpy(out.data(), v.data(), out.size());
  return out;
}

Inputs make_inputs(const DtypeCase& c) {
  Inputs in;
  const ork::ref::Dims d{c.m, c.k, c.n};
  const size_t mk = static_cast<size_t>(c.m * c.k), kn = static_cast<size_t>(c.k * c.n), mn = static_cast<size_t>(c.m * c.n);
  in.opt = ork_matmul_options{.struct_size = sizeof(ork_matmul_options), .cores = c.cores, .mc_cap = 0, .a_dtype = 0,
                              .c_dtype = 0};
  if (c.mode == Mode::fp16 || c.mode == Mode::fp16_out) {
    const auto a = random_halves(mk, 100 + c.m), w = random_halves(kn, 200 + c.k * 3 + c.n);
    in.a = as_bytes(a);
    in.w = as_bytes(w);
    in.w_dtype = ORK_DTYPE_FP16;
    // The oracle for small shapes; the rows path, proved bit-identical to it in
    // tests/lib/ref/fp16_matmul_test.cpp, for the rest (the oracle's per-cell loop was a
    // third of the large sweep's CPU time).
    const bool fast = c.macs() > 3e7;
    const int64_t slice_k = dtype_fp16_slice_k(c);
    if (c.mode == Mode::fp16_out) {
      in.opt.c_dtype = ORK_DTYPE_FP16;
      std::vector<uint16_t> want(mn);
      auto s = fast ? ork::ref::matmul_fp16_rows_to_fp16(a, w, want, d, slice_k)
                    : ork::ref::matmul_fp16_sliced_to_fp16(a, w, want, d, slice_k);
      EXPECT_TRUE(s.ok()) << s.error().message;
      in.want = as_bytes(want);
    } else {
      std::vector<float> want(mn);
      auto s = fast ? ork::ref::matmul_fp16_rows(a, w, want, d, slice_k)
                    : ork::ref::matmul_fp16_sliced(a, w, want, d, slice_k);
      EXPECT_TRUE(s.ok()) << s.error().message;
      in.want = as_bytes(want);
    }
    return in;
  }
  in.w_dtype = ORK_DTYPE_INT4;
  in.w = random_bytes((kn + 1) / 2, 300 + c.k * 5 + c.n);
  const auto w8 = widen(in.w, c.k * c.n);
  std::vector<int8_t> a8;
  if (c.mode == Mode::int4) {
    in.a = random_bytes((mk + 1) / 2, 400 + c.m);
    a8 = widen(in.a, c.m * c.k);
  } else {
    in.opt.a_dtype = ORK_DTYPE_INT8;
    const auto a = random_bytes(mk, 500 + c.m);
    a8.assign(a.begin(), a.end());
    in.a = a;
  }
  std::vector<int32_t> want(mn);
  // The oracle for small shapes; the fast path (proved equal in tests/lib/ref) for the rest.
  auto s = c.macs() > 3e7 ? ork::ref::matmul_int8_fast(a8, w8, want, d)
           : c.mode == Mode::int4 ? ork::ref::matmul_int4(a8, w8, want, d)
                                  : ork::ref::matmul_int8(a8, w8, want, d);
  EXPECT_TRUE(s.ok()) << s.error().message;
  in.want = as_bytes(want);
  return in;
}

class DtypeSweep : public ::testing::TestWithParam<DtypeCase> {};

TEST_P(DtypeSweep, BitExactOnEveryBackend) {
  const DtypeCase c = GetParam();
  const Inputs in = make_inputs(c);
  const size_t cell = in.want.size() / static_cast<size_t>(c.m * c.n);
  for (const char* backend : {"emu-rknpu", "emu-rocket", "cpu"}) {
    SCOPED_TRACE(backend);
    ork_device* dev = nullptr;
    ASSERT_EQ(ork_device_open(backend, &dev), ORK_OK) << ork_last_error();
    ork_weights* wt = nullptr;
    ASSERT_EQ(ork_weights_create(dev, in.w_dtype, c.k, c.n, in.w.data(), &wt), ORK_OK) << ork_last_error();
    std::vector<uint8_t> got(in.want.size(), 0x5a);
    ork_matmul_options opt = in.opt;
    ASSERT_EQ(ork_matmul(dev, wt, in.a.data(), c.m, got.data(), &opt), ORK_OK) << ork_last_error();
    if (got != in.want) {
      size_t i = 0;
      while (got[i] == in.want[i]) ++i;
      const size_t e = i / cell;
      FAIL() << "first bad cell (" << e / c.n << ", " << e % c.n << "), byte " << i % cell << ": got "
             << int(got[i]) << ", want " << int(in.want[i]);
    }
    ork_weights_destroy(wt);
    ork_device_close(dev);
  }
}

INSTANTIATE_TEST_SUITE_P(DtypeShapes, DtypeSweep, ::testing::ValuesIn(dtype_cases()),
                         [](const auto& info) { return info.param.name(); });

}  // namespace
