// int4 K-slice widths of a model's weights (lib/exec/int4_widths.h) and the projection
// taking them (lib/exec/project.h ProjectOptions::slice_k): the Q4_0-shaped weights (the
// synthetic models' own, lib/exec/synthetic.h) hold what Q4_0 holds, each matmul's width is
// its weights' int4_safe_slice_k, and the board plan slices at those widths (fewer tasks
// than at the floor, the same weight bytes).
#include <gtest/gtest.h>

#include <algorithm>

#include "driver/common/int4.h"
#include "lib/exec/int4_widths.h"
#include "lib/exec/project.h"
#include "lib/exec/synthetic.h"
#include "lib/matmul/int4_bound.h"

namespace ork::exec {
namespace {

ModelDesc widths_desc(const char* name, matmul::DType dtype = matmul::DType::int4) {
  auto d = synthetic_desc(name, 2, dtype);
  EXPECT_TRUE(d);
  return *d;
}

// Every 32-row block of every column holds one -8 (its value of largest magnitude) and
// values -8..7; the same seed gives the same weights.
TEST(Int4Widths, Q4ZeroBlocksHoldTheirScaleValue) {
  const int64_t k = 100, n = 5;  // a short last block
  const std::vector<uint8_t> w = q4_0_like_weights(k, n, 3);
  ASSERT_EQ(w.size(), static_cast<size_t>(int4::packed_bytes(k * n)));
  for (int64_t col = 0; col < n; ++col)
    for (int64_t k0 = 0; k0 < k; k0 += 32) {
      int minus8 = 0;
      for (int64_t r = k0; r < std::min(k, k0 + 32); ++r) minus8 += int4::value_at(w.data(), r * n + col) == -8;
      EXPECT_GE(minus8, 1) << "column " << col << " block " << k0;
    }
  EXPECT_EQ(q4_0_like_weights(k, n, 3), w);
  EXPECT_NE(q4_0_like_weights(k, n, 4), w);
}

// The codes are bell-shaped as Q4_0's of normal values, not uniform: over 64 K of blocks,
// mean |q| near 3 (uniform -8..7: 4), and 0 more frequent than 7. The synthetic int4 model's
// tensors are these weights at their seeds.
TEST(Int4Widths, SyntheticInt4WeightsAreQ4ZeroShaped) {
  const int64_t k = 2048, n = 32;
  const std::vector<uint8_t> w = q4_0_like_weights(k, n, 5);
  int64_t abs_sum = 0, zeros = 0, sevens = 0;
  for (int64_t i = 0; i < k * n; ++i) {
    const int v = int4::value_at(w.data(), i);
    abs_sum += v < 0 ? -v : v;
    zeros += v == 0;
    sevens += v == 7;
  }
  const double mean_abs = static_cast<double>(abs_sum) / static_cast<double>(k * n);
  EXPECT_GT(mean_abs, 2.5);
  EXPECT_LT(mean_abs, 3.5);
  EXPECT_GT(zeros, 4 * sevens);
  const ModelDesc d = widths_desc("small");
  EXPECT_EQ(synthetic_weights(d, 1, 6, 9), q4_0_like_weights(d.matmuls[6].k, d.matmuls[6].n, synthetic_seed(9, 1, 6)));
}

TEST(Int4Widths, EachMatmulsWidthIsItsWeightsBound) {
  const ModelDesc d = widths_desc("small");
  auto widths = int4_slice_widths(d, Int4Weights::synthetic, 1, 9);
  ASSERT_TRUE(widths) << widths.error().message;
  ASSERT_EQ(widths->size(), d.matmuls.size());
  for (size_t j = 0; j < d.matmuls.size(); ++j) {
    const MatmulDesc& md = d.matmuls[j];
    auto want = matmul::int4_safe_slice_k(synthetic_weights(d, 1, static_cast<int>(j), 9), md.k, md.n);
    ASSERT_TRUE(want);
    EXPECT_EQ((*widths)[j], *want) << md.name;
  }
  // Uniform -8..7 (mean |w| = 4) allows less than the Q4_0-shaped weights (about 3), still
  // past the floor; down (K = 1408) is sliced at both.
  auto uniform = int4_slice_widths(d, Int4Weights::uniform, 1, 9);
  ASSERT_TRUE(uniform);
  for (size_t j = 0; j < d.matmuls.size(); ++j) {
    EXPECT_GT((*uniform)[j], matmul::kInt4SliceK) << d.matmuls[j].name;
    EXPECT_GE((*widths)[j], (*uniform)[j]) << d.matmuls[j].name;
  }
  EXPECT_LT((*uniform)[6], 1408);
  EXPECT_GT((*widths)[6], (*uniform)[6]);
  auto floor = int4_slice_widths(d, Int4Weights::floor, 0, 1);
  ASSERT_TRUE(floor);
  EXPECT_EQ(*floor, std::vector<int64_t>(d.matmuls.size(), 0));
}

TEST(Int4Widths, BadInputsAreNamed) {
  auto int8 = int4_slice_widths(widths_desc("tiny", matmul::DType::int8), Int4Weights::synthetic, 0, 1);
  ASSERT_FALSE(int8);
  EXPECT_NE(int8.error().message.find("only int4"), std::string::npos) << int8.error().message;
  auto kind = parse_int4_weights("q4_k");
  ASSERT_FALSE(kind);
  EXPECT_NE(kind.error().message.find("\"q4_k\""), std::string::npos) << kind.error().message;
  EXPECT_EQ(*parse_int4_weights("q4_0"), Int4Weights::synthetic);
  EXPECT_EQ(*parse_int4_weights("uniform"), Int4Weights::uniform);
}

ProjectOptions widths_options(const ModelDesc& d, int64_t m) {
  ProjectOptions o;
  o.m = m;
  o.budget_bytes = uint64_t{1} << 32;
  o.window_bytes = uint64_t{1} << 32;
  o.host_ns.assign(d.matmuls.size(), 1000.0);
  return o;
}

// The projection at the weights' widths: each matmul's plan slices at its width, fewer
// tasks than at the floor, the same bytes; a wrong count of widths is named.
TEST(Int4Widths, TheProjectionSlicesAtTheWidths) {
  const ModelDesc d = widths_desc("small");  // down: K = 1408, 3 slices at 480
  ProjectOptions o = widths_options(d, 1);
  auto floor = project(d, o);
  ASSERT_TRUE(floor) << floor.error().message;
  o.slice_k.assign(d.matmuls.size(), 1408);  // every K <= 1408: one full-K slice each
  auto wide = project(d, o);
  ASSERT_TRUE(wide) << wide.error().message;
  EXPECT_LT(wide->tasks, floor->tasks);
  EXPECT_EQ(wide->weight_bytes, floor->weight_bytes);
  for (const MatmulProjection& mp : wide->per_matmul) EXPECT_EQ(mp.slice_k, mp.k) << mp.name;
  for (const MatmulProjection& mp : floor->per_matmul) EXPECT_EQ(mp.slice_k, std::min<int64_t>(mp.k, 480)) << mp.name;
  o.slice_k.pop_back();
  auto bad = project(d, o);
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("slice widths: 6 given for 7"), std::string::npos) << bad.error().message;
}

}  // namespace
}  // namespace ork::exec
