// tools/ork_sched/huge_pages.cpp: the GLIBC_TUNABLES of ork_sched's second run (the process
// itself is run both ways in ork_sched_test.py, with the same report).
#include "tools/ork_sched/huge_pages.h"

#include <gtest/gtest.h>

namespace ork::tools {
namespace {

TEST(HugePages, SecondRunAsksForHugePagesNoMappingsAndNoTrim) {
  EXPECT_EQ(second_run_tunables(nullptr),
            "glibc.malloc.hugetlb=1:glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=1099511627776");
  EXPECT_EQ(second_run_tunables(""),
            "glibc.malloc.hugetlb=1:glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=1099511627776");
}

TEST(HugePages, TheCallersTunablesStay) {
  EXPECT_EQ(second_run_tunables("glibc.malloc.mmap_max=7"),
            "glibc.malloc.mmap_max=7:glibc.malloc.hugetlb=1:glibc.malloc.trim_threshold=1099511627776");
  EXPECT_EQ(second_run_tunables("glibc.malloc.tcache_count=0:glibc.malloc.trim_threshold=5"),
            "glibc.malloc.tcache_count=0:glibc.malloc.trim_threshold=5:glibc.malloc.hugetlb=1:glibc.malloc.mmap_max=0");
}

TEST(HugePages, NoSecondRunOnceHugetlbIsSet) {
  EXPECT_EQ(second_run_tunables("glibc.malloc.hugetlb=1:glibc.malloc.mmap_max=0"), "");
  EXPECT_EQ(second_run_tunables("glibc.malloc.hugetlb=0"), "");  // the caller's choice
}

}  // namespace
}  // namespace ork::tools
