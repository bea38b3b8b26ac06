// Runs the installed-to-be tools (ork_info, ork_matmul, sparse_check) as a user would and
// checks exit codes, JSON output, the bytes of C and the error messages. The .npy inputs
// are written with tools/common's writer (no numpy here).
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/tools/tool_runner.h"
#include "tools/common/npy.h"

namespace ork::tools::test {
namespace {

bool contains(const std::string& hay, const std::string& needle) {
  return hay.find(needle) != std::string::npos;
}

class ToolRuns : public ::testing::Test {
 protected:
  void SetUp() override {
    ork_info_ = tool_path("ORK_INFO");
    ork_matmul_ = tool_path("ORK_MATMUL");
    sparse_check_ = tool_path("SPARSE_CHECK");
    ASSERT_FALSE(ork_info_.empty() || ork_matmul_.empty() || sparse_check_.empty())
        << "run through meson test: ORK_INFO, ORK_MATMUL, SPARSE_CHECK name the binaries";
    dir_ = ::testing::TempDir() + "ork_tool_runs_" + std::to_string(getpid()) + "_";
  }
  void TearDown() override {
    for (const std::string& f : files_) std::remove(f.c_str());
  }

  std::string path(const std::string& name) {
    files_.push_back(dir_ + name);
    return files_.back();
  }

  // A seeded int8 matrix written as a .npy; returns its values.
  std::vector<int8_t> write_int8(const std::string& file, int64_t rows, int64_t cols,
                                 uint32_t seed, int major = 1) {
    std::vector<int8_t> v(static_cast<size_t>(rows * cols));
    for (auto& x : v) {
      seed = seed * 1664525u + 1013904223u;  // Numerical Recipes LCG: deterministic test data
      x = static_cast<int8_t>(seed >> 24);
    }
    const auto* p = reinterpret_cast<const uint8_t*>(v.data());
    EXPECT_TRUE(npy_write_matrix(file, NpyDtype::int8, rows, cols, {p, v.size()}, major).ok());
    return v;
  }

  void write_raw(const std::string& file, const std::string& bytes) {
    std::vector<uint8_t> b(bytes.begin(), bytes.end());
    ASSERT_TRUE(write_file(file, b).ok());
  }

  std::string ork_info_, ork_matmul_, sparse_check_, dir_;
  std::vector<std::string> files_;
};

std::vector<int32_t> plain_matmul(const std::vector<int8_t>& a, const std::vector<int8_t>& b,
                                  int64_t m, int64_t k, int64_t n) {
  std::vector<int32_t> c(static_cast<size_t>(m * n), 0);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j)
      for (int64_t x = 0; x < k; ++x) c[i * n + j] += int32_t{a[i * k + x]} * b[x * n + j];
  return c;
}

std::vector<int32_t> read_c(const std::string& file, int64_t rows, int64_t cols) {
  Result<NpyMatrix> m = npy_read_matrix(file, NpyDtype::int32);
  EXPECT_TRUE(m.ok()) << (m.ok() ? "" : m.error().message);
  if (!m.ok()) return {};
  EXPECT_EQ(m->rows, rows);
  EXPECT_EQ(m->cols, cols);
  std::vector<int32_t> c(m->bytes.size() / 4);
  std::memcpy(c.data(), m->bytes.data(), m->bytes.size());
  return c;
}

TEST_F(ToolRuns, OrkInfoJsonListsEveryBackend) {
  RunResult r = run_tool({ork_info_, "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["api_version"], 3);
  ASSERT_EQ(j["devices"].size(), 6u);
  std::vector<std::string> names;
  for (const auto& d : j["devices"]) names.push_back(d["name"]);
  EXPECT_EQ(names, (std::vector<std::string>{"rknpu", "rocket", "emu-rknpu", "emu-rocket", "cpu",
                                             "default"}));
  for (int i : {0, 1}) {  // no NPU on a build machine: both real drivers fail with a reason
    EXPECT_EQ(j["devices"][i]["opened"], false);
    EXPECT_EQ(j["devices"][i]["status"], "ORK_E_NO_DEVICE");
    EXPECT_FALSE(j["devices"][i]["error"].get<std::string>().empty());
  }
  const auto& emu_rknpu = j["devices"][2];
  EXPECT_EQ(emu_rknpu["opened"], true);
  EXPECT_EQ(emu_rknpu["backend"], "emu");
  EXPECT_EQ(emu_rknpu["kernel_interface"], "rknpu");
  EXPECT_EQ(emu_rknpu["emulated"], true);
  EXPECT_EQ(emu_rknpu["cores"], 3);
  EXPECT_EQ(j["devices"][3]["kernel_interface"], "rocket");
  EXPECT_EQ(j["devices"][4]["backend"], "cpu");
  EXPECT_EQ(j["devices"][4]["cores"], 3);  // the NPU's range: cores as host threads
  EXPECT_EQ(j["devices"][5]["backend"], "emu");  // default = auto = emu off the board
}

// ork_info --stats: the counters after its workload (4 decode calls on two weights).
TEST_F(ToolRuns, OrkInfoStatsReportsTheWorkload) {
  RunResult r = run_tool({ork_info_, "--stats", "--stats-calls", "4"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["devices"].size(), 3u);
  for (const auto& d : j["devices"]) {
    SCOPED_TRACE(d["name"].get<std::string>());
    EXPECT_EQ(d["workload"]["exact"], true);
    EXPECT_EQ(d["stats"]["calls"], 4);
    EXPECT_GT(d["stats"]["wall_ns"].get<uint64_t>(), 0u);
    EXPECT_GT(d["memory"]["bytes_resident"].get<uint64_t>(), 1024u * 5120u - 1);  // both weights
    if (d["name"] == "cpu") continue;
    EXPECT_EQ(d["stats"]["context_builds"], 2);  // one per weight
    EXPECT_EQ(d["stats"]["context_hits"], 2);
    EXPECT_GT(d["stats"]["bytes_to_device"].get<uint64_t>(), 0u);
    EXPECT_EQ(d["memory"]["exact"], true);
    EXPECT_GT(d["memory"]["window_free_bytes"].get<uint64_t>(), 0u);
  }
  EXPECT_EQ(j["devices"][1]["stats"]["device_unknown_calls"], 4);  // emu-rocket: no device time
  EXPECT_GT(j["devices"][0]["stats"]["device_ns"].get<uint64_t>(), 0u);
  r = run_tool({ork_info_, "--stats", "--device", "nosuch"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(contains(r.out, "nosuch")) << r.out;
}

TEST_F(ToolRuns, OrkInfoHonoursOrkDeviceAndExitCodes) {
  RunResult r = run_tool({ork_info_, "--json", "--device", "default"}, {"ORK_DEVICE=cpu"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["ork_device_env"], "cpu");
  EXPECT_EQ(j["devices"][0]["backend"], "cpu");

  r = run_tool({ork_info_, "--device", "rknpu"});
  EXPECT_EQ(r.exit_code, 3);  // device unavailable
  EXPECT_TRUE(contains(r.out, "rknpu") && contains(r.out, "failed")) << r.out;
  r = run_tool({ork_info_, "--device", "emu-rocket"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_TRUE(contains(r.out, "opened  backend emu, 3 cores, interface rocket")) << r.out;
  EXPECT_EQ(run_tool({ork_info_, "--no-such-flag"}).exit_code, 2);
  r = run_tool({ork_info_, "--help"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_TRUE(contains(r.out, "--device")) << r.out;
}

TEST_F(ToolRuns, OrkMatmulMatchesAPlainLoopOnEveryBackend) {
  struct Case { int64_t m, k, n; int major; };
  for (const Case& cs : {Case{1, 32, 32, 1}, Case{5, 64, 40, 2}, Case{130, 96, 64, 3}}) {
    const std::string a = path("a.npy"), b = path("b.npy"), c = path("c.npy");
    auto av = write_int8(a, cs.m, cs.k, 7, cs.major);
    auto bv = write_int8(b, cs.k, cs.n, 11, cs.major);
    const auto want = plain_matmul(av, bv, cs.m, cs.k, cs.n);
    for (const char* dev : {"emu-rknpu", "emu-rocket", "cpu"}) {
      SCOPED_TRACE(testing::Message() << dev << " " << cs.m << "x" << cs.k << "x" << cs.n);
      RunResult r = run_tool({ork_matmul_, "--a", a, "--b", b, "--out", c, "--device", dev});
      ASSERT_EQ(r.exit_code, 0) << r.err;
      EXPECT_TRUE(contains(r.err, "on " + std::string(dev))) << r.err;
      EXPECT_EQ(read_c(c, cs.m, cs.n), want);
      std::remove(c.c_str());
    }
  }
}

TEST_F(ToolRuns, OrkMatmulJsonQuietAndCores) {
  const std::string a = path("a.npy"), b = path("b.npy"), c = path("c.npy");
  auto av = write_int8(a, 70, 64, 3);
  auto bv = write_int8(b, 64, 96, 5);
  RunResult r = run_tool({ork_matmul_, "--a", a, "--b", b, "--out", c, "--device", "emu",
                          "--cores", "2", "--mc-cap", "31", "--quiet", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["m"], 70);
  EXPECT_EQ(j["k"], 64);
  EXPECT_EQ(j["n"], 96);
  EXPECT_EQ(j["cores"], 2);
  EXPECT_EQ(j["mc_cap"], 31);
  EXPECT_EQ(j["backend"], "emu");
  EXPECT_EQ(read_c(c, 70, 96), plain_matmul(av, bv, 70, 64, 96));
}

TEST_F(ToolRuns, OrkMatmulBadFilesExitTwoNamingFileAndProblem) {
  const std::string a = path("a.npy"), b = path("b.npy"), c = path("c.npy"), bad = path("bad.npy");
  write_int8(a, 4, 64, 1);
  write_int8(b, 32, 8, 2);  // K = 32 != 64
  struct Case { std::string content, expect; };
  const std::string f4_header = "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1), }";
  std::vector<uint8_t> good;
  {
    std::vector<uint8_t> one(32 * 8, 1);
    good = npy_encode_matrix(NpyDtype::int8, 32, 8, one).value();
  }
  auto with_header = [&](const std::string& dict, size_t data_bytes) {
    std::string h = dict;
    h.append((64 - (10 + h.size() + 1) % 64) % 64, ' ');
    h.push_back('\n');
    std::string s = std::string("\x93NUMPY\x01\x00", 8);
    s.push_back(static_cast<char>(h.size() & 0xFF));
    s.push_back(static_cast<char>(h.size() >> 8));
    return s + h + std::string(data_bytes, '\1');
  };
  const std::vector<Case> cases = {
      {"not a numpy file", "bad magic"},
      {with_header(f4_header, 4), "wrong dtype '<f4'"},
      {with_header("{'descr': '|i1', 'fortran_order': True, 'shape': (64, 8), }", 512),
       "Fortran order"},
      {with_header("{'descr': '|i1', 'fortran_order': False, 'shape': (512,), }", 512),
       "not 2-D"},
      {with_header("{'descr': '|i1', 'fortran_order': False, 'shape': (64, 8), }", 100),
       "truncated data"},
      {with_header("{'descr': '|i1', 'fortran': False, 'shape': (64, 8), }", 512),
       "bad header"},
  };
  for (const Case& cs : cases) {
    write_raw(bad, cs.content);
    RunResult r = run_tool({ork_matmul_, "--a", a, "--b", bad, "--out", c, "--device", "cpu"});
    EXPECT_EQ(r.exit_code, 2) << cs.expect;
    EXPECT_TRUE(contains(r.err, bad + ": " + cs.expect)) << r.err;
  }
  RunResult r = run_tool({ork_matmul_, "--a", a, "--b", b, "--out", c, "--device", "cpu"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(contains(r.err, "K mismatch: " + a + " is 4 x 64")) << r.err;
  r = run_tool({ork_matmul_, "--a", path("missing.npy"), "--b", b, "--out", c});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(contains(r.err, "missing.npy: cannot open: No such file or directory")) << r.err;
  EXPECT_EQ(run_tool({ork_matmul_, "--a", a, "--b", b}).exit_code, 2);  // no --out
  EXPECT_EQ(run_tool({ork_matmul_, "--a", a, "--b", a, "--out", c, "--cores", "4"}).exit_code, 2);
  r = run_tool({ork_matmul_, "--a", a, "--b", a, "--out", c, "--device", "nosuch"});
  EXPECT_EQ(r.exit_code, 2);  // a is 4 x 64: A x A is a K mismatch first
  write_int8(b, 64, 8, 2);
  r = run_tool({ork_matmul_, "--a", a, "--b", b, "--out", c, "--device", "nosuch"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(contains(r.err, "unknown device 'nosuch'")) << r.err;
  FILE* f = std::fopen(c.c_str(), "rb");
  EXPECT_EQ(f, nullptr) << "no output is written when nothing ran";
  if (f) std::fclose(f);
}

TEST_F(ToolRuns, SparseCheckPassesOnSmallShapes) {
  struct Case { std::vector<std::string> args; };
  const std::vector<Case> cases = {
      {{"1", "32", "32"}},
      {{"130", "2048", "96", "3"}},  // M-tiles of 128 at K = 2048: edges 127/128
      {{"65", "64", "40", "2", "--full"}},
      {{"3", "6144", "64", "1"}},    // wide K: K-slices
      {{"70", "512", "64", "--device", "emu-rocket", "--mc-cap", "31", "--full"}},
      {{"33", "96", "64", "--device", "cpu", "--full"}},
  };
  for (const Case& cs : cases) {
    std::vector<std::string> argv = {sparse_check_};
    argv.insert(argv.end(), cs.args.begin(), cs.args.end());
    argv.push_back("--json");
    RunResult r = run_tool(argv);
    SCOPED_TRACE(r.err);
    ASSERT_EQ(r.exit_code, 0) << r.out;
    nlohmann::json j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["ok"], true);
    EXPECT_EQ(j["mismatches"], 0);
    EXPECT_GT(j["cells_checked"].get<int64_t>(), 0);
    if (j["full"] == true) {
      EXPECT_EQ(j["cells_checked"], j["m"].get<int64_t>() * j["n"].get<int64_t>());
    }
  }
}

TEST_F(ToolRuns, SparseCheckTextAndBadUsage) {
  RunResult r = run_tool({sparse_check_, "129", "1024", "64"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "M=129 K=1024 N=64 int8 on default (emu via rknpu)")) << r.out;
  EXPECT_TRUE(contains(r.out, "0 mismatch(es)")) << r.out;
  for (const std::vector<std::string>& bad : std::vector<std::vector<std::string>>{
           {"0", "32", "32"}, {"1", "32"}, {"1", "32", "32", "4"}, {"1", "x", "32"},
           {"1", "32", "32", "--bogus"}, {"1", "32", "32", "--device", "nosuch"},
           {"1", "32", "32", "--device", "cpu", "--mc-cap", "-1"},
           {"9223372036854775807", "9223372036854775807", "2"}, {"3000000000", "4", "4"}}) {
    std::vector<std::string> argv = {sparse_check_};
    argv.insert(argv.end(), bad.begin(), bad.end());
    EXPECT_EQ(run_tool(argv).exit_code, 2) << bad[0] << " " << bad[1];
  }
  r = run_tool({sparse_check_, "64", "96", "64", "--full"}, {"ORK_DEVICE=emu-rocket"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "on default (emu via rocket)")) << r.out;
  // The cpu device takes the NPU's core counts (host threads); 4 is refused as on the NPU.
  r = run_tool({sparse_check_, "64", "96", "64", "3"}, {"ORK_DEVICE=cpu"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  r = run_tool({sparse_check_, "64", "96", "64", "4"}, {"ORK_DEVICE=cpu"});
  EXPECT_EQ(r.exit_code, 2) << "4 cores";
  EXPECT_TRUE(contains(r.err, "cores")) << r.err;
  r = run_tool({sparse_check_, "--help"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_TRUE(contains(r.out, "--full")) << r.out;
}

}  // namespace
}  // namespace ork::tools::test
