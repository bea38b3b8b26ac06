// The host weight quantiser (lib/quant/qweights.h): QuantWeights::quantise gives the
// reference's scales and codes (row-major walks, int4 nibbles), and import checks codes and
// scales by name.
#include <gtest/gtest.h>

#include <random>
#include <utility>
#include <vector>

#include "lib/quant/qweights.h"
#include "lib/quant/reference.h"

namespace ork::quant {
namespace {

// The host quantiser (row-major walks, int4 nibbles) gives the reference's scales and codes.
TEST(HostQuantiser, MatchesTheReference) {
  std::mt19937 rng(7);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  for (Bits bits : {Bits::int8, Bits::int4})
    for (int64_t group : {0, 32, 64, 128})
      for (auto [k, n] : {std::pair<int64_t, int64_t>{200, 7}, {33, 5}, {128, 64}}) {
        std::vector<float> w(static_cast<size_t>(k * n));
        for (float& x : w) x = dist(rng);
        for (int64_t j = 0; j < k; ++j) w[static_cast<size_t>(j * n)] = 0.0f;  // a zero column
        const WeightScheme s{bits, group};
        auto q = QuantWeights::quantise(w, k, n, s);
        ASSERT_TRUE(q.ok()) << q.error().message;
        const auto sw = reference::weight_scales(w, k, n, s);
        const auto qw = reference::weight_codes(w, k, n, s, sw);
        ASSERT_EQ(std::vector<float>(q->scales().begin(), q->scales().end()), sw);
        for (int64_t i = 0; i < k; ++i)
          for (int64_t j = 0; j < n; ++j)
            ASSERT_EQ(q->code(i, j), qw[static_cast<size_t>(i * n + j)]) << i << "," << j;
        EXPECT_EQ(static_cast<int64_t>(q->codes().size()), bits == Bits::int8 ? k * n : (k * n + 1) / 2);
        EXPECT_EQ(sw[0], 0.0f);
      }
}

TEST(HostQuantiser, ImportChecksCodesAndScales) {
  const std::vector<uint8_t> codes{1, 2, 0x81, 4};  // int8 -127 at [1][0]
  const std::vector<float> scales{1.0f, 0.5f};
  EXPECT_TRUE(QuantWeights::import(codes, scales, 2, 2, {Bits::int8, 0}).ok());
  std::vector<uint8_t> bad = codes;
  bad[2] = 0x80;  // -128
  EXPECT_EQ(QuantWeights::import(bad, scales, 2, 2, {Bits::int8, 0}).error().message,
            "codes[1][0] = -128: int8 codes must lie in [-127, 127]");
  // int4: 2 x 2 = 4 nibbles in 2 bytes; 0x8 in element 3 (high nibble of byte 1) is -8.
  EXPECT_EQ(QuantWeights::import(std::vector<uint8_t>{0x21, 0x83}, scales, 2, 2, {Bits::int4, 0}).error().message,
            "codes[1][1] = -8: int4 codes must lie in [-7, 7]");
  auto q4 = QuantWeights::import(std::vector<uint8_t>{0x21, 0x93}, scales, 2, 2, {Bits::int4, 0});
  ASSERT_TRUE(q4.ok());
  EXPECT_EQ(q4->code(0, 0), 1);
  EXPECT_EQ(q4->code(0, 1), 2);
  EXPECT_EQ(q4->code(1, 0), 3);
  EXPECT_EQ(q4->code(1, 1), -7);
  EXPECT_EQ(QuantWeights::import(codes, std::vector<float>{1.0f, -0.5f}, 2, 2, {Bits::int8, 0}).error().message,
            "scales[0][1] = -0.5: scales must be finite and >= 0");
  EXPECT_FALSE(QuantWeights::import(codes, std::vector<float>{1.0f}, 2, 2, {Bits::int8, 0}).ok());
  EXPECT_FALSE(QuantWeights::import(std::vector<uint8_t>{1, 2, 3}, scales, 2, 2, {Bits::int8, 0}).ok());
}

}  // namespace
}  // namespace ork::quant
