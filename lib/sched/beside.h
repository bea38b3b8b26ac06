// Work beside the caller: on a long stream, a part of the scheduler that reads only what is
// already built runs on a second thread while the caller goes on (chooser.cpp: the lower bound
// beside the rules, the input order's price beside the first list; graph.cpp: the memory
// model beside the edges; stream.cpp: the per-op checks beside the links; parse.cpp: the
// pieces of a long text; docs/sched.md section 3, "Work on several threads"). The results are
// the same either way; only the wall time changes.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <future>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

namespace ork::sched {

// Streams from this many ops use the second thread; below that a thread's start (~50 us) is a
// tenth of the work it would take over.
inline constexpr int kBesideOps = 65536;

// `work` on another thread, or (where no thread can start) run by the future's get(). The
// future's destructor waits for a started thread, so whatever `work` reads must outlive the
// future: declare it after that state.
template <class Work>
std::future<decltype(std::declval<Work&>()())> start_beside(Work work) {
  try {
    return std::async(std::launch::async, work);
  } catch (const std::system_error&) {  // no thread: deferred below
  }
  return std::async(std::launch::deferred, std::move(work));
}

// `work` beside the caller when `ops` >= kBesideOps, else run by the future's get().
template <class Work>
std::future<decltype(std::declval<Work&>()())> run_beside(int ops, Work work) {
  if (ops >= kBesideOps) return start_beside(std::move(work));
  return std::async(std::launch::deferred, std::move(work));
}

// Threads for work cut in pieces (the parse's, the text's): the machine's, at most 4. Past a
// few the one-thread parts around the pieces bound the time (Amdahl); an RK3588 has 8 cores,
// this project's test VM 2.
inline int piece_threads() { return std::clamp(static_cast<int>(std::thread::hardware_concurrency()), 1, 4); }

// work(k) for k = 0..n-1 on `threads` threads (the caller's one of them; one that cannot start
// leaves its share to the others), each taking the next piece when it is done with one.
template <class Work>
void for_pieces(size_t n, int threads, const Work& work) {
  std::atomic<size_t> next{0};
  const auto take = [&] {
    for (size_t k; (k = next.fetch_add(1, std::memory_order_relaxed)) < n;) work(k);
  };
  std::vector<std::future<void>> beside;
  for (int t = 1; t < threads && static_cast<size_t>(t) < n; ++t) beside.push_back(start_beside(take));
  take();
  for (std::future<void>& f : beside) f.get();
}

}  // namespace ork::sched
