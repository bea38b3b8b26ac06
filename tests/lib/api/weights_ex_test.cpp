// ork_weights_create_ex: N x K and K x N with row strides, int8 / fp16 / int4, on cpu,
// emu-rknpu and emu-rocket. Each is bit-exact with ork_weights_create of the dense K x N
// values: the same C bytes, and the same packed (NPU-native) bytes in the exported blob.
#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <vector>

#include "ork/ork.h"
#include "weights_test_util.h"

namespace {

using namespace ork::weights_testing;

struct Shape {
  int64_t m, k, n;
};

// K and N off every atom; int4 K = 1000 is three 480-wide slices, int8 K = 4200 two slices.
const Shape kShapes[] = {{3, 40, 24}, {2, 70, 33}, {5, 1000, 65}, {1, 4200, 17}};

class Layouts : public ::testing::TestWithParam<std::tuple<const char*, ork_dtype>> {
 protected:
  void SetUp() override { ASSERT_EQ(ork_device_open(std::get<0>(GetParam()), &dev_), ORK_OK) << ork_last_error(); }
  void TearDown() override { ork_device_close(dev_); }
  ork_device* dev_ = nullptr;
};

TEST_P(Layouts, EveryLayoutAndStrideEqualsDenseKByN) {
  const ork_dtype dtype = std::get<1>(GetParam());
  for (const Shape& s : kShapes) {
    if (dtype == ORK_DTYPE_FP16 && s.k > 2000) continue;  // fp16 slices are covered at K = 1000 x 65
    const auto dense = random_dense(dtype, s.k, s.n, static_cast<uint32_t>(s.k * 31 + s.n));
    const auto a = random_a(dtype, s.m, s.k, 7);
    ork_weights* base = nullptr;
    ASSERT_EQ(ork_weights_create(dev_, dtype, s.k, s.n, dense.data(), &base), ORK_OK) << ork_last_error();
    const auto want_c = run(dev_, base, a, s.m, s.n);
    const auto want_blob = export_blob(base);
    for (int32_t layout : {ORK_LAYOUT_K_BY_N, ORK_LAYOUT_N_BY_K}) {
      const int64_t row = layout == ORK_LAYOUT_N_BY_K ? s.k : s.n;
      for (int64_t stride : {int64_t{0}, row, row + 3, row + 64}) {  // +3: odd, int4 rows start mid-byte
        SCOPED_TRACE(::testing::Message() << "M K N " << s.m << " " << s.k << " " << s.n << " layout " << layout
                                          << " stride " << stride);
        const auto src = to_layout(dtype, dense, s.k, s.n, layout, stride);
        ork_weights_desc d{};
        d.struct_size = sizeof(d);
        d.dtype = dtype;
        d.k = s.k;
        d.n = s.n;
        d.layout = layout;
        d.row_stride = stride;
        d.data = src.data();
        ork_weights* w = nullptr;
        ASSERT_EQ(ork_weights_create_ex(dev_, &d, &w), ORK_OK) << ork_last_error();
        EXPECT_EQ(run(dev_, w, a, s.m, s.n), want_c);
        EXPECT_EQ(export_blob(w), want_blob);
        if (dtype == ORK_DTYPE_INT4) {  // the w4a8 copy is made from the weights' K x N stream
          const auto a8 = random_dense(ORK_DTYPE_INT8, s.m, s.k, 9);
          ork_matmul_options o{};
          o.struct_size = sizeof(o);
          o.a_dtype = ORK_DTYPE_INT8;
          std::vector<uint8_t> c1(static_cast<size_t>(s.m * s.n * 4)), c2(c1.size());
          ASSERT_EQ(ork_matmul(dev_, base, a8.data(), s.m, c1.data(), &o), ORK_OK) << ork_last_error();
          ASSERT_EQ(ork_matmul(dev_, w, a8.data(), s.m, c2.data(), &o), ORK_OK) << ork_last_error();
          EXPECT_EQ(c1, c2);
        }
        ork_weights_destroy(w);
      }
    }
    ork_weights_destroy(base);
  }
}

INSTANTIATE_TEST_SUITE_P(All, Layouts,
                         ::testing::Combine(::testing::ValuesIn(kDevices),
                                            ::testing::Values(ORK_DTYPE_INT8, ORK_DTYPE_FP16, ORK_DTYPE_INT4)));

class LayoutErrors : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override { ASSERT_EQ(ork_device_open(GetParam(), &dev_), ORK_OK) << ork_last_error(); }
  void TearDown() override { ork_device_close(dev_); }
  ork_status create(ork_weights_desc d) {
    ork_weights* w = reinterpret_cast<ork_weights*>(&d);
    const ork_status s = ork_weights_create_ex(dev_, &d, &w);
    if (s != ORK_OK) {
      EXPECT_EQ(w, nullptr);
    }
    ork_weights_destroy(w);
    return s;
  }
  ork_weights_desc good() {
    ork_weights_desc d{};
    d.struct_size = sizeof(d);
    d.dtype = ORK_DTYPE_INT8;
    d.k = 64;
    d.n = 32;
    d.layout = ORK_LAYOUT_N_BY_K;
    d.data = data_.data();
    return d;
  }
  std::vector<int8_t> data_ = std::vector<int8_t>(64 * 200, 1);
  ork_device* dev_ = nullptr;
};

TEST_P(LayoutErrors, EachBadFieldIsNamed) {
  EXPECT_EQ(create(good()), ORK_OK) << ork_last_error();
  auto d = good();
  d.row_stride = 63;
  EXPECT_EQ(create(d), ORK_E_INVALID_ARGUMENT);
  EXPECT_STREQ(ork_last_error(), "ork_weights_create_ex: desc.row_stride = 63 is smaller than a row of the N x K layout "
                                 "(K = 64 elements)");
  d = good();
  d.layout = ORK_LAYOUT_K_BY_N;
  d.row_stride = 31;
  EXPECT_EQ(create(d), ORK_E_INVALID_ARGUMENT);
  EXPECT_STREQ(ork_last_error(), "ork_weights_create_ex: desc.row_stride = 31 is smaller than a row of the K x N layout "
                                 "(N = 32 elements)");
  d = good();
  d.row_stride = -1;
  EXPECT_EQ(create(d), ORK_E_INVALID_ARGUMENT);
  EXPECT_NE(std::string(ork_last_error()).find("desc.row_stride = -1"), std::string::npos) << ork_last_error();
  d = good();
  d.layout = 2;
  EXPECT_EQ(create(d), ORK_E_INVALID_ARGUMENT);
  EXPECT_STREQ(ork_last_error(), "ork_weights_create_ex: desc.layout = 2: expected ORK_LAYOUT_K_BY_N (0) or "
                                 "ORK_LAYOUT_N_BY_K (1)");
  d = good();
  d.dtype = ORK_DTYPE_FP32;
  EXPECT_EQ(create(d), ORK_E_INVALID_ARGUMENT);
  EXPECT_STREQ(ork_last_error(), "ork_weights_create_ex: desc.dtype = 5: weights are int8 (1), fp16 (2) or int4 (3)");
  d = good();
  d.k = 0;
  EXPECT_EQ(create(d), ORK_E_INVALID_ARGUMENT);
  EXPECT_STREQ(ork_last_error(), "ork_weights_create_ex: desc.k = 0: must be in 1..16777216");
  d = good();
  d.data = nullptr;
  EXPECT_EQ(create(d), ORK_E_INVALID_ARGUMENT);
  EXPECT_STREQ(ork_last_error(), "ork_weights_create_ex: desc.data is NULL");
  d = good();
  d.struct_size = 0;
  EXPECT_EQ(create(d), ORK_E_INVALID_ARGUMENT);
  EXPECT_STREQ(ork_last_error(), "ork_weights_create_ex: desc.struct_size = 0: set it to sizeof(ork_weights_desc)");
  d = good();
  d.struct_size = sizeof(d) + 8;
  EXPECT_EQ(create(d), ORK_E_INVALID_ARGUMENT);
  EXPECT_NE(std::string(ork_last_error()).find("desc.struct_size"), std::string::npos);
  ork_weights* w = nullptr;
  EXPECT_EQ(ork_weights_create_ex(dev_, nullptr, &w), ORK_E_INVALID_ARGUMENT);
  EXPECT_STREQ(ork_last_error(), "ork_weights_create_ex: desc is NULL");
  d = good();
  EXPECT_EQ(ork_weights_create_ex(nullptr, &d, &w), ORK_E_INVALID_ARGUMENT);
  EXPECT_EQ(ork_weights_create_ex(dev_, &d, nullptr), ORK_E_INVALID_ARGUMENT);
  EXPECT_EQ(create(good()), ORK_OK) << "the device stays usable: " << ork_last_error();
}

INSTANTIATE_TEST_SUITE_P(All, LayoutErrors, ::testing::ValuesIn(kDevices));

}  // namespace
