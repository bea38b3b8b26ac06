// ork_session_run_token when host memory runs out (lib/api/model_api.cpp): the activations of a
// 2^20-wide model at M = 2048 (2 GiB each) under an address-space limit that cannot hold
// them. The allocation fails on the executor's device thread; that once ended the host
// process in std::terminate, now the call returns ORK_E_NO_MEMORY naming the cause and the
// session runs again once the memory is there. In a child process (it lowers its own limit).
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "include/ork/ork.h"
#include "tests/support/address_space_limit.h"
#include "lib/exec/pack_file.h"

namespace {

constexpr int64_t kWide = int64_t{1} << 20;

// One layer of one 2^20 x 1 int8 matmul (33 MB packed); the output is the input.
std::string write_wide_model() {
  const std::string path = (std::filesystem::temp_directory_path() / ("ork_wide_" + std::to_string(getpid()) + ".ork")).string();
  ork::exec::ModelDesc d;
  d.hidden = kWide;
  d.layers = 1;
  d.matmuls.push_back({"w", "", kWide, 1, {"x"}, 20, {}});
  d.output = {"x"};
  auto w = ork::exec::PackWriter::create(path, d);
  EXPECT_TRUE(w) << w.error().message;
  std::vector<int8_t> weights(static_cast<size_t>(kWide), 3);
  EXPECT_TRUE(w->add(0, 0, weights.data()));
  EXPECT_TRUE(w->finish());
  return path;
}

uint64_t mapped_bytes() {
  std::FILE* f = std::fopen("/proc/self/statm", "r");
  unsigned long long pages = 0;
  if (f == nullptr || std::fscanf(f, "%llu", &pages) != 1) std::abort();
  std::fclose(f);
  return pages * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
}

// The child's body: 0 when the run fails with ORK_E_NO_MEMORY and a message naming it and a
// smaller M then runs; else a code saying which step went wrong.
int run_out_of_memory(const std::string& path, const char* device_name) {
  ork_device* dev = nullptr;
  ork_model* model = nullptr;
  if (ork_device_open(device_name, &dev) != ORK_OK || ork_model_open(path.c_str(), &model) != ORK_OK) return 10;
  ork_session_options o{};
  o.struct_size = sizeof o;
  o.budget_bytes = 64 << 20;
  o.m = 2048;
  ork_session* big = nullptr;
  if (ork_session_create(dev, model, &o, &big) != ORK_OK) return 11;
  rlimit r{};
  getrlimit(RLIMIT_AS, &r);
  r.rlim_cur = mapped_bytes() + (uint64_t{1} << 30);  // 1 GiB more: not one activation of 2 GiB
  if (setrlimit(RLIMIT_AS, &r) != 0) return 12;
  if (ork_session_run_token(big, nullptr, 0) != ORK_E_NO_MEMORY) return 13;
  if (std::string(ork_last_error()).find("out of host memory") == std::string::npos) return 14;
  ork_session_destroy(big);
  o.m = 1;
  ork_session* small = nullptr;
  if (ork_session_create(dev, model, &o, &small) != ORK_OK) return 15;
  if (ork_session_run_token(small, nullptr, 0) != ORK_OK) return 16;
  ork_session_destroy(small);
  ork_model_close(model);
  ork_device_close(dev);
  return 0;
}

// Under AddressSanitizer the throwing operator new never throws: its allocator reports
// "out-of-memory" and ends the process (compiler-rt asan_new_delete.cpp, whatever
// allocator_may_return_null says), and a lowered RLIMIT_AS starves its shadow memory. What
// this test checks does not exist there; it runs in the native builds (under qemu-user the
// limit itself is not applied: the probe below).
#if defined(__SANITIZE_ADDRESS__)
#define ORK_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ORK_UNDER_ASAN 1
#endif
#endif

TEST(SessionMemory, ActivationsThatDoNotFitAreNoMemoryNotAnAbort) {
#ifdef ORK_UNDER_ASAN
  GTEST_SKIP() << "AddressSanitizer's operator new reports out-of-memory instead of throwing";
#endif
  if (!ork::test::address_space_limit_applies()) GTEST_SKIP() << "RLIMIT_AS is not applied here (qemu-user)";
  const std::string path = write_wide_model();
  for (const char* device : {"cpu", "emu", "emu-rocket"}) {
    SCOPED_TRACE(device);
    EXPECT_EXIT(std::exit(run_out_of_memory(path, device)), ::testing::ExitedWithCode(0), "");
  }
  std::filesystem::remove(path);
}

}  // namespace
