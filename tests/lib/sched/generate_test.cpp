// lib/sched/generate.cpp: the stream generators the property, pinned and oracle tests and
// the benchmarks rely on: each deterministic for its seed, well formed (finalize_stream and
// build_graph accept it), and of the shape generate.h describes.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "lib/sched/generate.h"
#include "lib/sched/graph.h"
#include "lib/sched/parse.h"

namespace ork::sched {
namespace {

int count(const Stream& s, OpKind kind) {
  int n = 0;
  for (const Op& op : s.ops) n += op.kind == kind;
  return n;
}

TEST(Generate, RandomStreamsAreDeterministicAndWellFormed) {
  RandomParams p;
  p.programs = 20;
  bool some_differ = false;
  for (uint64_t seed = 1; seed <= 50; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    const Stream s = make_random_stream(seed, p);
    EXPECT_EQ(format_stream(s), format_stream(make_random_stream(seed, p)));
    some_differ = some_differ || format_stream(s) != format_stream(make_random_stream(seed + 1, p));
    EXPECT_TRUE(build_graph(s).ok());
    EXPECT_EQ(count(s, OpKind::start), p.programs);
    EXPECT_EQ(s.cores, p.cores);
    EXPECT_EQ(s.memory_bytes, p.memory_bytes);
  }
  EXPECT_TRUE(some_differ);
}

// Per layer: matmuls x tiles of (load, start, wait), then one store; with vary off every
// tile is tile_bytes, so a layer's weights (7 x 4 x 64 KiB = 1.75 MiB) exceed the 512 KiB.
TEST(Generate, DecodeHasOneLoadProgramAndWaitPerTileAndAStorePerLayer) {
  DecodeParams p;
  p.layers = 3;
  p.vary = false;
  const Stream s = make_transformer_decode(p);
  const int tiles = p.layers * p.matmuls * p.tiles;
  EXPECT_EQ(static_cast<int>(s.ops.size()), 3 * tiles + p.layers);
  EXPECT_EQ(count(s, OpKind::load), tiles);
  EXPECT_EQ(count(s, OpKind::start), tiles);
  EXPECT_EQ(count(s, OpKind::wait), tiles);
  EXPECT_EQ(count(s, OpKind::store), p.layers);
  EXPECT_GT(int64_t{p.matmuls} * p.tiles * p.tile_bytes, s.memory_bytes);
  EXPECT_TRUE(build_graph(s).ok());
}

// Tile i: load Li (a[i] cycles) into its own buffer, program Pi (b[i] cycles) reading it, its wait.
TEST(Generate, TilesPairEachLoadWithItsProgram) {
  const Stream s = make_tiles({3, 5}, {7, 2}, 1, 1 << 20);
  ASSERT_EQ(s.ops.size(), 6u);
  const std::vector<std::pair<OpKind, int64_t>> want{
      {OpKind::load, 3}, {OpKind::start, 7}, {OpKind::wait, 0}, {OpKind::load, 5}, {OpKind::start, 2}, {OpKind::wait, 0}};
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(s.ops[i].kind, want[i].first) << "op " << i;
    EXPECT_EQ(s.ops[i].cycles, want[i].second) << "op " << i;
  }
  ASSERT_EQ(s.reads(s.ops[1]).size(), 1u);
  ASSERT_EQ(s.writes(s.ops[0]).size(), 1u);
  ASSERT_EQ(s.writes(s.ops[3]).size(), 1u);
  EXPECT_EQ(s.reads(s.ops[1])[0].buffer, s.writes(s.ops[0])[0].buffer);
  EXPECT_NE(s.writes(s.ops[0])[0].buffer, s.writes(s.ops[3])[0].buffer);
  EXPECT_EQ(s.ops[1].partner, 2);
  EXPECT_TRUE(build_graph(s).ok());
}

}  // namespace
}  // namespace ork::sched
