// A tool's process on transparent huge pages: ork_sched's, and `ork_run --plan-only`'s
// (docs/sched.md section 5, "Speed at 1M ops"). A 1M-op stream makes about 400 MB of tables that are touched once or a few times
// each: with 4 KiB pages that is ~100,000-185,000 page faults and a TLB miss on most table
// reads (more so under a VM's nested paging). glibc's malloc backs its heap and its large
// blocks with transparent huge pages when the tunable glibc.malloc.hugetlb=1 is set (glibc
// 2.35+, "Memory Allocation Tunables" in the glibc manual); the tunable is read only when a
// process starts, so the tool executes itself again once with it added. The library makes no
// such call: it is the tool's choice for its own process.
#pragma once

#include <string>

namespace ork::tools {

// GLIBC_TUNABLES for the second run, from the current value (nullptr: unset): the current
// tunables, then glibc.malloc.hugetlb=1, glibc.malloc.mmap_max=0 (no block in a mapping of
// its own: a freed one went back to the kernel, and the next table faulted in fresh zeroed
// pages where it could have reused those), glibc.malloc.trim_threshold at 1 TiB (the heap
// is not given back while the process runs) and glibc.malloc.arena_max=1 (every thread
// allocates from the one heap: lib/sched's threads each got an arena of their own, mapped
// heaps that are given neither huge pages nor kept, 31,000 of the 1M-op decode process's
// 32,000 page faults and a third of its wall, docs/sched.md section 5), each unless the
// caller set it. Empty when hugetlb is set already: this is the second run (or the
// caller's choice).
std::string second_run_tunables(const char* current);

// Re-executes /proc/self/exe with GLIBC_TUNABLES = second_run_tunables(...) unless that is
// empty (so once at most) or ORK_NO_HUGE_PAGES is set; returns only when it did not (the
// process then runs on as it is).
void reexec_with_huge_pages(char** argv);

}  // namespace ork::tools
