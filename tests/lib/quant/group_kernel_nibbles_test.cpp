// int4 weights two codes a byte (lib/quant/group_kernel.h GroupPacked::nibbles): the packed
// nibbles widen into exactly the tier's byte layout. (Every fused-kernel test in
// group_kernel_test.cpp also runs each vnni and amx case on both packings.)
#include <gtest/gtest.h>

#include <algorithm>
#include <tuple>
#include <vector>

#include "driver/common/cpu_features.h"
#include "lib/quant/group_kernel.h"
#include "lib/quant/qweights.h"
#include "tests/support/quant_test_util.h"

namespace ork::quant::detail {
namespace {

using testing::random_matrix;

// Two codes a byte widen into exactly the bytes the tier packs (every strip, padding and
// slack-free end included), on AVX-512 lanes and in the plain loop alike; int8 weights
// never take nibbles.
TEST(FusedQmatmul, NibblesWidenToTheTiersBytes) {
  for (GroupTier tier : {GroupTier::vnni, GroupTier::amx}) {
    if (!group_tier_supported(tier)) continue;
    for (auto [k, n, group] : {std::tuple{200, 47, 32}, {130, 33, 64}, {1030, 70, 128}}) {
      const auto wf = random_matrix(k, n, 51);
      auto w = QuantWeights::quantise(wf, k, n, WeightScheme{Bits::int4, group});
      ASSERT_TRUE(w.ok());
      auto bytes = pack_group_weights(*w, tier, {.nibbles = false});
      auto nib = pack_group_weights(*w, tier);
      ASSERT_TRUE(bytes.ok() && nib.ok());
      ASSERT_FALSE(bytes->nibbles);
      ASSERT_TRUE(nib->nibbles);
      const int64_t wide = bytes->strips * bytes->group_off.back();
      ASSERT_EQ(nib->b.size(), static_cast<size_t>((wide + kAmxBSlack) / 2));  // the amx tier reads past the strips
      ASSERT_EQ(bytes->b.size(), static_cast<size_t>(wide + (tier == GroupTier::amx ? kAmxBSlack : 0)));
      std::vector<uint8_t> out(static_cast<size_t>(wide), 0xa5);
      unpack_nibbles(nib->b.data(), wide, nib->nibble_base, out.data());
      EXPECT_TRUE(std::equal(out.begin(), out.end(), bytes->b.begin())) << group_tier_name(tier) << " K = " << k;
      std::fill(out.begin(), out.end(), 0xa5);
      cpu::HiddenCpuFeatures plain(cpu::kAvx512f);
      unpack_nibbles(nib->b.data(), wide, nib->nibble_base, out.data());
      EXPECT_TRUE(std::equal(out.begin(), out.end(), bytes->b.begin())) << "plain loop, K = " << k;
    }
    auto w8 = QuantWeights::quantise(random_matrix(64, 40, 52), 64, 40, WeightScheme{Bits::int8, 32});
    ASSERT_TRUE(w8.ok());
    auto p8 = pack_group_weights(*w8, tier);
    ASSERT_TRUE(p8.ok());
    EXPECT_FALSE(p8->nibbles);
  }
}

}  // namespace
}  // namespace ork::quant::detail
