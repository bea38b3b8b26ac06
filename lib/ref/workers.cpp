// The kept workers (workers.h): one job at a time, published under a mutex with an epoch
// counter; each worker runs the job once per epoch when its index is within the job's width.
#include "lib/ref/workers.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>
#include <time.h>
#include <unistd.h>
#include <vector>

namespace ork::ref::detail {
namespace {

class Workers {
 public:
  // Returns false when another caller holds the workers. `withdraw`: once fn(0) returns, the
  // helpers that have not started fn are not waited for (run_claiming, workers.h).
  bool try_run(int helpers, const std::function<void(int)>& fn, bool withdraw) {
    // A forked child has this object but not the threads: it makes threads of its own.
    if (::getpid() != owner_) return false;
    std::unique_lock busy(busy_, std::try_to_lock);
    if (!busy.owns_lock()) return false;
    {
      std::lock_guard lock(mutex_);
      while (static_cast<int>(threads_.size()) < helpers) {
        const int index = static_cast<int>(threads_.size());
        threads_.emplace_back([this, index] { loop(index); });
      }
      job_ = &fn;
      width_ = helpers;
      pending_ = helpers;
      started_ = 0;
      ++epoch_;
      published_.store(epoch_, std::memory_order_release);
    }
    start_.notify_all();
    fn(0);
    std::unique_lock lock(mutex_);
    if (withdraw) {  // a helper not yet started now sees a job of no width and skips it
      pending_ -= width_ - started_;
      width_ = 0;
    }
    finished_.wait(lock, [this] { return pending_ == 0; });
    job_ = nullptr;
    return true;
  }

 private:
  void loop(int index) {
    uint64_t seen = 0;
    std::unique_lock lock(mutex_);
    for (;;) {
      lock.unlock();
      spin_for_next(seen);
      lock.lock();
      start_.wait(lock, [&] { return epoch_ != seen; });
      seen = epoch_;
      if (index >= width_) continue;
      ++started_;
      const std::function<void(int)>* job = job_;
      lock.unlock();
      (*job)(index + 1);
      lock.lock();
      if (--pending_ == 0) finished_.notify_one();
    }
  }

  // A job often follows the last within tens of microseconds (the emulated NPU's next
  // task); a sleeping worker takes about that long to wake, and the caller then waits for
  // it at the end. So a worker polls for a while before it sleeps (measured: docs/
  // cpu-reference.md, Design, "the threads are kept").
  void spin_for_next(uint64_t seen) const {
    const auto until = std::chrono::steady_clock::now() + kSpin;
    for (unsigned i = 1; published_.load(std::memory_order_acquire) == seen; ++i) {
#if defined(__x86_64__)
      __builtin_ia32_pause();
#elif defined(__aarch64__)
      __asm__ volatile("yield");
#endif
      if (i % 64 == 0 && std::chrono::steady_clock::now() >= until) return;  // the clock costs more than a pause
    }
  }
  static constexpr std::chrono::microseconds kSpin{200};

  const pid_t owner_ = ::getpid();       // the process whose threads these are
  std::atomic<uint64_t> published_{0};  // epoch_, readable without the mutex
  std::mutex busy_;   // held by the one caller using the workers
  std::mutex mutex_;  // guards everything below
  std::condition_variable start_, finished_;
  const std::function<void(int)>* job_ = nullptr;
  int width_ = 0, pending_ = 0, started_ = 0;
  uint64_t epoch_ = 0;
  std::vector<std::thread> threads_;  // never joined: they live as long as the process
};

Workers& workers() {
  static auto* w = new Workers;  // never destroyed: its threads wait until the process ends
  return *w;
}

// What a call's threads threw: the first exception, rethrown on the caller's thread once every
// thread has returned. Uncaught, a worker's exception (std::bad_alloc under memory pressure)
// would be std::terminate, and the caller's own would unwind while the workers still ran fn.
class FirstError {
 public:
  void run(const std::function<void(int)>& fn, int index) noexcept {
    try {
      fn(index);
    } catch (...) {
      std::lock_guard lock(mutex_);
      if (!error_) error_ = std::current_exception();
    }
  }
  void rethrow() const {
    if (error_) std::rethrow_exception(error_);
  }

 private:
  std::mutex mutex_;
  std::exception_ptr error_;
};

thread_local bool accounting = false;      // a CpuAccounting lives on this thread
thread_local int64_t helpers_cpu_ns = 0;   // its run_on_threads calls' helpers, in fn

int64_t thread_cpu_ns() {
  timespec ts{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

}  // namespace

CpuAccounting::CpuAccounting() : was_(accounting) { accounting = true; }
CpuAccounting::~CpuAccounting() { accounting = was_; }

int64_t work_cpu_ns() { return accounting ? thread_cpu_ns() + helpers_cpu_ns : 0; }

namespace {

// run_on_threads and run_claiming: `claiming` withdraws the helpers that have not started by
// the time the caller's fn(0) returns, and runs fn on the caller alone when the kept workers
// are busy (fresh threads would be waited for to join, the wait run_claiming avoids).
void run_threads_on(int threads, const std::function<void(int)>& fn, bool claiming) {
  if (threads <= 1) {
    fn(0);
    return;
  }
  FirstError error;
  // With accounting on the caller, each helper's CPU time in fn (and its own helpers', when
  // fn calls run_on_threads) is added to the caller's count once every thread returned.
  const bool account = accounting;
  std::atomic<int64_t> helpers{0};
  const std::function<void(int)> caught = [&](int index) {
    if (!account || index == 0) return error.run(fn, index);
    CpuAccounting on;
    const int64_t t0 = work_cpu_ns();
    error.run(fn, index);
    helpers.fetch_add(work_cpu_ns() - t0, std::memory_order_relaxed);
  };
  if (!workers().try_run(threads - 1, caught, claiming)) {
    std::vector<std::jthread> fresh;
    for (int t = 1; t < threads && !claiming; ++t) fresh.emplace_back(caught, t);
    caught(0);
  }  // the jthreads join here
  helpers_cpu_ns += helpers.load(std::memory_order_relaxed);
  error.rethrow();
}

}  // namespace

void run_on_threads(int threads, const std::function<void(int)>& fn) { run_threads_on(threads, fn, false); }

void run_claiming(int threads, const std::function<void(int)>& fn) { run_threads_on(threads, fn, true); }

void run_on_threads(int threads, const std::function<void()>& fn) {
  run_on_threads(threads, std::function<void(int)>([&fn](int) { fn(); }));
}

int online_cpus() {
  static const int cpus = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  return cpus;
}

}  // namespace ork::ref::detail
