// ork_regdump end to end: a file of raw entries in, named writes out; exit codes.
#include <gtest/gtest.h>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "tests/support/scratch_dir.h"
#include "driver/regcmd/regcmd.h"

namespace {

struct ToolRun { int code; std::string out; };

// `env`: assignments put before the command (shell syntax), "" for none.
ToolRun run(const std::string& args, const std::string& env = "") {
  const char* tool = std::getenv("ORK_REGDUMP");
  const bool want_stderr = args.find("2>&1") != std::string::npos;  // else discarded
  std::string cmd = env + std::string(tool ? tool : "ork_regdump") + " " + args + (want_stderr ? "" : " 2>/dev/null");
  FILE* p = popen(cmd.c_str(), "r");
  ToolRun r{-1, {}};
  if (p == nullptr) return r;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  const int status = pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

std::string write_file(const std::vector<uint64_t>& entries, const char* name) {
  const std::string path = ork::test::process_scratch().file(name);
  std::ofstream f(path, std::ios::binary);
  for (uint64_t e : entries)
    for (int b = 0; b < 8; ++b) f.put(static_cast<char>((e >> (8 * b)) & 0xff));  // little-endian
  return path;
}

TEST(Regdump, PrintsNamedWrites) {
  ork::regcmd::Builder b;
  b.emit(ork::regs::CnaDataSize0{.datain_height = 64, .datain_width = 1});
  b.finish(0, 0);
  const ToolRun r = run(write_file({b.entries().begin(), b.entries().end()}, "rd1.bin"));
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(r.out,
            "    0 0201000100401020  CNA_DATA_SIZE0 0x1020 = 0x00010040 DATAIN_HEIGHT=64 DATAIN_WIDTH=1\n"
            "    1 0000000000000000  PADDING\n"
            "    2 0000000000000000  PADDING\n"
            "    3 0000000000000000  PADDING\n"
            "    4 0041000000000000  TRAILER_MARKER target 0x0041 reg 0x0000 = 0x00000000\n"
            "    5 00810000000d0008  GLOBAL_OPERATION_ENABLE 0x0008 = 0x0000000d CNA_OP_EN=1 CORE_OP_EN=1 "
            "DPU_OP_EN=1 DPU_RDMA_OP_EN=0 PPU_OP_EN=0 PPU_RDMA_OP_EN=0\n"
            "6 entries, 0 unknown\n");
}

TEST(Regdump, CheckFailsOnUnknownRegisters) {
  const std::string path = write_file({ork::regcmd::encode(0x0201, 7, 0x1ffc)}, "rd2.bin");
  EXPECT_EQ(run(path).code, 0);
  const ToolRun r = run("--check " + path);
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find("register 0x1ffc is not in the description for target 0x0201"), std::string::npos) << r.out;
}

TEST(Regdump, JsonNamesFields) {
  const std::string path = write_file({ork::regcmd::encode(0x1001, 8191, 0x403c)}, "rd3.bin");
  const ToolRun r = run("--json " + path);
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("\"name\": \"DPU_DATA_CUBE_CHANNEL\""), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"CHANNEL\": 8191"), std::string::npos) << r.out;
}

TEST(Regdump, BadUsageExitsTwo) {
  EXPECT_EQ(run(ork::test::process_scratch().file("does-not-exist.bin")).code, 2);
  std::ofstream(ork::test::process_scratch().file("rd4.bin"), std::ios::binary) << "12345";  // not 8-byte entries
  EXPECT_EQ(run(ork::test::process_scratch().file("rd4.bin")).code, 2);
  EXPECT_EQ(run("--no-such-flag x").code, 2);
  EXPECT_EQ(run("--help").code, 0);
  EXPECT_EQ(run("--offset -8 " + ork::test::process_scratch().file("rd4.bin")).code, 2);
}

// Inputs that once aborted (a directory: std::ios_failure) or read without end (/dev/zero).
TEST(Regdump, DirectoriesAndEndlessDevicesAreRefused) {
  ToolRun r = run(ork::test::process_scratch().path().string() + "/ 2>&1");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.out.find("is a directory, not a regular file"), std::string::npos) << r.out;
  r = run("/dev/zero 2>&1");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.out.find("is a character device, not a regular file"), std::string::npos) << r.out;
}

// A 2 MiB file (256k entries) as JSON in bounded memory: entries are decoded and printed a
// window at a time (as one JSON document it took ~55 bytes of memory per file byte: 110 MB
// here, 3.5 GB for 64 MB). The tool runs in a forked child so that its peak RSS is the
// only one RUSAGE_CHILDREN sees (the /dev/zero case above reads 256 MiB).
TEST(Regdump, LargeFileInBoundedMemory) {
  const std::string path = write_file(std::vector<uint64_t>(1 << 18, ork::regcmd::kPadding), "rd5.bin");
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    // Under AddressSanitizer (build-san) freed blocks wait in its quarantine (256 MiB by
    // default) and count in the RSS: turned off for this run, so that the figure is the
    // tool's live memory in every build. Other builds ignore the variable.
    const ToolRun r = run("--json " + path + " >/dev/null",
                          "ASAN_OPTIONS=\"${ASAN_OPTIONS:-}:quarantine_size_mb=0:thread_local_quarantine_size_kb=0\" ");
    rusage usage{};
    getrusage(RUSAGE_CHILDREN, &usage);
    _exit(r.code != 0 ? 255 : static_cast<int>(std::min<long>(usage.ru_maxrss / 1024, 254)));  // MiB
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  const int peak_mib = WEXITSTATUS(status);
  EXPECT_NE(peak_mib, 255) << "ork_regdump failed";
  EXPECT_LT(peak_mib, 64) << "peak RSS of ork_regdump, MiB";
}

}  // namespace
