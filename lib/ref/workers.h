// Worker threads kept for the fast path's parallel loops. Starting a thread per call cost
// more than it saved on mid-sized calls: the emulated NPU multiplies a 128-row tile per task,
// a dozen times per matmul, and each new thread also paid AMX's first-use trap (the kernel
// allocates the tile state on a thread's first AMX instruction).
#pragma once

#include <cstdint>
#include <functional>

namespace ork::ref::detail {

// Calls fn() on `threads` threads at once - the caller's and threads - 1 kept workers - and
// returns when every call has returned. fn must be safe to run concurrently with itself.
// A second caller while the workers are busy gets fresh threads for its call (never waits
// for the first caller), so concurrent users stay independent. An exception thrown by fn on
// any thread is caught there and the first one rethrown here, after every thread returned.
void run_on_threads(int threads, const std::function<void()>& fn);
// The same, fn(index) with the thread's index in 0 .. threads-1: 0 is the caller, i the
// i-th kept worker, so one index stays on one thread from call to call (while the workers
// are free): work given out by index finds its data in that core's cache again.
void run_on_threads(int threads, const std::function<void(int)>& fn);
// The same for a claiming loop: fn(index) takes its work from a shared counter until none is
// left, so that the caller's fn(0) alone does all of it when no helper comes. Once fn(0)
// returns, a kept worker that has not started fn is withdrawn instead of waited for, and
// when the workers are busy the caller runs alone: on a loaded machine a sleeping worker
// can take milliseconds to get a core, and the caller would wait that long for a thread
// with nothing left to do (the host layout work, lib/matmul/layout_host.cpp). A helper that
// has started is waited for as in run_on_threads.
void run_claiming(int threads, const std::function<void(int)>& fn);
// The CPUs online, read once per process (at least 1). std::thread::hardware_concurrency()
// reads /sys/devices/system/cpu/online on every call in glibc (an open, a read and a close:
// ~3 us, more than a small matmul's arithmetic), and a call chooses its threads every time.
int online_cpus();

// The host's own CPU time of a step (docs/execution.md "Host and device overlapped"): while a
// CpuAccounting lives on a thread, work_cpu_ns() on that thread is its own CPU clock
// (CLOCK_THREAD_CPUTIME_ID) plus the CPU time the helper threads of its run_on_threads calls
// spent in fn (each helper's thread clock around its call), so a step's figure is the work
// of every thread that did it and not the wall time, which on a loaded machine is mostly
// waiting for a core. Without one, work_cpu_ns() is 0 and nothing is measured (a thread
// clock read is a system call, too dear for every call of the decode loop).
class CpuAccounting {
 public:
  CpuAccounting();
  ~CpuAccounting();
  CpuAccounting(const CpuAccounting&) = delete;
  CpuAccounting& operator=(const CpuAccounting&) = delete;

 private:
  bool was_ = false;
};
int64_t work_cpu_ns();

}  // namespace ork::ref::detail
