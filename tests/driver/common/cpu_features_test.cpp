// The one CPU-feature query (driver/common/cpu_features.h): probed once, and the override
// that hides features from every tier query for a scope.
#include <gtest/gtest.h>

#include "driver/common/cpu_features.h"

#include <fstream>
#include <string>

namespace ork::cpu {
namespace {

TEST(CpuFeatures, NothingHiddenIsWhatTheCpuHas) {
  EXPECT_EQ(cpu_features(), detected_cpu_features());
  EXPECT_TRUE(has(0));  // asking for nothing
  EXPECT_EQ(has(kAvx2), (detected_cpu_features() & kAvx2) != 0);
#if defined(__x86_64__)
  // x86-64 CPUs with AVX-512F all have AVX2 (Intel SDM vol. 1 ch. 15): a probe that mixed the
  // bits up would show here on the CI's AVX-512 machines.
  if (has(kAvx512f)) {
    EXPECT_TRUE(has(kAvx2));
  }
#endif
}

#if defined(__x86_64__) && defined(__linux__)
// PREFETCHW's CPUID bit (80000001H ECX bit 8) is the one Linux names "3dnowprefetch" in
// /proc/cpuinfo (arch/x86/include/asm/cpufeatures.h, X86_FEATURE_3DNOWPREFETCH): the probe
// and the kernel read the same bit.
TEST(CpuFeatures, PrefetchwIsTheKernels3dnowprefetchFlag) {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line) && line.rfind("flags", 0) != 0) {
  }
  ASSERT_EQ(line.rfind("flags", 0), 0u) << "no flags line in /proc/cpuinfo";
  const bool listed = (line + " ").find(" 3dnowprefetch ") != std::string::npos;
  EXPECT_EQ((detected_cpu_features() & kPrefetchw) != 0, listed) << line;
}
#endif

TEST(CpuFeatures, HiddenFeaturesAreAbsentForTheScopeOnly) {
  const uint32_t all = detected_cpu_features();
  {
    HiddenCpuFeatures hidden(kAvx2 | kAvx512f);
    EXPECT_FALSE(has(kAvx2));
    EXPECT_FALSE(has(kAvx512f));
    EXPECT_EQ(cpu_features(), all & ~(kAvx2 | kAvx512f));
    EXPECT_EQ(detected_cpu_features(), all);  // the CPU itself is unchanged
    {
      HiddenCpuFeatures inner(kFma);  // nested: replaces, then restores the outer set
      EXPECT_EQ(cpu_features(), all & ~kFma);
    }
    EXPECT_EQ(cpu_features(), all & ~(kAvx2 | kAvx512f));
  }
  EXPECT_EQ(cpu_features(), all);
}

// ORK_CPU_TIER's names: each tier hides the features above it and keeps its own, the tiers
// nest, and any other value is an error naming it (the variable is read once per process, so
// its effect on a whole run is tests/tools/ork_bench's ork_bench_host_dtypes_m_and_tier).
TEST(CpuFeatures, TierNamesHideTheFeaturesAboveThem) {
  EXPECT_EQ(cpu_tier_mask("").value(), 0u);
  EXPECT_EQ(cpu_tier_mask("native").value(), 0u);
  EXPECT_EQ(cpu_tier_mask("avx512").value(), uint32_t{kAmxInt8});
  const uint32_t avx2 = cpu_tier_mask("avx2").value();
  EXPECT_EQ(avx2, uint32_t{kAmxInt8 | kAvx512f | kAvx512bw | kAvx512vl | kAvx512vnni});
  EXPECT_EQ(avx2 & (kAvx2 | kFma | kF16c | kPrefetchw), 0u);  // an AVX2 CPU's own stay
  const uint32_t baseline = cpu_tier_mask("baseline").value();
  EXPECT_EQ(baseline, avx2 | kAvx2 | kFma | kF16c | kAsimdDp);
  EXPECT_EQ(baseline & kPrefetchw, 0u);
  for (const char* bad : {"AVX2", "avx2 ", "sse2", "avx-512", "x"}) {
    const auto r = cpu_tier_mask(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.error().code, -EINVAL);
    EXPECT_NE(r.error().message.find(std::string("ORK_CPU_TIER='") + bad + "'"), std::string::npos) << r.error().message;
  }
  EXPECT_TRUE(cpu_tier_status().ok());  // the suite runs with the variable unset
}

}  // namespace
}  // namespace ork::cpu
