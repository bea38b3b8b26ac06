// The activations of a run in flight (lib/exec/chain_state.h): a matmul's A made a row piece
// at a time, from outputs put a row piece at a time, is byte for byte the same rows of the
// A made whole, within a layer and into the next layer before the layer is done; what the
// executor's pipelining of groups in row pieces rests on.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "lib/exec/chain_state.h"
#include "lib/exec/model.h"

namespace ork::exec {
namespace {

// A C of rows x n whose values reach past the activation range, seeded per matmul.
std::vector<uint8_t> output_of(matmul::DType dtype, int64_t rows, int64_t n, uint32_t seed) {
  std::vector<uint8_t> c(static_cast<size_t>(output_bytes(rows, n)));
  uint32_t s = seed * 2654435761u + 1;
  for (size_t i = 0; i < c.size() / 4; ++i) {
    s = s * 1664525u + 1013904223u;
    const int32_t v = static_cast<int32_t>(s >> 8) % 40000 - 20000;
    if (dtype == matmul::DType::fp16) {
      const float f = static_cast<float>(v) / 64.0f;
      std::memcpy(c.data() + i * 4, &f, 4);
    } else {
      std::memcpy(c.data() + i * 4, &v, 4);
    }
  }
  return c;
}

bool same_rows(const Activation& whole, const Activation& part, int64_t r0) {
  const size_t at = static_cast<size_t>(r0 * whole.width), n = static_cast<size_t>(part.rows * part.width);
  if (part.width != whole.width) return false;
  if (!whole.f16.empty()) return std::equal(part.f16.begin(), part.f16.end(), whole.f16.begin() + static_cast<ptrdiff_t>(at)) && part.f16.size() == n;
  return std::equal(part.i8.begin(), part.i8.end(), whole.i8.begin() + static_cast<ptrdiff_t>(at)) && part.i8.size() == n;
}

class ChainStatePieces : public ::testing::TestWithParam<matmul::DType> {};

TEST_P(ChainStatePieces, PiecesMakeTheSameRowsAsTheWhole) {
  auto d = synthetic_desc("tiny", 2, GetParam());
  ASSERT_TRUE(d);
  const int64_t m = 8, half = 4;
  std::vector<Activation> out_whole, out_pieces;
  ChainState whole(*d, m, 1, nullptr, out_whole), pieces(*d, m, 1, nullptr, out_pieces);
  for (int l = 0; l < d->layers; ++l)
    for (size_t j = 0; j < d->matmuls.size(); ++j) {
      const int mm = static_cast<int>(j);
      const Activation a = whole.input(0, l, mm);
      for (int64_t r0 : {int64_t{0}, half})  // the A of each piece, before the piece's sources are whole
        EXPECT_TRUE(same_rows(a, pieces.input_rows(0, l, mm, r0, half), r0)) << "layer " << l << " matmul " << mm << " rows " << r0;
      const std::vector<uint8_t> c = output_of(d->dtype, m, d->matmuls[j].n, static_cast<uint32_t>(l * 16 + mm));
      whole.put(0, l, mm, c.data(), 0, m);
      pieces.put(0, l, mm, c.data(), 0, half);
      pieces.put(0, l, mm, c.data(), half, half);
      // The next matmul's A, and at the layer's last the next layer's x, from rows only.
      EXPECT_EQ(whole.done(0, l), pieces.done(0, l));
    }
  ASSERT_EQ(out_whole.size(), 1u);
  EXPECT_TRUE(same_rows(out_whole[0], out_pieces[0], 0));
  EXPECT_EQ(out_whole[0].rows, m);
}

// Into the next layer before the layer is done: the next layer's first A from the rows of the
// last matmul's first piece, while its second piece is not put yet.
TEST_P(ChainStatePieces, TheNextLayersRowsComeBeforeTheLayerIsDone) {
  auto d = synthetic_desc("tiny", 2, GetParam());
  ASSERT_TRUE(d);
  const int64_t m = 8, half = 4;
  std::vector<Activation> out_whole, out_pieces;
  ChainState whole(*d, m, 1, nullptr, out_whole), pieces(*d, m, 1, nullptr, out_pieces);
  const int last = static_cast<int>(d->matmuls.size()) - 1;
  for (int mm = 0; mm <= last; ++mm) {
    const std::vector<uint8_t> c = output_of(d->dtype, m, d->matmuls[static_cast<size_t>(mm)].n, static_cast<uint32_t>(mm + 7));
    whole.put(0, 0, mm, c.data(), 0, m);
    whole.done(0, 0);
    pieces.put(0, 0, mm, c.data(), 0, half);
    if (mm == last) {
      const Activation early = pieces.input_rows(0, 1, 0, 0, half);  // layer 1's q, rows 0..3, layer 0 not done
      EXPECT_TRUE(same_rows(whole.input(0, 1, 0), early, 0));
    }
    pieces.put(0, 0, mm, c.data(), half, half);
    pieces.done(0, 0);
  }
  EXPECT_TRUE(same_rows(whole.input(0, 1, 0), pieces.input_rows(0, 1, 0, half, half), half));
}

INSTANTIATE_TEST_SUITE_P(Dtypes, ChainStatePieces,
                         ::testing::Values(matmul::DType::int8, matmul::DType::int4, matmul::DType::fp16),
                         [](const auto& i) { return std::string(dtype_key(i.param)); });

}  // namespace
}  // namespace ork::exec
