// The checks of sizes taken from a tool's input (tools/common/input_limits.cpp): memory and
// disk bounds naming the flag, a bounded whole-file read that refuses directories, files over
// the limit and endless devices, and the same-file test that keeps an output off an input.
#include <sys/resource.h>

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>

#include "tests/support/address_space_limit.h"
#include "tools/common/input_limits.h"

namespace ork::tools {
namespace {

namespace fs = std::filesystem;

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

class InputLimits : public testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("ork_input_limits_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string write(const std::string& name, const std::string& bytes) {
    const std::string path = (dir_ / name).string();
    std::ofstream(path, std::ios::binary) << bytes;
    return path;
  }
  fs::path dir_;
};

TEST(HumanBytes, PicksTheLargestUnitBelowTheValue) {
  EXPECT_EQ(human_bytes(0), "0 B");
  EXPECT_EQ(human_bytes(1023), "1023 B");
  EXPECT_EQ(human_bytes(1536), "1.50 KiB");
  EXPECT_EQ(human_bytes(uint64_t{3} << 60), "3.00 EiB");
}

TEST_F(InputLimits, MemoryAndDiskChecksNameTheFlagWhenTooBig) {
  ASSERT_TRUE(available_memory().has_value()) << "/proc/meminfo";
  EXPECT_EQ(check_memory("--slots 1", 1), "");
  const std::string m = check_memory("--slots 99", UINT64_MAX);
  EXPECT_TRUE(has(m, "--slots 99 needs 16.00 EiB of memory")) << m;
  const std::string not_yet = (dir_ / "out.bin").string();  // absent: its directory's space
  ASSERT_TRUE(free_disk(not_yet).has_value());
  EXPECT_EQ(check_disk("-o", not_yet, 1), "");
  const std::string d = check_disk("-o", not_yet, UINT64_MAX);
  EXPECT_TRUE(has(d, "-o needs 16.00 EiB on the file system of " + not_yet)) << d;
}

TEST_F(InputLimits, ReadFileBoundedReadsUpToTheLimit) {
  const std::string path = write("a.txt", "hello");
  std::string out;
  EXPECT_EQ(read_file_bounded("--spec", path, 5, &out), "");
  EXPECT_EQ(out, "hello");
  const std::string e = read_file_bounded("--spec", path, 4, &out);
  EXPECT_TRUE(has(e, "--spec " + path + ": 5 B is larger than the 4 B this tool reads")) << e;
  EXPECT_EQ(out, "");
}

TEST_F(InputLimits, ReadFileBoundedRefusesDirectoriesMissingFilesAndEndlessDevices) {
  std::string out;
  const std::string dir = read_file_bounded("MODEL", dir_.string(), 1024, &out);
  EXPECT_TRUE(has(dir, "MODEL " + dir_.string() + ": is a directory")) << dir;
  const std::string missing = read_file_bounded("MODEL", (dir_ / "none").string(), 1024, &out);
  EXPECT_TRUE(has(missing, "cannot read: No such file or directory")) << missing;
  const std::string zero = read_file_bounded("--a", "/dev/zero", 1 << 20, &out);
  EXPECT_TRUE(has(zero, "--a /dev/zero: is a character device, not a regular file")) << zero;
  EXPECT_EQ(out, "") << "nothing is kept from a refused read";
}

TEST_F(InputLimits, AnOutputThatIsAnInputIsRefusedWhateverItsName) {
  const std::string a = write("a.npy", "x"), b = write("b.npy", "y");
  const std::string link = (dir_ / "alias.npy").string();
  fs::create_hard_link(a, link);
  EXPECT_EQ(check_not_an_input({"--out", b}, {{"--a", a}}), "");
  EXPECT_EQ(check_not_an_input({"--out", (dir_ / "new.npy").string()}, {{"--a", a}}), "") << "not there yet";
  const std::string e = check_not_an_input({"--out", link}, {{"--b", b}, {"--a", a}});
  EXPECT_EQ(e, "--out " + link + " is the same file as the input --a " + a + ": refusing to overwrite an input");
}

TEST(DefaultMemoryBudget, HalfOfMemAvailableInWholeMiBElse512MiB) {
  constexpr uint64_t kMiB = uint64_t{1} << 20;
  EXPECT_EQ(default_memory_budget(uint64_t{8} << 30), uint64_t{4} << 30);
  EXPECT_EQ(default_memory_budget(3 * kMiB + 1), kMiB) << "1.5 MiB rounds down to 1";
  EXPECT_EQ(default_memory_budget(2 * kMiB - 1), 0u);
  EXPECT_EQ(default_memory_budget(std::nullopt), 512 * kMiB);
}

// Under ulimit -v the memory available is what the address-space limit leaves, when that is
// less than MemAvailable: a size checked against MemAvailable alone passed and then aborted
// in std::bad_alloc. In a child process, which lowers its own limit.
TEST(AvailableMemory, IsBoundedByTheAddressSpaceLimit) {
  if (!ork::test::address_space_limit_applies()) GTEST_SKIP() << "RLIMIT_AS is not applied here (qemu-user)";
  constexpr uint64_t kRoom = uint64_t{256} << 20;
  const auto unlimited = available_memory();
  ASSERT_TRUE(unlimited);
  ASSERT_GT(*unlimited, 2 * kRoom) << "the machine has too little memory for this test to tell the two apart";
  EXPECT_EXIT(
      {
        std::FILE* f = std::fopen("/proc/self/statm", "r");
        unsigned long long pages = 0;
        if (f == nullptr || std::fscanf(f, "%llu", &pages) != 1) std::exit(3);
        std::fclose(f);
        rlimit r{};
        getrlimit(RLIMIT_AS, &r);
        r.rlim_cur = pages * static_cast<uint64_t>(sysconf(_SC_PAGESIZE)) + kRoom;
        if (setrlimit(RLIMIT_AS, &r) != 0) std::exit(3);
        const auto limited = available_memory();
        if (!limited || *limited > kRoom) std::exit(4);
        const std::string e = check_memory("--m 4096", uint64_t{1} << 30);
        std::exit(e.rfind("--m 4096 needs 1.00 GiB of memory; ", 0) == 0 && e.find("RLIMIT_AS") != std::string::npos ? 0 : 5);
      },
      ::testing::ExitedWithCode(0), "");
}

TEST_F(InputLimits, CheckWritableLeavesFilesAsTheyWereAndNamesWhatFails) {
  const std::string kept = write("kept.json", "abc");
  EXPECT_EQ(check_writable("--trace", kept), "");
  std::ifstream in(kept);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), "abc") << "an existing file is not truncated";
  const std::string fresh = (dir_ / "fresh.json").string();
  EXPECT_EQ(check_writable("--trace", fresh), "");
  EXPECT_FALSE(fs::exists(fresh)) << "a file made by the check is removed again";
  const std::string missing = (dir_ / "no" / "t.json").string();
  EXPECT_EQ(check_writable("--trace", missing),
            "--trace " + missing + ": cannot create a file in its directory: ENOENT (No such file or directory)");
  EXPECT_EQ(check_writable("--plan-out", dir_.string()),
            "--plan-out " + dir_.string() +
                ": a directory, not a regular file: refusing to write it (outputs are new paths or regular files)");
  // A FIFO is never opened (that would block until a reader came): refused by what it is.
  const std::string fifo = (dir_ / "out.fifo").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_EQ(check_writable("--trace", fifo), "--trace " + fifo +
                                                 ": a FIFO, not a regular file: refusing to write it (outputs are new "
                                                 "paths or regular files)");
  EXPECT_TRUE(fs::is_fifo(fifo));
  int left = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir_))
    left += e.path().filename().string().find(".tmp-") != std::string::npos;
  EXPECT_EQ(left, 0) << "the check's temporary file is removed again";
}

}  // namespace
}  // namespace ork::tools
