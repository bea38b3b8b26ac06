// safetensors parsing: a valid synthetic file, layer grouping, and every kind of corrupt,
// truncated or lying header rejected with a message that names the problem.
#include <fstream>

#include <gtest/gtest.h>

#include "lib/io/safetensors.h"
#include "tests/io/io_test_util.h"

namespace ork::io {
namespace {

using test::TempDir;

// Writes [u64 length][header][data_bytes zeros]; `declared` overrides the length prefix.
std::string write_raw(const TempDir& dir, const std::string& header, uint64_t data_bytes,
                      int64_t declared = -1) {
  const std::string path = dir.file("raw.safetensors");
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  const uint64_t n = declared >= 0 ? static_cast<uint64_t>(declared) : header.size();
  for (int i = 0; i < 8; ++i) out.put(static_cast<char>(n >> (8 * i)));
  out << header << std::string(data_bytes, '\0');
  return path;
}

std::string error_of(const std::string& path) {
  auto f = read_safetensors(path);
  return f.ok() ? "parsed fine" : f.error().message;
}

std::string without_path(const std::string& message, const std::string& path) {
  return message.rfind(path + ": ", 0) == 0 ? message.substr(path.size() + 2) : message;
}

TEST(Safetensors, ParsesSyntheticModel) {
  TempDir dir;
  const SyntheticSpec spec{.layers = 3, .hidden = 8, .ffn = 20, .vocab = 5, .dtype = "F16"};
  auto m = test::make_model(dir, "m.safetensors", spec);
  ASSERT_EQ(m.file.tensors.size(), 1u + 3u * 9u + 1u);
  EXPECT_EQ(m.file.metadata.at("generator"), "ork_mksafetensors");
  EXPECT_EQ(m.file.data_offset % 8, 0u);
  const TensorInfo& embed = m.file.tensors[0];
  EXPECT_EQ(embed.name, "model.embed_tokens.weight");
  EXPECT_EQ(embed.shape, (std::vector<uint64_t>{5, 8}));
  EXPECT_EQ(embed.begin, 0u);
  EXPECT_EQ(embed.end, 80u);
  ASSERT_EQ(m.layout.layers.size(), 3u);
  ASSERT_EQ(m.layout.other.size(), 2u);
  // Per layer: 2 norms of 8 + 4 x 8x8 + 3 x 20x8 elements, 2 bytes each = 1504 bytes.
  for (size_t l = 0; l < 3; ++l) {
    EXPECT_EQ(m.layout.layers[l].number, l);
    EXPECT_EQ(m.layout.layers[l].tensors.size(), 9u);
    EXPECT_EQ(m.layout.layers[l].extent.length, 1504u);
    EXPECT_EQ(m.layout.layers[l].extent.offset, m.file.data_offset + 80 + 1504 * l);
  }
  EXPECT_EQ(m.file.file_bytes, m.file.data_offset + 80 + 3 * 1504 + 16);
}

TEST(Safetensors, CustomLayerPattern) {
  TempDir dir;
  auto m = test::make_model(dir, "m.safetensors", SyntheticSpec{.layers = 2, .hidden = 4,
                                                                .ffn = 4, .vocab = 1});
  auto mlp = group_layers(m.file, R"(^model\.layers\.(\d+)\.mlp\.)");
  ASSERT_TRUE(mlp.ok()) << mlp.error().message;
  ASSERT_EQ(mlp->layers.size(), 2u);
  EXPECT_EQ(mlp->layers[0].tensors.size(), 3u);
  EXPECT_EQ(mlp->layers[0].extent.length, 3u * 16u * 2u);
  auto bad = group_layers(m.file, "model(");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("layer pattern \"model(\""), std::string::npos);
  auto nogroup = group_layers(m.file, R"(^model\.layers\.)");
  ASSERT_FALSE(nogroup.ok());
  EXPECT_EQ(nogroup.error().message,
            "layer pattern \"^model\\.layers\\.\" has no capture group for the layer number");
}

struct BadCase {
  const char* label;
  std::string header;
  uint64_t data_bytes;
  std::string message;
};

class SafetensorsRejects : public ::testing::TestWithParam<BadCase> {};

TEST_P(SafetensorsRejects, WithTheRightMessage) {
  TempDir dir;
  const BadCase& c = GetParam();
  const std::string path = write_raw(dir, c.header, c.data_bytes);
  EXPECT_EQ(without_path(error_of(path), path), c.message);
}

const std::string kA = R"("a":{"dtype":"F16","shape":[2,3],"data_offsets":[0,12]})";

INSTANTIATE_TEST_SUITE_P(
    Corrupt, SafetensorsRejects,
    ::testing::Values(
        BadCase{"not_json", "{\"a\":", 0, "header is not valid JSON"},
        BadCase{"not_object", "[1,2]", 0, "header is not a JSON object"},
        BadCase{"truncated_data", "{" + kA + "}", 8,
                "tensor \"a\": data_offsets [0, 12] run past the end of the data (8 bytes): "
                "the file is truncated"},
        BadCase{"lying_shape", R"({"a":{"dtype":"F16","shape":[2,4],"data_offsets":[0,12]}})", 12,
                "tensor \"a\": data_offsets [0, 12] hold 12 bytes but F16 [2,4] needs 16"},
        BadCase{"overlap",
                "{" + kA + R"(,"b":{"dtype":"U8","shape":[4],"data_offsets":[8,12]}})", 12,
                "tensor \"b\": data_offsets [8, 12] overlap tensor \"a\" [0, 12]"},
        BadCase{"hole", R"({"a":{"dtype":"U8","shape":[4],"data_offsets":[0,4]},)"
                        R"("b":{"dtype":"U8","shape":[4],"data_offsets":[6,10]}})", 10,
                "tensor \"b\": starts at 6 but the previous tensor ends at 4: 2 bytes belong "
                "to no tensor"},
        BadCase{"trailing", "{" + kA + "}", 20,
                "8 bytes after the last tensor belong to no tensor (data is 20 bytes, tensors "
                "end at 12)"},
        BadCase{"unknown_dtype", R"({"a":{"dtype":"F12","shape":[1],"data_offsets":[0,1]}})", 1,
                "tensor \"a\": unknown dtype \"F12\""},
        BadCase{"negative_offset", R"({"a":{"dtype":"U8","shape":[1],"data_offsets":[-1,0]}})",
                1, "tensor \"a\": \"data_offsets\" is not [begin, end] with integers >= 0"},
        BadCase{"reversed", R"({"a":{"dtype":"U8","shape":[0],"data_offsets":[4,0]}})", 4,
                "tensor \"a\": data_offsets [4, 0] end before they begin"},
        BadCase{"float_dim", R"({"a":{"dtype":"U8","shape":[1.5],"data_offsets":[0,1]}})", 1,
                "tensor \"a\": shape [1.5] has a dimension that is not an integer >= 0"},
        BadCase{"no_shape", R"({"a":{"dtype":"U8","data_offsets":[0,1]}})", 1,
                "tensor \"a\": no \"shape\" array"},
        BadCase{"duplicate", "{" + kA + "," + kA + "}", 12,
                "tensor \"a\": appears twice in the header"},
        BadCase{"overflow",
                R"({"a":{"dtype":"F64","shape":[4294967296,4294967296],"data_offsets":[0,8]}})", 8,
                "tensor \"a\": shape overflows 64 bits"},
        BadCase{"bad_metadata", R"({"__metadata__":{"x":1}})", 0,
                "\"__metadata__\" entry \"x\" is not a string"}),
    [](const auto& info) { return std::string(info.param.label); });

TEST(Safetensors, RejectsBadLengthPrefix) {
  TempDir dir;
  std::string path = write_raw(dir, "{}", 0, 1000);
  EXPECT_EQ(without_path(error_of(path), path),
            "header length 1000 bytes runs past the end of the file (10 bytes): truncated");
  path = write_raw(dir, "{}", 0, int64_t{200'000'000});
  EXPECT_EQ(without_path(error_of(path), path),
            "header length 200000000 bytes exceeds the 100000000 byte limit");
  const std::string tiny = dir.file("tiny");
  std::ofstream(tiny) << "abc";
  EXPECT_EQ(error_of(tiny), tiny + ": file is 3 bytes, too short for the 8-byte header length");
  EXPECT_EQ(error_of(dir.file("missing")),
            "open " + dir.file("missing") + ": ENOENT (No such file or directory)");
}

TEST(Safetensors, TruncatedSyntheticFile) {
  TempDir dir;
  auto m = test::make_model(dir, "m.safetensors", SyntheticSpec{.layers = 2, .hidden = 8,
                                                                .ffn = 8, .vocab = 2});
  std::filesystem::resize_file(m.path, m.file.file_bytes - 3);
  const std::string msg = error_of(m.path);
  EXPECT_EQ(without_path(msg, m.path),
            "tensor \"model.norm.weight\": data_offsets [" +
                std::to_string(m.file.tensors.back().begin) + ", " +
                std::to_string(m.file.tensors.back().end) + "] run past the end of the data (" +
                std::to_string(m.file.tensors.back().end - 3) +
                " bytes): the file is truncated");
}

TEST(Safetensors, LayersMustBeNumberedWithoutGaps) {
  auto f = parse_safetensors_header(
      R"({"model.layers.0.w":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},)"
      R"("model.layers.2.w":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}})",
      0);
  ASSERT_FALSE(f.ok());  // header longer than a file of 0 bytes
  const std::string h =
      R"({"model.layers.0.w":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},)"
      R"("model.layers.2.w":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}})";
  auto g = parse_safetensors_header(h, 8 + h.size() + 2);
  ASSERT_TRUE(g.ok()) << g.error().message;
  auto l = group_layers(g.value());
  ASSERT_FALSE(l.ok());
  EXPECT_EQ(l.error().message, "layers must be numbered 0..n-1: layer 1 is missing (next is 2)");
}

}  // namespace
}  // namespace ork::io
