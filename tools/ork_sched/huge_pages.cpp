// Re-executing the tool on huge pages (huge_pages.h).
#include "tools/ork_sched/huge_pages.h"

#include <unistd.h>

#include <cstdlib>
#include <string>

namespace ork::tools {

namespace {

// What the second run asks of glibc's malloc ("Memory Allocation Tunables", glibc manual):
// huge pages; no block of its own mapping (mmap_max=0: a block over the mmap threshold, such
// as the file's text or a graph's temporary table, was unmapped when freed, and what came next
// faulted in fresh zeroed pages where it could have reused those); and a heap that is never
// given back to the kernel while the process runs (trim_threshold: 1 TiB).
constexpr const char* kTunables[] = {"glibc.malloc.hugetlb=1", "glibc.malloc.mmap_max=0",
                                     "glibc.malloc.trim_threshold=1099511627776"};

}  // namespace

void reexec_with_huge_pages(char** argv) {
  if (std::getenv("ORK_NO_HUGE_PAGES") != nullptr) return;
  const char* current = std::getenv("GLIBC_TUNABLES");
  std::string tunables = current ? current : "";
  if (tunables.find("glibc.malloc.hugetlb") != std::string::npos) return;  // set: this is the second run
  for (const std::string tunable : kTunables) {
    const std::string name = tunable.substr(0, tunable.find('='));
    if (tunable != kTunables[0] && tunables.find(name) != std::string::npos) continue;  // the caller's stays
    tunables += (tunables.empty() ? "" : ":") + tunable;
  }
  if (setenv("GLIBC_TUNABLES", tunables.c_str(), 1) != 0) return;
  execv("/proc/self/exe", argv);  // returns only on failure: run on without huge pages
  if (current) setenv("GLIBC_TUNABLES", current, 1);
  else unsetenv("GLIBC_TUNABLES");
}

}  // namespace ork::tools
