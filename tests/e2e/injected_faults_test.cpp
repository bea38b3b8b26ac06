// Faults injected through ORK_EMU_FAULTS (driver/emu/kernel/fault_spec.h) and survived, on
// emu-rknpu and emu-rocket: every fault class of docs/reliability.md's table that the
// emulated kernel injects, each with the call that fails, its status and message, and the
// next call on the same device exact again (or, once the node is gone, failing cleanly).
#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "tests/e2e/int8_fixture.h"

namespace {

constexpr int64_t M = 40, K = 192, N = 80;

// A fault spec in the environment for one device open, removed again at once: the device
// reads it when it opens.
ork_status open_with_faults(const char* device, const char* spec, ork_device** out) {
  ::setenv("ORK_EMU_FAULTS", spec, 1);
  const ork_status s = ork_device_open(device, out);
  ::unsetenv("ORK_EMU_FAULTS");
  return s;
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

class Injected : public ork::e2e::Int8Call {
 protected:
  Injected() : Int8Call(M, K, N) {}
  void SetUp() override { draw(11); }
  // Opens the device under test with `spec`; the weights are created before any rule that
  // targets jobs or submits can fire (they only upload).
  void open(const char* spec) {
    ASSERT_EQ(open_with_faults(GetParam(), spec, &dev_), ORK_OK) << ork_last_error();
    ASSERT_NE(dev_->fake, nullptr);
  }
  ork_status make_weights() { return create_weights(); }
  ork_status run(int cores = 3) { return run_on(cores, kSentinel); }
  void expect_exact() {
    ASSERT_EQ(run(), ORK_OK) << ork_last_error();
    EXPECT_EQ(got_, want_);
  }
  // Every rule fired as often as it was asked to (none left over).
  void expect_rules_spent() {
    for (const auto& r : faults().rules) EXPECT_EQ(r.count, 0) << "rule '" << r.text << "' did not fire";
  }

  static constexpr int32_t kSentinel = 0x5a5a5a5a;
};

TEST_P(Injected, BadSpecIsAClearErrorNamingTheRule) {
  ork_device* d = nullptr;
  for (const char* bad : {"submit", "submit:eoops", "sbumit:eio", "submit:eio@0", "submit:eio@-1",
                          "job:melt", "device:gone x2", "submit:eio x", "ioctl:eintr@3x0", ","}) {
    EXPECT_EQ(open_with_faults(GetParam(), bad, &d), ORK_E_INVALID_ARGUMENT) << bad;
    EXPECT_EQ(d, nullptr);
    EXPECT_TRUE(contains(ork_last_error(), "ORK_EMU_FAULTS")) << bad << ": " << ork_last_error();
  }
  ASSERT_EQ(open_with_faults(GetParam(), "sbumit:eio", &d), ORK_E_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(ork_last_error(), "unknown point 'sbumit'")) << ork_last_error();
}

// EINTR and EAGAIN storms on every kind of ioctl the library makes: each retried, nothing
// visible to the caller.
TEST_P(Injected, EintrAndEagainStormsOnEveryIoctl) {
  const bool rknpu = std::string(GetParam()) == "emu-rknpu";
  open(rknpu ? "create:eintr x5,map:eagain x5,sync:eintr x5,submit:eagain x5,destroy:eintr x5,ioctl:eintr@20x30"
             : "create:eintr x5,sync:eagain x5,submit:eintr x5,destroy:eagain x5,ioctl:eagain@20x30");
  ASSERT_EQ(make_weights(), ORK_OK) << ork_last_error();
  expect_exact();
  for (int cores = 1; cores <= 3; ++cores) {
    ASSERT_EQ(run(cores), ORK_OK) << ork_last_error();
    EXPECT_EQ(got_, want_);
  }
  ork_weights* extra = nullptr;  // a BO destroyed: the destroy storm
  ASSERT_EQ(ork_weights_create(dev_, ORK_DTYPE_INT8, K, N, w_.data(), &extra), ORK_OK) << ork_last_error();
  ork_weights_destroy(extra);
  expect_rules_spent();
}

TEST_P(Injected, EnomemAtBoCreationThenTheNextCallWorks) {
  open("create:enomem");
  EXPECT_EQ(make_weights(), ORK_E_NO_MEMORY);
  EXPECT_EQ(w_handle_, nullptr);
  EXPECT_STRNE(ork_last_error(), "");
  ASSERT_EQ(make_weights(), ORK_OK) << ork_last_error();
  expect_exact();
  expect_rules_spent();
}

TEST_P(Injected, EnomemAtMmapThenTheNextCallWorks) {
  open("mmap:enomem");
  EXPECT_EQ(make_weights(), ORK_E_NO_MEMORY) << ork_last_error();
  EXPECT_TRUE(contains(ork_last_error(), "mmap")) << ork_last_error();
  ASSERT_EQ(make_weights(), ORK_OK) << ork_last_error();
  // A new shape needs new buffers, and their first mmap is refused too.
  faults().rules = *ork::emu::parse_fault_spec("mmap:enomem");
  EXPECT_EQ(run(), ORK_E_NO_MEMORY) << ork_last_error();
  expect_exact();
  expect_rules_spent();
}

TEST_P(Injected, JobTimeoutResetsAndTheNextCallWorks) {
  open("job:wedge");
  ASSERT_EQ(make_weights(), ORK_OK) << ork_last_error();
  const auto before = dev_->fake->stats();
  EXPECT_EQ(run(), ORK_E_TIMEOUT);
  EXPECT_TRUE(contains(ork_last_error(), "timed out")) << ork_last_error();
  EXPECT_FALSE(contains(ork_last_error(), "still wedged")) << ork_last_error();
  const auto after = dev_->fake->stats();
  uint64_t resets = 0;
  for (int c = 0; c < 3; ++c) resets += after.resets[c] - before.resets[c];
  EXPECT_GT(resets, 0u) << "the wedged core was not reset";
  expect_exact();
}

// The same wedge through an asynchronous job: a wait with no time left says the job is
// still in flight and keeps it; the full wait says it failed on the device (C not written);
// the next job on the device is exact.
TEST_P(Injected, WedgedAsyncJobIsStillInFlightThenFailedThenTheNextWorks) {
  open("job:wedge");
  ASSERT_EQ(make_weights(), ORK_OK) << ork_last_error();
  got_.assign(M * N, kSentinel);
  ork_tensor a{}, c{};
  a.host = a_.data();
  c.host = got_.data();
  ork_job* j = nullptr;
  ASSERT_EQ(ork_matmul_submit(dev_, w_handle_, &a, M, &c, nullptr, &j), ORK_OK) << ork_last_error();
  EXPECT_EQ(ork_job_wait(j, 0), ORK_E_TIMEOUT);
  EXPECT_TRUE(contains(ork_last_error(), "still in flight")) << ork_last_error();
  EXPECT_EQ(ork_job_wait(j, -1), ORK_E_TIMEOUT);
  EXPECT_TRUE(contains(ork_last_error(), "failed on the device")) << ork_last_error();
  EXPECT_EQ(got_, std::vector<int32_t>(M * N, kSentinel)) << "a failed job wrote C";
  ork_job_release(j);
  ASSERT_EQ(ork_matmul_submit(dev_, w_handle_, &a, M, &c, nullptr, &j), ORK_OK) << ork_last_error();
  ASSERT_EQ(ork_job_wait(j, -1), ORK_OK) << ork_last_error();
  EXPECT_EQ(got_, want_);
  ork_job_release(j);
}

TEST_P(Injected, CoreStillWedgedAfterResetIsNamed) {
  open("job:wedge x*");
  ASSERT_EQ(make_weights(), ORK_OK) << ork_last_error();
  EXPECT_EQ(run(), ORK_E_TIMEOUT);
  EXPECT_FALSE(contains(ork_last_error(), "still wedged")) << ork_last_error();
  EXPECT_EQ(run(), ORK_E_TIMEOUT);
  EXPECT_TRUE(contains(ork_last_error(), "still wedged after its reset")) << ork_last_error();
  faults().rules.clear();  // the core comes back (a power cycle, on a board)
  expect_exact();
  expect_exact();
}

// A real DMA fault: the job's output address is moved outside every BO. The job fails, the
// caller's C is not written, and the device computes exactly afterwards.
TEST_P(Injected, DmaOutsideEveryBoFailsTheJobOnly) {
  open("job:stray");
  ASSERT_EQ(make_weights(), ORK_OK) << ork_last_error();
  EXPECT_EQ(run(1), ORK_E_DEVICE);
  EXPECT_STRNE(ork_last_error(), "");
  EXPECT_EQ(got_, std::vector<int32_t>(M * N, kSentinel)) << "C was written by a failed job";
  expect_rules_spent();
  expect_exact();
}

TEST_P(Injected, DmaErrorBitFailsTheJobAndTheNextCallWorks) {
  open("job:dma");
  ASSERT_EQ(make_weights(), ORK_OK) << ork_last_error();
  EXPECT_EQ(run(), ORK_E_DEVICE);
  EXPECT_EQ(got_, std::vector<int32_t>(M * N, kSentinel));
  expect_exact();
}

// The node vanishes mid-run (a driver unbind, a hot-unplug): the ioctl that meets it and
// every later call fail with a clear status; destroying the weights and closing work.
TEST_P(Injected, DeviceNodeVanishingMidRunFailsEveryLaterCallCleanly) {
  open("");
  ASSERT_EQ(make_weights(), ORK_OK) << ork_last_error();
  expect_exact();
  const uint64_t ioctls = dev_->fake->stats().ioctls;
  faults().rules = *ork::emu::parse_fault_spec("device:gone@2");  // mid-call: its 2nd ioctl
  EXPECT_EQ(run(), ORK_E_NO_DEVICE) << ork_last_error();
  EXPECT_TRUE(contains(ork_last_error(), "ENODEV")) << ork_last_error();
  EXPECT_TRUE(faults().gone);
  EXPECT_GE(dev_->fake->stats().ioctls, ioctls + 2);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(run(), ORK_E_NO_DEVICE) << ork_last_error();
  ork_weights* w2 = nullptr;
  EXPECT_EQ(ork_weights_create(dev_, ORK_DTYPE_INT8, K, N, w_.data(), &w2), ORK_E_NO_DEVICE) << ork_last_error();
  EXPECT_EQ(w2, nullptr);
  std::vector<int32_t> c5(5 * N);  // a new shape: its buffers cannot be made either
  EXPECT_EQ(ork_matmul(dev_, w_handle_, a_.data(), 5, c5.data(), nullptr), ORK_E_NO_DEVICE);
  // TearDown destroys the weights and closes the device on the vanished node.
}

TEST_P(Injected, DeviceGoneBeforeOpenIsNoDevice) {
  ork_device* d = nullptr;
  EXPECT_EQ(open_with_faults(GetParam(), "device:gone", &d), ORK_E_NO_DEVICE);
  EXPECT_EQ(d, nullptr);
}

// One submit carrying several jobs (three cores; rocket: a job per task as well) with the
// fault in the middle one: the call fails with the job's error, the others' results are not
// passed off as C, and the next call is exact.
TEST_P(Injected, FaultInTheMiddleOfAMultiJobSubmit) {
  open("");
  ASSERT_EQ(make_weights(), ORK_OK) << ork_last_error();
  const auto s0 = dev_->fake->stats();
  expect_exact();
  const auto s1 = dev_->fake->stats();
  uint64_t kicks = 0;
  for (int c = 0; c < 3; ++c) kicks += s1.pc_kicks[c] - s0.pc_kicks[c];
  ASSERT_EQ(s1.submits - s0.submits, 1u);
  ASSERT_GE(kicks, 3u) << "the call no longer runs several jobs per submit";
  for (const char* spec : {"job:wedge@2", "job:stray@2", "job:dma@2"}) {
    faults().rules = *ork::emu::parse_fault_spec(spec);
    EXPECT_NE(run(), ORK_OK) << spec;
    EXPECT_STRNE(ork_last_error(), "") << spec;
    expect_rules_spent();
    expect_exact();
  }
}

// Under concurrency: four threads share the device (its queue, docs/library.md) through an
// EINTR storm on every ioctl and three submits failing with EIO. Each call is either exact
// or fails with ORK_E_DEVICE; exactly the three injected submits fail (so no error leaks to
// another thread's call), every rule fires, and each thread's next call is exact.
TEST_P(Injected, FaultsWhileFourThreadsShareTheDevice) {
  open("submit:eio@7x3,ioctl:eintr@5x200");  // EIO first: where both fire, it wins
  ASSERT_EQ(make_weights(), ORK_OK) << ork_last_error();
  constexpr int kThreads = 4, kCalls = 12;
  std::atomic<int> exact{0}, failed{0}, wrong{0};
  auto drive = [&](int t) {
    std::vector<int32_t> got;
    for (int i = 0; i < kCalls; ++i) {
      got.assign(M * N, kSentinel);
      ork_matmul_options opt{.struct_size = sizeof(opt), .cores = 1 + (t + i) % 3, .mc_cap = 0};
      const ork_status s = ork_matmul(dev_, w_handle_, a_.data(), M, got.data(), &opt);
      if (s == ORK_OK && got == want_) ++exact;
      else if (s == ORK_E_DEVICE) ++failed;
      else ++wrong;
    }
  };
  std::vector<std::thread> pool;
  for (int t = 0; t < kThreads; ++t) pool.emplace_back(drive, t);
  for (auto& th : pool) th.join();
  EXPECT_EQ(wrong.load(), 0) << "a call returned a wrong C or an unexpected status";
  EXPECT_EQ(failed.load(), 3);
  EXPECT_EQ(exact.load(), kThreads * kCalls - 3);
  expect_rules_spent();
  pool.clear();
  exact = 0;
  for (int t = 0; t < kThreads; ++t)
    pool.emplace_back([&] {
      std::vector<int32_t> got(M * N, kSentinel);
      ork_matmul_options opt{.struct_size = sizeof(opt), .cores = 3, .mc_cap = 0};
      if (ork_matmul(dev_, w_handle_, a_.data(), M, got.data(), &opt) == ORK_OK && got == want_) ++exact;
    });
  for (auto& th : pool) th.join();
  EXPECT_EQ(exact.load(), kThreads);
}

// fd exhaustion: in a child whose RLIMIT_NOFILE leaves no descriptor free, opening a
// device fails cleanly (no crash, a message); with the limit back, the same child works.
TEST_P(Injected, FdExhaustionFailsTheOpenCleanly) {
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    rlimit old{};
    ::getrlimit(RLIMIT_NOFILE, &old);
    std::vector<int> held;  // use every descriptor below a low limit
    rlimit low = old;
    low.rlim_cur = 64;
    if (::setrlimit(RLIMIT_NOFILE, &low) != 0) ::_exit(10);
    const int base = ::open("/dev/null", O_RDONLY);
    if (base < 0) ::_exit(14);
    for (int fd; (fd = ::dup(base)) >= 0;) held.push_back(fd);
    ork_device* d = nullptr;
    const ork_status s = ork_device_open(GetParam(), &d);
    if (s == ORK_OK || d != nullptr) ::_exit(11);
    if (std::string(ork_last_error()).empty()) ::_exit(12);
    for (int fd : held) ::close(fd);
    if (ork_device_open(GetParam(), &d) != ORK_OK) ::_exit(13);
    ork_device_close(d);
    ::_exit(0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << "the child died of signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 0) << "10 setrlimit, 11 opened anyway, 12 no message, 13 not usable after";
}

INSTANTIATE_TEST_SUITE_P(BothInterfaces, Injected, ::testing::Values("emu-rknpu", "emu-rocket"),
                         [](const auto& info) { return std::string(info.param) == "emu-rknpu" ? "rknpu" : "rocket"; });

}  // namespace
