// Re-executing the tool on huge pages (huge_pages.h).
#include "tools/ork_sched/huge_pages.h"

#include <unistd.h>

#include <cstdlib>
#include <string>

namespace ork::tools {

void reexec_with_huge_pages(char** argv) {
  if (std::getenv("ORK_NO_HUGE_PAGES") != nullptr) return;
  const char* current = std::getenv("GLIBC_TUNABLES");
  std::string tunables = current ? current : "";
  if (tunables.find("glibc.malloc.hugetlb") != std::string::npos) return;  // set: this is the second run
  tunables += tunables.empty() ? "glibc.malloc.hugetlb=1" : ":glibc.malloc.hugetlb=1";
  if (setenv("GLIBC_TUNABLES", tunables.c_str(), 1) != 0) return;
  execv("/proc/self/exe", argv);  // returns only on failure: run on without huge pages
  if (current) setenv("GLIBC_TUNABLES", current, 1);
  else unsetenv("GLIBC_TUNABLES");
}

}  // namespace ork::tools
