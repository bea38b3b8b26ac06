// tools/common/huge_pages.cpp: the GLIBC_TUNABLES of a tool's second run (ork_sched's and
// `ork_run --plan-only`'s processes are run both ways in ork_sched_test.py and
// ork_run_plan_test.py, with the same output).
#include "tools/common/huge_pages.h"

#include <gtest/gtest.h>

namespace ork::tools {
namespace {

TEST(HugePages, SecondRunAsksForHugePagesNoMappingsNoTrimAndOneArena) {
  EXPECT_EQ(second_run_tunables(nullptr),
            "glibc.malloc.hugetlb=1:glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=1099511627776:"
            "glibc.malloc.arena_max=1");
  EXPECT_EQ(second_run_tunables(""),
            "glibc.malloc.hugetlb=1:glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=1099511627776:"
            "glibc.malloc.arena_max=1");
}

TEST(HugePages, TheCallersTunablesStay) {
  EXPECT_EQ(second_run_tunables("glibc.malloc.mmap_max=7"),
            "glibc.malloc.mmap_max=7:glibc.malloc.hugetlb=1:glibc.malloc.trim_threshold=1099511627776:"
            "glibc.malloc.arena_max=1");
  EXPECT_EQ(second_run_tunables("glibc.malloc.tcache_count=0:glibc.malloc.trim_threshold=5"),
            "glibc.malloc.tcache_count=0:glibc.malloc.trim_threshold=5:glibc.malloc.hugetlb=1:glibc.malloc.mmap_max=0:"
            "glibc.malloc.arena_max=1");
  EXPECT_EQ(second_run_tunables("glibc.malloc.arena_max=8"),
            "glibc.malloc.arena_max=8:glibc.malloc.hugetlb=1:glibc.malloc.mmap_max=0:"
            "glibc.malloc.trim_threshold=1099511627776");
}

TEST(HugePages, NoSecondRunOnceHugetlbIsSet) {
  EXPECT_EQ(second_run_tunables("glibc.malloc.hugetlb=1:glibc.malloc.mmap_max=0"), "");
  EXPECT_EQ(second_run_tunables("glibc.malloc.hugetlb=0"), "");  // the caller's choice
}

}  // namespace
}  // namespace ork::tools
