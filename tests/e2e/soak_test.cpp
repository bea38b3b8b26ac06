// Soak (suite slow): thousands of mixed calls - int8, fp16 and int4 weights, random shapes
// and core counts, weights created and destroyed as they go (ork_weights_create,
// ork_weights_create_ex, and an export_packed / import_packed round trip), C in host memory
// (ork_matmul), in a device buffer (ork_matmul_t) or through an asynchronous job
// (ork_matmul_submit, ork_job_wait, ork_job_release) - from several threads on ONE device of
// the kind ORK_DEVICE (default emu), while a second process drives the same device kind.
// Every 8th result is checked bit for bit against the reference; RSS and open descriptors
// must be as high at the first tenth as at the last (no leak). Sizes: ORK_SOAK_CALLS (total
// calls, default 8000), ORK_SOAK_THREADS (default 4). The figures it prints are
// docs/reliability.md's "Soak".
#include <dirent.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "lib/matmul/plan.h"
#include "driver/common/fp16.h"
#include "lib/ref/oracle.h"
#include "ork/ork.h"
#include "driver/common/int4.h"

namespace {

long env_long(const char* name, long fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::strtol(v, nullptr, 10) : fallback;
}

long rss_kib() {
  std::ifstream f("/proc/self/statm");
  long pages = 0, resident = 0;
  f >> pages >> resident;
  return resident * (::sysconf(_SC_PAGESIZE) / 1024);
}

int open_fds() {
  int n = 0;
  if (DIR* d = ::opendir("/proc/self/fd")) {
    while (dirent* e = ::readdir(d)) n += e->d_name[0] != '.';
    ::closedir(d);
  }
  return n - 1;  // the directory stream's own descriptor
}

struct Weights {
  ork_dtype dtype = ORK_DTYPE_INT8;
  int64_t k = 0, n = 0;
  std::vector<uint8_t> bytes;  // as handed to ork_weights_create
  ork_weights* handle = nullptr;
};

// One call's operands and the bytes C must hold.
struct Call {
  std::vector<uint8_t> a, want;
  size_t c_bytes = 0;
};

std::vector<uint8_t> random_bytes(size_t n, std::mt19937_64& rng) {
  std::vector<uint8_t> v(n);
  for (auto& x : v) x = static_cast<uint8_t>(rng());
  return v;
}

std::vector<uint16_t> random_halves(size_t n, std::mt19937_64& rng) {
  std::uniform_real_distribution<float> d(-4.0f, 4.0f);
  std::vector<uint16_t> v(n);
  for (auto& x : v) x = ork::float_to_half(d(rng));
  return v;
}

template <class T>
std::vector<uint8_t> as_bytes(const std::vector<T>& v) {
  std::vector<uint8_t> out(v.size() * sizeof(T));
  std::memcpy(out.data(), v.data(), out.size());
  return out;
}

Weights random_weights(std::mt19937_64& rng) {
  Weights w;
  const ork_dtype kinds[] = {ORK_DTYPE_INT8, ORK_DTYPE_INT8, ORK_DTYPE_FP16, ORK_DTYPE_INT4};
  w.dtype = kinds[rng() % 4];
  w.k = 1 + static_cast<int64_t>(rng() % 300);
  w.n = 1 + static_cast<int64_t>(rng() % 200);
  const size_t kn = static_cast<size_t>(w.k * w.n);
  if (w.dtype == ORK_DTYPE_FP16) w.bytes = as_bytes(random_halves(kn, rng));
  else if (w.dtype == ORK_DTYPE_INT4) w.bytes = random_bytes((kn + 1) / 2, rng);
  else w.bytes = random_bytes(kn, rng);
  return w;
}

std::vector<int8_t> widen4(const std::vector<uint8_t>& packed, int64_t count) {
  std::vector<int8_t> out(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) out[static_cast<size_t>(i)] = ork::int4::value_at(packed.data(), i);
  return out;
}

// A's bytes for `w` and M rows, and (when `check`) the reference C.
Call make_call(const Weights& w, int64_t m, bool check, std::mt19937_64& rng) {
  Call c;
  const ork::ref::Dims d{m, w.k, w.n};
  const size_t mk = static_cast<size_t>(m * w.k), mn = static_cast<size_t>(m * w.n);
  if (w.dtype == ORK_DTYPE_FP16) {
    const auto a = random_halves(mk, rng);
    c.a = as_bytes(a);
    c.c_bytes = mn * 4;
    if (check) {
      auto p = ork::matmul::make_plan({1, w.k, w.n}, {.dtype = ork::matmul::DType::fp16, .cores = 1});
      std::vector<float> want(mn);
      const std::vector<uint16_t> wt(reinterpret_cast<const uint16_t*>(w.bytes.data()),
                                     reinterpret_cast<const uint16_t*>(w.bytes.data()) + w.k * w.n);
      EXPECT_TRUE(p.ok() && ork::ref::matmul_fp16_sliced(a, wt, want, d, p->slice_k).ok());
      c.want = as_bytes(want);
    }
    return c;
  }
  c.c_bytes = mn * 4;
  std::vector<int32_t> want(check ? mn : 0);
  if (w.dtype == ORK_DTYPE_INT4) {
    c.a = random_bytes((mk + 1) / 2, rng);
    if (check) {
      EXPECT_TRUE(ork::ref::matmul_int4(widen4(c.a, m * w.k), widen4(w.bytes, w.k * w.n), want, d).ok());
    }
  } else {
    c.a = random_bytes(mk, rng);
    const std::vector<int8_t> a8(c.a.begin(), c.a.end()), w8(w.bytes.begin(), w.bytes.end());
    if (check) {
      EXPECT_TRUE(ork::ref::matmul_int8(a8, w8, want, d).ok());
    }
  }
  if (check) c.want = as_bytes(want);
  return c;
}

struct Tally {
  std::atomic<long> calls{0}, checked{0}, mismatches{0}, failures{0}, weights_made{0}, buffer_calls{0},
      async_calls{0};
};

// The weights `w` describes, made one of three ways (by `how`): ork_weights_create,
// ork_weights_create_ex (dense K x N), or create + export_packed + destroy + import_packed.
ork_status make_weights(ork_device* dev, Weights& w, int how) {
  if (how == 1) {
    ork_weights_desc d{};
    d.struct_size = sizeof(d);
    d.dtype = w.dtype;
    d.k = w.k;
    d.n = w.n;
    d.layout = ORK_LAYOUT_K_BY_N;
    d.data = w.bytes.data();
    return ork_weights_create_ex(dev, &d, &w.handle);
  }
  if (ork_status s = ork_weights_create(dev, w.dtype, w.k, w.n, w.bytes.data(), &w.handle); s != ORK_OK || how == 0)
    return s;
  size_t size = 0;
  if (ork_status s = ork_weights_export_packed(w.handle, nullptr, 0, &size); s != ORK_OK) return s;
  std::vector<uint8_t> blob(size);
  ork_status s = ork_weights_export_packed(w.handle, blob.data(), blob.size(), &size);
  ork_weights_destroy(w.handle);
  w.handle = nullptr;
  return s != ORK_OK ? s : ork_weights_import_packed(dev, blob.data(), blob.size(), &w.handle);
}

// C through a device buffer made for this call (ork_matmul_t), copied out, buffer destroyed.
ork_status matmul_into_buffer(ork_device* dev, const Weights& w, const Call& c, int64_t m,
                              const ork_matmul_options& opt, std::vector<uint8_t>& got) {
  ork_buffer* buf = nullptr;
  if (ork_status s = ork_buffer_create(dev, c.c_bytes, &buf); s != ORK_OK) return s;
  const ork_tensor a{const_cast<uint8_t*>(c.a.data()), nullptr, 0, 0};
  const ork_tensor out{nullptr, buf, 0, 0};
  ork_status s = ork_matmul_t(dev, w.handle, &a, m, &out, &opt);
  void* p = nullptr;
  if (s == ORK_OK) s = ork_buffer_map(buf, &p);
  if (s == ORK_OK) std::memcpy(got.data(), p, c.c_bytes);
  if (ork_status d = ork_buffer_destroy(buf); s == ORK_OK) s = d;
  return s;
}

// The same call as an asynchronous job, waited at once and released.
ork_status matmul_async(ork_device* dev, const Weights& w, const Call& c, int64_t m, const ork_matmul_options& opt,
                        std::vector<uint8_t>& got) {
  const ork_tensor a{const_cast<uint8_t*>(c.a.data()), nullptr, 0, 0};
  const ork_tensor out{got.data(), nullptr, 0, 0};
  ork_job* job = nullptr;
  ork_status s = ork_matmul_submit(dev, w.handle, &a, m, &out, &opt, &job);
  if (s == ORK_OK) s = ork_job_wait(job, -1);
  if (job != nullptr) ork_job_release(job);
  return s;
}

// Lets the sampler count the process's descriptors and pages between calls: a call into a
// device buffer holds that buffer's descriptor while it runs, so a count taken in the middle
// of some thread's call sees one more than at rest (a flaky "leak" on a loaded machine).
// A plain mutex and flag, not a shared_mutex: glibc's rwlock prefers readers, and four
// threads taking it in turn could keep the sampler out for the whole run.
class Gate {
 public:
  void enter() {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return !paused_; });
    ++active_;
  }
  void leave() {
    std::lock_guard lock(mu_);
    --active_;
    cv_.notify_all();
  }
  template <class F>
  auto at_rest(F f) {  // f() with no call in flight
    std::unique_lock lock(mu_);
    paused_ = true;
    cv_.wait(lock, [&] { return active_ == 0; });
    auto r = f();
    paused_ = false;
    cv_.notify_all();
    return r;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool paused_ = false;
  int active_ = 0;
};

// Holds the gate (if any) for one iteration of a driving loop.
struct InCall {
  explicit InCall(Gate* g) : gate(g) {
    if (gate) gate->enter();
  }
  ~InCall() {
    if (gate) gate->leave();
  }
  InCall(const InCall&) = delete;
  InCall& operator=(const InCall&) = delete;
  Gate* gate;
};

// One thread's share: `calls` calls on `dev`, a new set of weights every 16 calls.
void drive(ork_device* dev, long calls, uint64_t seed, Tally& t, std::atomic<long>* done, Gate* gate) {
  std::mt19937_64 rng(seed);
  std::vector<Weights> live;
  for (long i = 0; i < calls; ++i) {
    const InCall in_call(gate);
    if (live.empty() || i % 16 == 0) {
      Weights w = random_weights(rng);
      if (make_weights(dev, w, static_cast<int>(rng() % 3)) != ORK_OK) {
        ++t.failures;
        ADD_FAILURE() << "weights_create: " << ork_last_error();
        continue;
      }
      ++t.weights_made;
      live.push_back(std::move(w));
      if (live.size() > 3) {  // destroy the oldest
        ork_weights_destroy(live.front().handle);
        live.erase(live.begin());
      }
    }
    const Weights& w = live[rng() % live.size()];
    const int64_t m = 1 + static_cast<int64_t>(rng() % 96);
    const bool check = i % 8 == 0;
    Call c = make_call(w, m, check, rng);
    std::vector<uint8_t> got(c.c_bytes);
    ork_matmul_options opt{.struct_size = sizeof(opt), .cores = 1 + static_cast<int32_t>(rng() % 3), .mc_cap = 0,
                           .a_dtype = 0, .c_dtype = 0};
    const uint64_t path = rng() % 4;  // 0: device buffer, 1: asynchronous job, else host memory
    t.buffer_calls += path == 0;
    t.async_calls += path == 1;
    const ork_status st = path == 0   ? matmul_into_buffer(dev, w, c, m, opt, got)
                          : path == 1 ? matmul_async(dev, w, c, m, opt, got)
                                      : ork_matmul(dev, w.handle, c.a.data(), m, got.data(), &opt);
    if (st != ORK_OK) {
      ++t.failures;
      ADD_FAILURE() << "matmul: " << ork_last_error();
    } else if (check) {
      ++t.checked;
      if (got != c.want) {
        ++t.mismatches;
        ADD_FAILURE() << "mismatch: dtype " << w.dtype << " M " << m << " K " << w.k << " N " << w.n
                      << " cores " << opt.cores;
      }
    }
    ++t.calls;
    ++*done;
  }
  for (Weights& w : live) ork_weights_destroy(w.handle);
}

// The second process: its own calls on the same device kind, at the same time. Returns its
// pid, or -1 when fork fails; the child exits 0 when every call ran and was exact.
pid_t fork_second_process(const std::string& device, long calls) {
  const pid_t child = ::fork();
  if (child == 0) {
    Tally t;
    std::atomic<long> done{0};
    ork_device* dev = nullptr;
    if (ork_device_open(device.c_str(), &dev) != ORK_OK) ::_exit(3);
    drive(dev, calls, 999, t, &done, nullptr);
    ork_device_close(dev);
    ::_exit(t.failures == 0 && t.mismatches == 0 && t.checked > 0 ? 0 : 1);
  }
  return child;
}

// The process's resident set (KiB) and open descriptors, once `done` has reached `calls`.
struct Usage {
  long rss_kib;
  int fds;
};
Usage usage_once(const std::atomic<long>& done, long calls, Gate& gate) {
  while (done < calls) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  return gate.at_rest([] { return Usage{rss_kib(), open_fds()}; });
}

TEST(Soak, MixedCallsFromThreadsAndASecondProcessLeakNothing) {
  const long total = env_long("ORK_SOAK_CALLS", 8000);
  const int threads = static_cast<int>(env_long("ORK_SOAK_THREADS", 4));
  ASSERT_GT(total, 0);
  ASSERT_GT(threads, 0);
  const char* kind = std::getenv("ORK_DEVICE");
  const std::string device = kind && *kind ? kind : "emu";

  const pid_t child = fork_second_process(device, total / threads);
  ASSERT_GE(child, 0);

  ork_device* dev = nullptr;  // one device, shared by every thread (its queue: docs/library.md)
  ASSERT_EQ(ork_device_open(device.c_str(), &dev), ORK_OK) << ork_last_error();
  Tally t;
  std::atomic<long> done{0};
  Gate gate;
  std::vector<std::thread> pool;
  for (int i = 0; i < threads; ++i)
    pool.emplace_back(drive, dev, total / threads, 17 + i, std::ref(t), &done, &gate);
  // Samples at the end of the first tenth and at the end of the last (the steady state:
  // contexts, weight caches and BOs of every kind made once).
  const long n = (total / threads) * threads;
  const auto [rss_first, fds_first] = usage_once(done, n / 10, gate);
  const auto [rss_last, fds_last] = usage_once(done, n - n / 100, gate);
  for (auto& th : pool) th.join();
  ork_device_close(dev);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);

  std::printf("soak: one %s device, %d threads, %ld calls (%ld into device buffers, %ld asynchronous; %ld checked bit "
              "for bit, %ld mismatches, %ld failures), %ld weights created and destroyed; second process exit %d\n",
              device.c_str(), threads, t.calls.load(), t.buffer_calls.load(), t.async_calls.load(), t.checked.load(),
              t.mismatches.load(),
              t.failures.load(), t.weights_made.load(), WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  std::printf("soak: RSS %ld KiB at the first tenth, %ld KiB at the last (%+ld KiB); open fds %d -> %d\n",
              rss_first, rss_last, rss_last - rss_first, fds_first, fds_last);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the second process failed";
  EXPECT_EQ(t.calls.load(), n);
  EXPECT_EQ(t.failures.load(), 0);
  EXPECT_EQ(t.mismatches.load(), 0);
  EXPECT_GE(t.checked.load(), n / 8);
  EXPECT_GT(t.buffer_calls.load(), 0);
  EXPECT_GT(t.async_calls.load(), 0);
  EXPECT_EQ(fds_last, fds_first) << "descriptors leaked";
  // Allocator noise, not growth: a leak of one small buffer per call would be far above.
  EXPECT_LT(rss_last - rss_first, 16 * 1024) << "RSS grew by " << rss_last - rss_first << " KiB";
}

}  // namespace
