// Every source returns identical bytes for the same files: odd sizes, a tail shorter than a
// chunk, a file larger than the slot ring, in order, wrapped and in random order.
#include <random>

#include <gtest/gtest.h>

#include "lib/io/loader.h"
#include "tests/lib/io/io_test_util.h"

namespace ork::io {
namespace {

struct SourceCase {
  const char* label;
  SourceKind source;
  DirectMode direct;
  size_t n_slots;
  size_t depth;
};

struct FileCase {
  const char* label;
  SyntheticSpec spec;
  uint64_t chunk_bytes;
};

const SourceCase kSources[] = {
    {"sync", SourceKind::kSync, DirectMode::kAuto, 1, 0},
    {"worker2", SourceKind::kWorker, DirectMode::kAuto, 2, 1},
    {"worker3_direct", SourceKind::kWorker, DirectMode::kOn, 3, 2},
    {"uring2_direct", SourceKind::kUring, DirectMode::kAuto, 2, 1},
    {"uring4_direct", SourceKind::kUring, DirectMode::kAuto, 4, 3},
    {"uring3_buffered", SourceKind::kUring, DirectMode::kOff, 3, 2},
    {"mmap", SourceKind::kMmap, DirectMode::kAuto, 1, 0},
};

const FileCase kFiles[] = {
    // U8 with odd dimensions: every layer and tensor size is odd, nothing is aligned, and
    // 4 KiB chunks leave a short tail in each layer (layer = 2*37 + 4*37^2 + 3*37*101 bytes).
    {"odd_u8", SyntheticSpec{.layers = 5, .hidden = 37, .ffn = 101, .vocab = 13,
                             .dtype = "U8", .seed = 7}, 4096},
    // More layers than slots, several chunks per layer (one layer is ~240 KiB).
    {"ring_f16", SyntheticSpec{.layers = 12, .hidden = 128, .ffn = 344, .vocab = 100,
                               .dtype = "F16", .seed = 3}, 64 * 1024},
    // Chunks far larger than a layer: a single short read per layer.
    {"big_chunk_bf16", SyntheticSpec{.layers = 3, .hidden = 24, .ffn = 70, .vocab = 9,
                                     .dtype = "BF16", .seed = 11}, 4 << 20},
};

class SourceBytes : public ::testing::TestWithParam<std::tuple<SourceCase, FileCase>> {};

TEST_P(SourceBytes, IdenticalToTheGenerator) {
  const auto& [src, fc] = GetParam();
  const test::TempDir dir;
  const test::Model m = test::make_model(dir, std::string(fc.label) + ".safetensors", fc.spec);
  ASSERT_EQ(m.layout.layers.size(), fc.spec.layers);
  LoaderOptions o{.source = src.source, .n_slots = src.n_slots, .prefetch_depth = src.depth,
                  .chunk_bytes = fc.chunk_bytes, .queue_depth = 4, .direct = src.direct,
                  .use_env = false};
  auto loader = LayerLoader::open(m.path, layer_extents(m.layout), o);
  ASSERT_TRUE(loader.ok()) << loader.error().message;
  LayerLoader& l = *loader.value();
  const size_t n = l.layer_count();
  // Two passes in order (the second wraps around like the next token), then random order.
  std::vector<size_t> order;
  for (size_t pass = 0; pass < 2; ++pass) {
    for (size_t i = 0; i < n; ++i) order.push_back(i);
  }
  std::mt19937 rng(42);
  for (size_t i = 0; i < 2 * n; ++i) order.push_back(rng() % n);
  for (size_t layer : order) {
    auto bytes = l.load(layer);
    ASSERT_TRUE(bytes.ok()) << bytes.error().message;
    ASSERT_TRUE(test::layer_matches(m, layer, bytes.value()));
  }
  const LoaderStats s = l.stats();
  EXPECT_EQ(s.loads, order.size());
  EXPECT_EQ(s.hits + s.misses, s.loads);
  // Where this machine refuses io_uring or O_DIRECT, the fallback must be the one taken
  // and reported; the bytes above are identical either way.
  const bool uring_ok = test::uring_works();
  const bool want_direct = src.direct == DirectMode::kOn ||
                           (src.direct == DirectMode::kAuto && src.source == SourceKind::kUring);
  const bool direct_ok = test::direct_works(m.path);
  const bool expect_fallback =
      (src.source == SourceKind::kUring && !uring_ok) || (want_direct && !direct_ok);
  EXPECT_EQ(s.fallbacks.empty(), !expect_fallback);
  EXPECT_EQ(s.direct, want_direct && direct_ok);
  EXPECT_EQ(s.engine, src.source == SourceKind::kUring && uring_ok ? EngineKind::kUring
                      : src.source == SourceKind::kMmap            ? EngineKind::kMmap
                                                                   : EngineKind::kPread);
  EXPECT_EQ(s.async, src.n_slots > 1);
}

INSTANTIATE_TEST_SUITE_P(
    AllSources, SourceBytes,
    ::testing::Combine(::testing::ValuesIn(kSources), ::testing::ValuesIn(kFiles)),
    [](const auto& info) {
      return std::string(std::get<0>(info.param).label) + "_" + std::get<1>(info.param).label;
    });

}  // namespace
}  // namespace ork::io
