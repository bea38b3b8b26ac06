// A fused group of several K-slices (lib/exec/fusion.h fused_pieces), bit for bit: the
// members' packed weights laid slice by slice, each member's slice s at its piece's place,
// are the fused K x (N1 + N2 + ...) packing exactly (int4 at 3 slices, int8 and fp16 past
// 4096 with a narrower last slice); laid member after member, or with two members' slices
// swapped, they are not (so the check can fail). One call on those weights gives each member
// the bytes of that member run alone on its own weights and of the CPU product, through the
// runner and as a matmul job, with a plain plan (a C per slice) and with a stacked one (at
// M = 1 one C' of diagonal blocks, layout_host.h unpack_c_columns; at 128 its slices do not
// stack), on emu and emu-rocket.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <random>
#include <utility>

#include <fmt/format.h>

#include "driver/common/int4.h"
#include "lib/api/device.h"
#include "lib/exec/activation.h"
#include "lib/exec/board_plan.h"
#include "lib/exec/fusion.h"
#include "tests/lib/exec/fused_calls_check.h"
#include "lib/exec/model.h"
#include "lib/matmul/job.h"
#include "lib/matmul/run.h"

namespace ork::exec {
namespace {

// Values as bytes in the dtype's host format: int8 bytes, fp16 halves of -2..2, int4 nibbles.
std::vector<uint8_t> host_bytes(matmul::DType dtype, const std::vector<int>& values) {
  static const uint16_t kHalf[] = {0xc000, 0xbc00, 0x0000, 0x3c00, 0x4000};
  if (dtype == matmul::DType::int4) {
    std::vector<uint8_t> out(static_cast<size_t>(int4::packed_bytes(static_cast<int64_t>(values.size()))));
    for (size_t i = 0; i < values.size(); ++i) int4::put(out.data(), static_cast<int64_t>(i), values[i]);
    return out;
  }
  const bool half = dtype == matmul::DType::fp16;
  std::vector<uint8_t> out(values.size() * (half ? 2 : 1));
  for (size_t i = 0; i < values.size(); ++i) {
    if (half) std::memcpy(&out[2 * i], &kHalf[values[i] + 2], 2);
    else out[i] = static_cast<uint8_t>(values[i]);
  }
  return out;
}

// Seeded row-major rows x cols values as small integers (int8 -128..127, fp16 -2..2, int4
// -8..7: every sum exact) and their host bytes.
std::vector<uint8_t> slices_seeded(matmul::DType dtype, int64_t rows, int64_t cols, uint32_t seed, std::vector<int>& v) {
  std::mt19937 rng(seed);
  v.resize(static_cast<size_t>(rows * cols));
  const int lo = dtype == matmul::DType::int4 ? -8 : dtype == matmul::DType::fp16 ? -2 : -128;
  const uint32_t span = dtype == matmul::DType::int4 ? 16 : dtype == matmul::DType::fp16 ? 5 : 256;
  for (int& x : v) x = lo + static_cast<int>(rng() % span);
  return host_bytes(dtype, v);
}

std::vector<uint8_t> slices_packed(matmul::DType dtype, int64_t k, int64_t n, int64_t width, const std::vector<uint8_t>& rm) {
  auto layout = matmul::ResidentWeights::layout(dtype, k, n, width);
  EXPECT_TRUE(layout) << layout.error().message;
  std::vector<uint8_t> out(static_cast<size_t>(layout->b_bytes()));
  EXPECT_TRUE(matmul::pack_weights(*layout, rm.data(), out));
  return out;
}

// The members side by side as one row-major K x (N1 + N2 + ...) of the same values.
std::vector<int> side_by_side_values(const std::vector<std::vector<int>>& w, int64_t k, const std::vector<int64_t>& ns) {
  int64_t n_all = 0;
  for (int64_t n : ns) n_all += n;
  std::vector<int> f(static_cast<size_t>(k * n_all));
  int64_t col = 0;
  for (size_t j = 0; j < ns.size(); ++j) {
    for (int64_t r = 0; r < k; ++r)
      for (int64_t c = 0; c < ns[j]; ++c) f[static_cast<size_t>(r * n_all + col + c)] = w[j][static_cast<size_t>(r * ns[j] + c)];
    col += ns[j];
  }
  return f;
}

// The members' packed weights laid into one buffer at the pieces' places.
std::vector<uint8_t> laid(const std::vector<std::vector<uint8_t>>& own, const std::vector<std::vector<FusedPiece>>& pieces) {
  size_t total = 0;
  for (const auto& p : own) total += p.size();
  std::vector<uint8_t> out(total, 0x5a);  // a byte no piece covers shows
  for (size_t j = 0; j < own.size(); ++j)
    for (const FusedPiece& p : pieces[j]) std::memcpy(out.data() + p.at, own[j].data() + p.from, p.bytes);
  return out;
}

struct SliceCase {
  matmul::DType dtype;
  int64_t k;
  std::vector<int64_t> ns;
  int64_t width;  // int4's, else 0
  int64_t slices;
};

TEST(FusedSlices, TheMembersSlicesInTheirPlacesAreTheFusedWeights) {
  using D = matmul::DType;
  const SliceCase cases[] = {
      {D::int4, 1536, {256, 128, 128}, 512, 3},    // 3 full slices of 512
      {D::int4, 3584, {128, 64, 64}, 1216, 3},      // 7B's K at its synthetic width
      {D::int8, 8960, {64, 32, 32}, 0, 3},          // 3008, 3008 and a last one of 2944
      {D::fp16, 4160, {48, 16, 16}, 0, 3},
  };
  uint32_t seed = 1;
  for (const SliceCase& c : cases) {
    const std::string at = fmt::format("{} K {} width {}", dtype_key(c.dtype), c.k, c.width);
    std::vector<std::pair<int64_t, int64_t>> shapes;
    for (int64_t n : c.ns) shapes.emplace_back(c.k, n);
    ASSERT_TRUE(fusable(c.dtype, 1, shapes, std::vector<int64_t>(c.ns.size(), c.width))) << at;
    std::vector<std::vector<int>> w(c.ns.size());
    std::vector<std::vector<uint8_t>> own;
    std::vector<uint8_t> concatenated;
    for (size_t j = 0; j < c.ns.size(); ++j) {
      own.push_back(slices_packed(c.dtype, c.k, c.ns[j], c.width, slices_seeded(c.dtype, c.k, c.ns[j], seed++, w[j])));
      concatenated.insert(concatenated.end(), own.back().begin(), own.back().end());
    }
    int64_t n_all = 0;
    for (int64_t n : c.ns) n_all += n;
    const std::vector<uint8_t> fused =
        slices_packed(c.dtype, c.k, n_all, c.width, host_bytes(c.dtype, side_by_side_values(w, c.k, c.ns)));
    auto pieces = fused_pieces(c.dtype, c.k, c.ns, c.width);
    ASSERT_TRUE(pieces) << at << ": " << pieces.error().message;
    for (const auto& member : *pieces) EXPECT_EQ(static_cast<int64_t>(member.size()), c.slices) << at;
    EXPECT_EQ(laid(own, *pieces), fused) << at << ": slice by slice";
    EXPECT_NE(concatenated, fused) << at << ": member after member";
    auto swapped = *pieces;  // k's slice 1 at v's place and v's at k's (one size)
    std::swap(swapped[1][1].at, swapped[2][1].at);
    EXPECT_NE(laid(own, swapped), fused) << at << ": two members' slices swapped";
  }
}

std::unique_ptr<driver::Bo> slices_bo(driver::Kmd& kmd, const std::vector<uint8_t>& bytes) {
  auto bo = kmd.bo_create(bytes.size(), driver::BoUsage::data);
  EXPECT_TRUE(bo);
  std::memcpy((*bo)->map(), bytes.data(), bytes.size());
  EXPECT_TRUE(kmd.bo_sync(**bo, driver::SyncDir::to_device));
  return std::move(*bo);
}

// int4, K = 1536 in 3 slices of 512, members of 256, 128 and 128 columns: each member alone
// on its own weights (the CPU product checked), then the fused weights laid slice by slice
// called once through `runner` and once as a job, each member's columns straight to its output.
void fused_slices_land(driver::Kmd& kmd, matmul::MatmulRunner& runner, int64_t m, const std::string& at) {
  const matmul::DType dtype = matmul::DType::int4;
  const int64_t k = 1536, width = 512;
  const std::vector<int64_t> ns = {256, 128, 128};
  std::vector<std::vector<int>> w(ns.size());
  std::vector<std::vector<uint8_t>> own;
  for (size_t j = 0; j < ns.size(); ++j)
    own.push_back(slices_packed(dtype, k, ns[j], width, slices_seeded(dtype, k, ns[j], static_cast<uint32_t>(40 + j), w[j])));
  auto pieces = fused_pieces(dtype, k, ns, width);
  ASSERT_TRUE(pieces) << pieces.error().message;
  const std::unique_ptr<driver::Bo> fused = slices_bo(kmd, laid(own, *pieces));
  std::vector<int> av;
  const std::vector<uint8_t> a = slices_seeded(dtype, m, k, 7, av);
  matmul::RunOptions ro;
  ro.cores = 3;
  std::vector<std::vector<uint8_t>> alone(ns.size());
  for (size_t j = 0; j < ns.size(); ++j) {
    const std::unique_ptr<driver::Bo> bo = slices_bo(kmd, own[j]);
    auto view = matmul::ResidentWeights::view(*bo, dtype, k, ns[j], width);
    ASSERT_TRUE(view) << view.error().message;
    alone[j].assign(static_cast<size_t>(output_bytes(m, ns[j])), 0xa5);
    ASSERT_TRUE(runner.run(**view, a.data(), m, alone[j].data(), ro)) << at;
    runner.forget(**view);
    for (int64_t r = 0; r < m; r += m > 8 ? 7 : 1)  // rows 0, 7, .. of 128: the CPU's share of the test's time
      for (int64_t x = 0; x < ns[j]; ++x) {
        int32_t want = 0, got = 0;
        for (int64_t kk = 0; kk < k; ++kk) want += av[static_cast<size_t>(r * k + kk)] * w[j][static_cast<size_t>(kk * ns[j] + x)];
        std::memcpy(&got, &alone[j][static_cast<size_t>(output_bytes(r, ns[j]) + output_bytes(1, x))], 4);
        ASSERT_EQ(got, want) << at << " member " << j << " row " << r << " col " << x;
      }
  }
  auto wide = matmul::ResidentWeights::view(*fused, dtype, k, 512, width);
  ASSERT_TRUE(wide) << wide.error().message;
  std::vector<std::vector<uint8_t>> called;
  testing::check_fused_calls(kmd, runner, **wide, a.data(), m, ro, ns, alone, 2, at, called);
  if (::testing::Test::HasFatalFailure()) return;
  runner.forget(**wide);
}

// A stacked plan (every slice's rows in one task: PlanOptions::stack), whatever the chooser.
Result<matmul::Plan> stacked_call_plan(const matmul::ResidentWeights& w, int64_t m, const matmul::RunOptions& o) {
  return matmul::make_plan({m, w.k(), w.n()}, {.dtype = w.dtype(), .cores = o.cores, .slice_k = w.slice_k(), .stack = true});
}

TEST(FusedSlices, OneCallOnTheSlicesGivesEveryMembersBytes) {
  auto one = matmul::make_plan({1, 1536, 512}, {.dtype = matmul::DType::int4, .cores = 3, .slice_k = 512, .stack = true});
  ASSERT_TRUE(one) << one.error().message;
  ASSERT_TRUE(one->stacked);  // M = 1: one C' of diagonal blocks
  ASSERT_EQ(one->slices, 3);
  for (const char* name : {"emu", "emu-rocket"}) {
    auto dev = api::open_device(name);
    ASSERT_TRUE(dev) << dev.error().message;
    driver::Kmd& kmd = *(*dev)->backend->kmd();
    matmul::MatmulRunner plain(kmd), stacked(kmd);
    stacked.set_plan_chooser(stacked_call_plan);
    for (int64_t m : {int64_t{1}, int64_t{128}}) {
      ASSERT_NO_FATAL_FAILURE(fused_slices_land(kmd, plain, m, fmt::format("{} plain m {}", name, m)));
      ASSERT_NO_FATAL_FAILURE(fused_slices_land(kmd, stacked, m, fmt::format("{} stacked m {}", name, m)));
    }
  }
}

}  // namespace
}  // namespace ork::exec
