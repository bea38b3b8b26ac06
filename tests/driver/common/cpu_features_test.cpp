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

}  // namespace
}  // namespace ork::cpu
