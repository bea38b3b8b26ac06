// Re-executing the tool on huge pages (huge_pages.h).
#include "tools/common/huge_pages.h"

#include <unistd.h>

#include <cstdlib>

namespace ork::tools {

std::string second_run_tunables(const char* current) {
  std::string tunables = current ? current : "";
  if (tunables.find("glibc.malloc.hugetlb") != std::string::npos) return {};
  for (const std::string tunable :
       {"glibc.malloc.hugetlb=1", "glibc.malloc.mmap_max=0", "glibc.malloc.trim_threshold=1099511627776",
        "glibc.malloc.arena_max=1"}) {
    if (tunables.find(tunable.substr(0, tunable.find('='))) != std::string::npos) continue;  // the caller's stays
    tunables += (tunables.empty() ? "" : ":") + tunable;
  }
  return tunables;
}

void reexec_with_huge_pages(char** argv) {
  if (std::getenv("ORK_NO_HUGE_PAGES") != nullptr) return;
  const char* current = std::getenv("GLIBC_TUNABLES");
  const std::string tunables = second_run_tunables(current);
  if (tunables.empty()) return;  // this is the second run
  const std::string saved = current ? current : "";
  if (setenv("GLIBC_TUNABLES", tunables.c_str(), 1) != 0) return;
  execv("/proc/self/exe", argv);  // returns only on failure: run on without huge pages
  if (current) setenv("GLIBC_TUNABLES", saved.c_str(), 1);
  else unsetenv("GLIBC_TUNABLES");
}

}  // namespace ork::tools
