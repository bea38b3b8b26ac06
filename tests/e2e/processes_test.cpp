// Two processes on one device at once (docs/library.md, "Processes"): each forks off, opens
// the device, makes its own weights and checks every cell of its calls against the CPU
// reference. $ORK_TEST_DEVICES lists the devices (comma-separated): emu and emu-rocket give
// each process its own fake kernel; under the LD_PRELOAD shim, rknpu and rocket run the real
// backends against the shim's kernel, a copy per process.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "lib/ref/oracle.h"
#include "lib/ref/random.h"
#include "ork/ork.h"

namespace {

constexpr int64_t kM = 8, kK = 256, kN = 128;
constexpr int kCalls = 20;

// The child's whole life: 0 when every cell of every call matched, else 1 (2: setup failed).
int child(const std::string& device, uint64_t seed) {
  ork_device* dev = nullptr;
  if (ork_device_open(device.c_str(), &dev) != ORK_OK) return 2;
  const auto w = ork::ref::random_int8(kK * kN, seed);
  ork_weights* weights = nullptr;
  if (ork_weights_create(dev, ORK_DTYPE_INT8, kK, kN, w.data(), &weights) != ORK_OK) return 2;
  int rc = 0;
  for (int i = 0; i < kCalls && rc == 0; ++i) {
    const auto a = ork::ref::random_int8(kM * kK, seed * 100 + static_cast<uint64_t>(i));
    std::vector<int32_t> want(kM * kN), got(kM * kN, -1);
    if (!ork::ref::matmul_int8(a, w, want, {kM, kK, kN}).ok()) return 2;
    if (ork_matmul(dev, weights, a.data(), kM, got.data(), nullptr) != ORK_OK || got != want) rc = 1;
  }
  ork_weights_destroy(weights);
  ork_device_close(dev);
  return rc;
}

std::vector<std::string> devices() {
  const char* env = std::getenv("ORK_TEST_DEVICES");
  std::vector<std::string> out;
  std::stringstream in(env && *env ? env : "emu,emu-rocket");
  for (std::string d; std::getline(in, d, ',');) out.push_back(d);
  return out;
}

TEST(Processes, TwoProcessesOnOneDeviceDoNotCorruptEachOther) {
  for (const std::string& device : devices()) {
    std::vector<pid_t> kids;
    for (uint64_t seed : {11u, 23u}) {
      pid_t pid = ::fork();
      ASSERT_GE(pid, 0);
      if (pid == 0) ::_exit(child(device, seed));
      kids.push_back(pid);
    }
    for (pid_t pid : kids) {
      int status = 0;
      ASSERT_EQ(::waitpid(pid, &status, 0), pid);
      ASSERT_TRUE(WIFEXITED(status)) << device;
      EXPECT_EQ(WEXITSTATUS(status), 0) << device << ": 1 = wrong cells, 2 = the device or weights failed";
    }
  }
}

}  // namespace
