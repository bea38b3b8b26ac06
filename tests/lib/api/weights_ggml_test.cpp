// ork_qweights_import_ggml: Q4_0 / Q4_1 / Q8_0 / Q8_1 blocks built by hand and at random,
// read back by the test's own plain-loop decoder (ggml_test_util.h):
// - known values: with A = 127 x identity (one activation code of 127 per row, scale 1) every
//   C[k][n] is exactly 127 * value[k][n], the plain-loop dequantised weight, -8 codes and
//   negative d included;
// - random blocks and activations: cpu, emu-rknpu and emu-rocket return, bit for bit, the
//   reference arithmetic (lib/quant reference::qmatmul_codes) on the decoded codes;
// - refusals: block count, K not a multiple of 32, unknown type, non-finite d / m.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <tuple>
#include <vector>

#include "ggml_test_util.h"
#include "lib/quant/reference.h"
#include "ork/ork.h"
#include "tests/support/quant_test_util.h"

namespace {

using namespace ork::ggml_testing;
using ork::quant::testing::first_difference;
using ork::quant::testing::random_matrix;

const char* const kDevices[] = {"cpu", "emu-rknpu", "emu-rocket"};
const int kTypes[] = {ORK_GGML_Q4_0, ORK_GGML_Q4_1, ORK_GGML_Q8_0, ORK_GGML_Q8_1};

class Ggml : public ::testing::TestWithParam<std::tuple<const char*, int>> {
 protected:
  void SetUp() override { ASSERT_EQ(ork_device_open(std::get<0>(GetParam()), &dev_), ORK_OK) << ork_last_error(); }
  void TearDown() override { ork_device_close(dev_); }
  int type() const { return std::get<1>(GetParam()); }
  ork_qweights* import(const std::vector<uint8_t>& b, int64_t k, int64_t n) {
    ork_qweights* q = nullptr;
    EXPECT_EQ(ork_qweights_import_ggml(dev_, type(), b.data(), b.size(), k, n, &q), ORK_OK) << ork_last_error();
    return q;
  }
  ork_device* dev_ = nullptr;
};

TEST_P(Ggml, HandBuiltBlocksGiveThePlainLoopValues) {
  const int64_t k = 64, n = 5;
  auto b = random_blocks(type(), k, n, 21, /*exact=*/true);
  // Row 0, block 0 by hand: d = -0.5 (fp16 0xb800), Q4_1 m = 0.25 (0x3400), the first code
  // byte 0x0f / 0x80: value 0 = (15 - 8) * -0.5 = -3.5 (Q4_0), 15 * -0.5 + 0.25 = -7.25
  // (Q4_1), -128 * -0.5 = 64 (Q8); Q4 value 16 = the first byte's high nibble: (0 - 8) * -0.5
  // = 4 (Q4_0: the -8 code with a negative scale).
  b[0] = 0x00, b[1] = 0xb8;
  if (type() == ORK_GGML_Q4_1) b[2] = 0x00, b[3] = 0x34;
  const int64_t qs = (type() == ORK_GGML_Q4_0 || type() == ORK_GGML_Q8_0) ? 2 : 4;
  b[static_cast<size_t>(qs)] = four_bit(type()) ? 0x0f : 0x80;
  const Decoded dec = decode(type(), b, k, n);
  const double v0 = type() == ORK_GGML_Q4_0 ? -3.5 : type() == ORK_GGML_Q4_1 ? -7.25 : 64.0;
  EXPECT_EQ(dec.value(0, 0, n), v0);
  if (type() == ORK_GGML_Q4_0) {
    EXPECT_EQ(dec.value(16, 0, n), 4.0);
  }
  ork_qweights* q = import(b, k, n);
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(ork_qweights_groups(q), k / 32);
  std::vector<float> a(static_cast<size_t>(k * k), 0.0f), c(static_cast<size_t>(k * n));
  for (int64_t i = 0; i < k; ++i) a[static_cast<size_t>(i * k + i)] = 127.0f;
  for (int per_row = 0; per_row <= 1; ++per_row) {  // 8-bit activations (4-bit: against the reference below)
    ork_qmatmul_options o{sizeof(o), 8, per_row, 0};
    ASSERT_EQ(ork_qmatmul(dev_, q, a.data(), k, c.data(), &o), ORK_OK) << ork_last_error();
    for (int64_t kk = 0; kk < k; ++kk)
      for (int64_t nn = 0; nn < n; ++nn) {
        const double want = 127.0 * dec.value(kk, nn, n);
        ASSERT_EQ(static_cast<double>(static_cast<float>(want)), want) << "the hand values must be exact in fp32";
        ASSERT_EQ(c[static_cast<size_t>(kk * n + nn)], static_cast<float>(want)) << "C[" << kk << "][" << nn << "]";
      }
  }
  ork_qweights_destroy(q);
}

TEST_P(Ggml, EqualsTheReferenceArithmeticBitForBit) {
  const bool four = four_bit(type());
  for (auto [m, k, n] : {std::tuple{1, 32, 7}, std::tuple{5, 96, 33}, std::tuple{9, 256, 70}}) {
    const auto b = random_blocks(type(), k, n, static_cast<uint32_t>(k + n));
    const Decoded dec = decode(type(), b, k, n);
    ork_qweights* q = import(b, k, n);
    ASSERT_NE(q, nullptr);
    const auto a = random_matrix(m, k, static_cast<uint32_t>(m * 3 + 1));
    for (int abits : {8, 4}) {
      if (abits == 4 && !four) continue;
      for (int per_row = 0; per_row <= 1; ++per_row)
        for (int cores = 1; cores <= 3; ++cores) {
          SCOPED_TRACE(::testing::Message() << "M K N " << m << " " << k << " " << n << " a" << abits << " per_row "
                                            << per_row << " cores " << cores);
          const ork::quant::ActScheme as{abits == 8 ? ork::quant::Bits::int8 : ork::quant::Bits::int4, per_row == 1};
          auto want = ork::quant::reference::qmatmul_codes(a, m, dec.q, dec.d,
                                                           type() == ORK_GGML_Q4_1 ? std::span<const float>(dec.m)
                                                                                   : std::span<const float>(),
                                                           k, n, 32, as);
          ASSERT_TRUE(want.ok()) << want.error().message;
          std::vector<float> c(static_cast<size_t>(m * n));
          ork_qmatmul_options o{sizeof(o), abits, per_row, std::string(std::get<0>(GetParam())) == "cpu" ? 0 : cores};
          ASSERT_EQ(ork_qmatmul(dev_, q, a.data(), m, c.data(), &o), ORK_OK) << ork_last_error();
          EXPECT_EQ(first_difference(c, *want, n), "");
        }
    }
    ork_qweights_destroy(q);
  }
}

TEST_P(Ggml, BadBlocksAreNamed) {
  const auto b = random_blocks(type(), 64, 4, 3);
  ork_qweights* q = reinterpret_cast<ork_qweights*>(&q);
  const std::string name = type() == ORK_GGML_Q4_0 ? "Q4_0" : type() == ORK_GGML_Q4_1 ? "Q4_1" : type() == ORK_GGML_Q8_0 ? "Q8_0" : "Q8_1";
  const int64_t bb = block_bytes(type());
  EXPECT_EQ(ork_qweights_import_ggml(dev_, type(), b.data(), b.size() - 1, 64, 4, &q), ORK_E_INVALID_ARGUMENT);
  EXPECT_EQ(q, nullptr);
  EXPECT_EQ(std::string(ork_last_error()),
            "ork_qweights_import_ggml: " + std::to_string(b.size() - 1) + " bytes of " + name + " blocks: N = 4 rows of K / 32 = 2 blocks of " +
                std::to_string(bb) + " bytes are " + std::to_string(8 * bb) + " (block count does not match K and N)");
  EXPECT_EQ(ork_qweights_import_ggml(dev_, type(), b.data(), b.size(), 96, 4, &q), ORK_E_INVALID_ARGUMENT);
  EXPECT_NE(std::string(ork_last_error()).find("block count does not match K and N"), std::string::npos);
  EXPECT_EQ(ork_qweights_import_ggml(dev_, type(), b.data(), b.size(), 48, 4, &q), ORK_E_INVALID_ARGUMENT);
  EXPECT_EQ(std::string(ork_last_error()),
            "ork_qweights_import_ggml: K = 48 is not a multiple of 32: " + name + " blocks hold 32 values along K");
  EXPECT_EQ(ork_qweights_import_ggml(dev_, 6, b.data(), b.size(), 64, 4, &q), ORK_E_INVALID_ARGUMENT);
  EXPECT_STREQ(ork_last_error(),
               "ork_qweights_import_ggml: ggml type 6: supported are Q4_0 (2), Q4_1 (3), Q8_0 (8) and Q8_1 (9)");
  auto inf_d = b;
  inf_d[static_cast<size_t>(3 * bb)] = 0x00, inf_d[static_cast<size_t>(3 * bb + 1)] = 0x7c;  // row 1, block 1: d = +inf
  EXPECT_EQ(ork_qweights_import_ggml(dev_, type(), inf_d.data(), inf_d.size(), 64, 4, &q), ORK_E_INVALID_ARGUMENT);
  EXPECT_STREQ(ork_last_error(), "ork_qweights_import_ggml: row 1 block 1: d = inf: block scales must be finite");
  if (type() == ORK_GGML_Q4_1) {
    auto nan_m = b;
    nan_m[2] = 0x00, nan_m[3] = 0x7e;
    EXPECT_EQ(ork_qweights_import_ggml(dev_, type(), nan_m.data(), nan_m.size(), 64, 4, &q), ORK_E_INVALID_ARGUMENT);
    EXPECT_STREQ(ork_last_error(), "ork_qweights_import_ggml: row 0 block 0: m = nan: block scales must be finite");
  }
  EXPECT_EQ(ork_qweights_import_ggml(dev_, type(), nullptr, b.size(), 64, 4, &q), ORK_E_INVALID_ARGUMENT);
  EXPECT_STREQ(ork_last_error(), "ork_qweights_import_ggml: blocks is NULL");
  EXPECT_EQ(ork_qweights_import_ggml(dev_, type(), b.data(), b.size(), 64, 0, &q), ORK_E_INVALID_ARGUMENT);
  EXPECT_EQ(ork_qweights_import_ggml(nullptr, type(), b.data(), b.size(), 64, 4, &q), ORK_E_INVALID_ARGUMENT);
  EXPECT_EQ(ork_qweights_import_ggml(dev_, type(), b.data(), b.size(), 64, 4, nullptr), ORK_E_INVALID_ARGUMENT);
  q = import(b, 64, 4);  // the device is still usable
  ASSERT_NE(q, nullptr);
  std::vector<float> a(64, 1.0f), c(4);
  EXPECT_EQ(ork_qmatmul(dev_, q, a.data(), 1, c.data(), nullptr), ORK_OK) << ork_last_error();
  ork_qweights_destroy(q);
}

INSTANTIATE_TEST_SUITE_P(All, Ggml, ::testing::Combine(::testing::ValuesIn(kDevices), ::testing::ValuesIn(kTypes)));

// The strict import of ork_qweights_import is unchanged: -8 / -128 codes and negative scales
// are still refused there (only ggml's formats are full-range and signed).
TEST(GgmlScheme, StrictImportStillRefusesFullRangeAndNegativeScales) {
  ork_device* dev = nullptr;
  ASSERT_EQ(ork_device_open("cpu", &dev), ORK_OK);
  std::vector<int8_t> codes(32 * 2, 1);
  std::vector<float> scales(2, 0.5f);
  codes[3] = -128;
  ork_quant_options o{sizeof(o), 8, 32};
  ork_qweights* q = nullptr;
  EXPECT_EQ(ork_qweights_import(dev, codes.data(), scales.data(), 32, 2, &o, &q), ORK_E_INVALID_ARGUMENT);
  codes[3] = 1;
  scales[1] = -0.5f;
  EXPECT_EQ(ork_qweights_import(dev, codes.data(), scales.data(), 32, 2, &o, &q), ORK_E_INVALID_ARGUMENT);
  EXPECT_STREQ(ork_last_error(), "ork_qweights_import: scales[0][1] = -0.5: scales must be finite and >= 0");
  ork_device_close(dev);
}

}  // namespace
