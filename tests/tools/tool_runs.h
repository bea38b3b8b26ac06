// The fixture of the tool-run tests (meson test 'tool_runs': tests/tools/ork_info,
// ork_matmul and sparse_check): the tools' paths from the environment, scratch files, .npy
// inputs written with tools/common's writer (no numpy here), and a plain-loop matmul.
#pragma once

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "tests/tools/tool_runner.h"
#include "tools/common/npy.h"

namespace ork::tools::test {

inline bool contains(const std::string& hay, const std::string& needle) {
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

inline std::vector<int32_t> plain_matmul(const std::vector<int8_t>& a, const std::vector<int8_t>& b,
                                         int64_t m, int64_t k, int64_t n) {
  std::vector<int32_t> c(static_cast<size_t>(m * n), 0);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j)
      for (int64_t x = 0; x < k; ++x) c[i * n + j] += int32_t{a[i * k + x]} * b[x * n + j];
  return c;
}

inline std::vector<int32_t> read_c(const std::string& file, int64_t rows, int64_t cols) {
  Result<NpyMatrix> m = npy_read_matrix(file, NpyDtype::int32);
  EXPECT_TRUE(m.ok()) << (m.ok() ? "" : m.error().message);
  if (!m.ok()) return {};
  EXPECT_EQ(m->rows, rows);
  EXPECT_EQ(m->cols, cols);
  std::vector<int32_t> c(m->bytes.size() / 4);
  std::memcpy(c.data(), m->bytes.data(), m->bytes.size());
  return c;
}

}  // namespace ork::tools::test
