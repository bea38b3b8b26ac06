// A fused call's C unpacked straight into each member's output (lib/exec/fusion.h
// member_columns, lib/matmul/layout_host.h unpack_c_columns), with no C of the summed N
// between: members of different N side by side in one BO, run as one K x (N1 + N2 + N3)
// matmul through the runner (the executor's member alone, the projection's measured call)
// and as a matmul job (the executor's fused group), at M = 1 and 128, int8 and fp16, on emu
// and emu-rocket. Each member's output must be, byte for byte, that member run alone on its
// own weights (int8: also the CPU product), so a column range that lands one surface off, or
// in another member's output, fails; a member not kept is not written; a part not on a
// surface boundary is refused.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <random>

#include <fmt/format.h>

#include "lib/api/device.h"
#include "lib/exec/activation.h"
#include "lib/exec/fusion.h"
#include "tests/lib/exec/fused_calls_check.h"
#include "lib/exec/model.h"
#include "lib/matmul/job.h"
#include "lib/matmul/run.h"

namespace ork::exec {
namespace {

// Seeded row-major K x N weights or M x K A: int8 bytes, or fp16 halves of -2..2 (exact sums).
std::vector<uint8_t> columns_seeded(matmul::DType dtype, int64_t rows, int64_t cols, uint32_t seed,
                                    std::vector<int>& values) {
  std::mt19937 rng(seed);
  values.resize(static_cast<size_t>(rows * cols));
  static const uint16_t kHalf[] = {0xc000, 0xbc00, 0x0000, 0x3c00, 0x4000};  // -2, -1, 0, 1, 2
  const bool half = dtype == matmul::DType::fp16;
  std::vector<uint8_t> out(values.size() * (half ? 2 : 1));
  for (size_t i = 0; i < values.size(); ++i) {
    values[i] = half ? static_cast<int>(rng() % 5) - 2 : static_cast<int>(rng() % 256) - 128;
    if (!half) out[i] = static_cast<uint8_t>(values[i]);
    if (half) std::memcpy(&out[2 * i], &kHalf[values[i] + 2], 2);
  }
  return out;
}

std::unique_ptr<driver::Bo> columns_bo(driver::Kmd& kmd, const std::vector<uint8_t>& bytes) {
  auto bo = kmd.bo_create(bytes.size(), driver::BoUsage::data);
  EXPECT_TRUE(bo);
  std::memcpy((*bo)->map(), bytes.data(), bytes.size());
  EXPECT_TRUE(kmd.bo_sync(**bo, driver::SyncDir::to_device));
  return std::move(*bo);
}

std::vector<uint8_t> columns_packed(matmul::DType dtype, int64_t k, int64_t n, const std::vector<uint8_t>& row_major) {
  auto layout = matmul::ResidentWeights::layout(dtype, k, n);
  EXPECT_TRUE(layout) << layout.error().message;
  std::vector<uint8_t> out(static_cast<size_t>(layout->b_bytes()));
  EXPECT_TRUE(matmul::pack_weights(*layout, row_major.data(), out));
  return out;
}

void fused_columns_land(driver::Kmd& kmd, matmul::DType dtype, int64_t m, const char* device) {
  const int64_t k = 256;
  const std::vector<int64_t> ns = {320, 64, 128};  // different N: a shifted range cannot match
  const int64_t n_all = 512;
  std::vector<std::vector<int>> w(ns.size());
  std::vector<uint8_t> concatenated;
  std::vector<std::unique_ptr<driver::Bo>> own;
  for (size_t j = 0; j < ns.size(); ++j) {
    const std::vector<uint8_t> p = columns_packed(dtype, k, ns[j], columns_seeded(dtype, k, ns[j], static_cast<uint32_t>(20 + j), w[j]));
    concatenated.insert(concatenated.end(), p.begin(), p.end());
    own.push_back(columns_bo(kmd, p));
  }
  const std::unique_ptr<driver::Bo> fused = columns_bo(kmd, concatenated);
  std::vector<int> av;
  const std::vector<uint8_t> a = columns_seeded(dtype, m, k, 7, av);
  matmul::MatmulRunner runner(kmd);
  matmul::RunOptions ro;
  ro.cores = 3;
  std::vector<std::vector<uint8_t>> alone(ns.size());  // each member on its own weights
  for (size_t j = 0; j < ns.size(); ++j) {
    auto view = matmul::ResidentWeights::view(*own[j], dtype, k, ns[j], 0);
    ASSERT_TRUE(view) << view.error().message;
    alone[j].assign(static_cast<size_t>(output_bytes(m, ns[j])), 0xa5);
    ASSERT_TRUE(runner.run(**view, a.data(), m, alone[j].data(), ro));
    runner.forget(**view);
  }
  const std::string at = fmt::format("{} {} m {}", device, dtype_key(dtype), m);
  for (size_t j = 0; j < ns.size() && dtype == matmul::DType::int8; ++j)
    for (int64_t r = 0; r < m; ++r)
      for (int64_t x = 0; x < ns[j]; ++x) {
        int32_t want = 0, got = 0;
        for (int64_t kk = 0; kk < k; ++kk) want += av[static_cast<size_t>(r * k + kk)] * w[j][static_cast<size_t>(kk * ns[j] + x)];
        std::memcpy(&got, &alone[j][static_cast<size_t>(output_bytes(r, ns[j]) + output_bytes(1, x))], 4);
        ASSERT_EQ(got, want) << at << " member " << j << " row " << r << " col " << x;
      }
  auto wide = matmul::ResidentWeights::view(*fused, dtype, k, n_all, 0);
  ASSERT_TRUE(wide) << wide.error().message;
  std::vector<std::vector<uint8_t>> called;
  testing::check_fused_calls(kmd, runner, **wide, a.data(), m, ro, ns, alone, 1, at, called);
  if (::testing::Test::HasFatalFailure()) return;
  const matmul::ColumnPart off[] = {{2, 64, called[1].data()}};  // inside a 16-byte surface
  EXPECT_FALSE(runner.run(**wide, a.data(), m, nullptr, ro, nullptr, off)) << at;
  runner.forget(**wide);
}

TEST(FusedColumns, EachMembersColumnsLandInItsOwnOutput) {
  for (const char* name : {"emu", "emu-rocket"}) {
    auto dev = api::open_device(name);
    ASSERT_TRUE(dev) << dev.error().message;
    driver::Kmd& kmd = *(*dev)->backend->kmd();
    for (matmul::DType dt : {matmul::DType::int8, matmul::DType::fp16})
      for (int64_t m : {int64_t{1}, int64_t{128}}) fused_columns_land(kmd, dt, m, name);
  }
}

}  // namespace
}  // namespace ork::exec
