// How the CPU reference's fast paths share a call out over threads: one rule for how many
// threads a shape gets, and one way of handing out column panels (the int8 path's panels,
// the fp16 path's 64-column strips). Written once so every dtype of the cpu device is threaded
// alike (docs/cpu-reference.md).
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <functional>
#include <vector>

#include "lib/ref/workers.h"

namespace ork::ref::detail {

// Below this many multiply-adds a second thread costs more to start than it saves.
constexpr int64_t kMinMacsPerThread = int64_t{1} << 22;
// Short M is bound by reading B, not by multiplies: at M = 1 one element of B per
// multiply-add, from L3 at about 25 GB/s per core here. A thread pays off from about 1 MiB
// of B (40 us of reading, against a few us to start a polling kept worker).
constexpr int64_t kMinBBytesPerThread = int64_t{1} << 20;
// Panels per unit of work: 4 x 32 columns x K = 512 KiB of packed int8 B at K = 2048 (fits L2).
constexpr int64_t kPanelsPerGrab = 4;

// Threads for a call: `requested` (> 0) as asked, else the online CPUs while each gets
// kMinBBytesPerThread of B (`b_bound`: short M) or kMinMacsPerThread multiply-adds; never more
// than there are panels.
inline int split_threads(int requested, int64_t macs, int64_t b_bytes, bool b_bound, int64_t panels) {
  int64_t t = requested > 0 ? requested : online_cpus();
  const int64_t work = b_bound ? b_bytes / kMinBBytesPerThread : macs / kMinMacsPerThread;
  if (requested <= 0) t = std::min<int64_t>(t, std::max<int64_t>(1, work));
  return static_cast<int>(std::clamp<int64_t>(t, 1, panels));
}

// Threads grab a few panels at a time from one counter per home range: thread i (workers.h
// index) starts in the i-th share of the panels, then helps with the others. A chunk is
// computed while its packed B is still in L2; a thread slowed by other load simply takes
// fewer chunks; and while none is, each thread computes the same panels on every call, so
// a B used call after call finds that share in its core's cache again (the decode call on
// 2 threads: docs/cpu-reference.md "Measured"). fn(p0, p1) gets panels [p0, p1).
template <class Fn>
void for_panel_chunks(int threads, int64_t panels, Fn fn, int64_t per_grab = kPanelsPerGrab) {
  if (threads <= 1) {  // the same chunks, in order, on the caller's thread
    for (int64_t p = 0; p < panels; p += per_grab) fn(p, std::min(p + per_grab, panels));
    return;
  }
  struct alignas(64) Range {  // one cache line each: the counters are written by every thread
    std::atomic<int64_t> next{0};
    int64_t end = 0;
  };
  std::vector<Range> ranges(static_cast<size_t>(threads));
  const int64_t grabs = (panels + per_grab - 1) / per_grab;
  for (int t = 0; t < threads; ++t) {
    ranges[t].next = grabs * t / threads * per_grab;
    ranges[t].end = std::min(panels, grabs * (t + 1) / threads * per_grab);
  }
  const std::function<void(int)> worker = [&fn, &ranges, threads, per_grab](int me) {
    for (int i = 0; i < threads; ++i) {
      Range& r = ranges[static_cast<size_t>((me + i) % threads)];
      for (int64_t p; (p = r.next.fetch_add(per_grab)) < r.end;) fn(p, std::min(p + per_grab, r.end));
    }
  };
  run_on_threads(threads, worker);
}

}  // namespace ork::ref::detail
