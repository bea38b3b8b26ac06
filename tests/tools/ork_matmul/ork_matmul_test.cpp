// ork_matmul run as a user would: C equals a plain loop on every backend, --json, --quiet
// and --cores, and bad files exit 2 naming the file and the problem.
// Part of meson test 'tool_runs' (the fixture: tests/tools/tool_runs.h).
#include <nlohmann/json.hpp>

#include "tests/tools/tool_runs.h"

namespace ork::tools::test {
namespace {

TEST_F(ToolRuns, OrkMatmulMatchesAPlainLoopOnEveryBackend) {
  struct Case { int64_t m, k, n; int major; };
  for (const Case& cs : {Case{1, 32, 32, 1}, Case{5, 64, 40, 2}, Case{130, 96, 64, 3}}) {
    const std::string a = path("a.npy"), b = path("b.npy"), c = path("c.npy");
    auto av = write_int8(a, cs.m, cs.k, 7, cs.major);
    auto bv = write_int8(b, cs.k, cs.n, 11, cs.major);
    const auto want = plain_matmul(av, bv, cs.m, cs.k, cs.n);
    for (const char* dev : {"emu-rknpu", "emu-rocket", "cpu"}) {
      SCOPED_TRACE(::testing::Message() << dev << " " << cs.m << "x" << cs.k << "x" << cs.n);
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

}  // namespace
}  // namespace ork::tools::test
