// The host activation quantiser (lib/quant/activations.h) gives the reference's scales and
// codes, per tensor and per row, int8 and int4.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "lib/quant/activations.h"
#include "lib/quant/reference.h"

namespace ork::quant {
namespace {

TEST(HostQuantiser, ActivationsMatchTheReference) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> dist(-4.0f, 4.0f);
  const int64_t m = 5, k = 70;
  std::vector<float> a(m * k);
  for (float& x : a) x = dist(rng);
  for (int64_t j = 0; j < k; ++j) a[static_cast<size_t>(2 * k + j)] = 0.0f;  // a zero row
  for (Bits bits : {Bits::int8, Bits::int4})
    for (bool per_row : {false, true}) {
      const ActScheme s{bits, per_row};
      auto q = quantise_activations(a, m, k, s);
      ASSERT_TRUE(q.ok());
      const auto sa = reference::activation_scales(a, m, k, s);
      EXPECT_EQ(q->scales, sa);
      EXPECT_EQ(q->codes, reference::activation_codes(a, m, k, s, sa));
      if (per_row) {
        EXPECT_EQ(q->scales[2], 0.0f);
      }
    }
}

}  // namespace
}  // namespace ork::quant
