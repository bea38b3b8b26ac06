// The packed file's int4 K-slice widths (lib/exec/pack_file.h, version 4): each int4 tensor
// laid out at the width its own weights allow, every slice full (K zero padded), version 2
// files (no widths: 480) still read, version 3 int4 widths (a narrower last slice) refused,
// version 2 to 4 int8 tensors of K past 4096 (2048-wide slices before version 5) refused,
// and every bad width or table row named.
#include <cstring>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "driver/common/int4.h"
#include "lib/exec/activation.h"
#include "lib/exec/pack_file.h"
#include "lib/exec/synthetic.h"
#include "lib/exec/unpack.h"
#include "lib/matmul/int4_bound.h"
#include "lib/matmul/context.h"
#include "tests/lib/exec/exec_util.h"

namespace ork::exec {
namespace {

using testing::read_all;
using testing::scratch;
using testing::write_all;

ModelDesc small_int4(int layers) {
  auto d = synthetic_desc("small", layers, matmul::DType::int4);
  EXPECT_TRUE(d);
  return *d;
}

// One value per byte, as unpack_weights gives them.
std::vector<uint8_t> values(const std::vector<uint8_t>& nibbles, int64_t count) {
  std::vector<uint8_t> out(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) out[static_cast<size_t>(i)] = static_cast<uint8_t>(int4::value_at(nibbles.data(), i));
  return out;
}

// Every tensor of the small model (every K past 480) at its weights' own width, and back.
TEST(PackInt4, EachTensorIsSlicedAtItsWeightsOwnWidth) {
  const ModelDesc d = small_int4(1);
  const std::string path = scratch("int4_widths.ork");
  ASSERT_TRUE(write_synthetic(path, d, 7));
  auto m = read_packed(path);
  ASSERT_TRUE(m) << m.error().message;
  const auto bytes = read_all(path);
  for (int j = 0; j < 7; ++j) {
    const MatmulDesc& md = d.matmuls[static_cast<size_t>(j)];
    const auto w = synthetic_weights(d, 0, j, 7);
    auto want = matmul::int4_safe_slice_k(w, md.k, md.n);
    ASSERT_TRUE(want);
    const PackedTensor& t = m->tensor(0, j);
    EXPECT_EQ(t.slice_k, *want) << md.name;
    EXPECT_GT(t.slice_k, matmul::kInt4SliceK) << md.name;
    // Every slice full: K padded to slices x an even width within the weights' own.
    auto layout = layout_plan(d.dtype, md.k, md.n, t.slice_k);
    ASSERT_TRUE(layout);
    EXPECT_EQ(layout->kp, layout->slices * layout->slice_k) << md.name;
    EXPECT_LE(layout->slice_k, t.slice_k) << md.name;
    EXPECT_LT(layout->kp - md.k, layout->slices * matmul::kKAlign) << md.name;
    EXPECT_EQ(t.bytes, static_cast<uint64_t>(layout->b_bytes())) << md.name;
    std::vector<uint8_t> back;
    ASSERT_TRUE(unpack_weights(d.dtype, md.k, md.n, {bytes.data() + t.offset, t.bytes}, back, t.slice_k));
    EXPECT_EQ(back, values(w, md.k * md.n)) << md.name;
  }
}

// Rewrites the head of `b`: its version, and the description as `j` (both checksums).
std::vector<uint8_t> with_head(std::vector<uint8_t> b, uint32_t version, const nlohmann::json& j) {
  const std::string text = j.dump();
  uint64_t data_offset;
  std::memcpy(&data_offset, b.data() + 32, 8);
  std::fill(b.begin() + 4096, b.begin() + static_cast<long>(data_offset), 0);
  std::memcpy(b.data() + 4096, text.data(), text.size());
  const uint64_t len = text.size(), jf = fingerprint({reinterpret_cast<const uint8_t*>(text.data()), text.size()});
  std::memcpy(b.data() + 8, &version, 4);
  std::memcpy(b.data() + 24, &len, 8);
  std::memcpy(b.data() + 48, &jf, 8);
  const uint64_t hf = fingerprint({b.data(), 56});
  std::memcpy(b.data() + 56, &hf, 8);
  return b;
}

nlohmann::json description(const std::vector<uint8_t>& b) {
  uint64_t len;
  std::memcpy(&len, b.data() + 24, 8);
  return nlohmann::json::parse(b.begin() + 4096, b.begin() + 4096 + static_cast<long>(len));
}

Result<PackedModel> reread(const std::vector<uint8_t>& b) {
  const std::string p = scratch("int4_bad.ork");
  write_all(p, b);
  return read_packed(p);
}

// The file of `path` as version 2 wrote it: rows of six, each int4 tensor re-laid in the
// dtype's 480-wide slices with a narrower last one (no padding), in its own place.
std::vector<uint8_t> as_version_two(const std::string& path, const ModelDesc& d, uint64_t seed) {
  std::vector<uint8_t> b = read_all(path);
  nlohmann::json j = description(b);
  for (size_t i = 0; i < j["tensors"].size(); ++i) {
    auto& row = j["tensors"][i];
    const MatmulDesc& md = d.matmuls[row[1].get<size_t>()];
    auto plan = layout_plan(d.dtype, md.k, md.n, 0);
    EXPECT_TRUE(plan);
    std::vector<uint8_t> native(static_cast<size_t>(plan->b_bytes()));
    EXPECT_TRUE(matmul::pack_weights(*plan, synthetic_weights(d, row[0].get<int>(), row[1].get<int>(), seed).data(), native));
    EXPECT_LE(native.size(), row[3].get<uint64_t>());  // the padded layout's room holds it
    std::copy(native.begin(), native.end(), b.begin() + row[2].get<long>());
    row[3] = native.size();
    row.erase(6);
  }
  return with_head(b, 2, j);
}

// A version 2 file (rows of six, its int4 tensors 480 wide, as written before widths) reads
// with width 0, and its tensors unpack at 480.
TEST(PackInt4, VersionTwoFilesStillRead) {
  const ModelDesc d = small_int4(1);
  const std::string path = scratch("int4_v2.ork");
  ASSERT_TRUE(write_synthetic(path, d, 3));
  const auto v2 = as_version_two(path, d, 3);
  auto m = reread(v2);
  ASSERT_TRUE(m) << m.error().message;
  const MatmulDesc& down = d.matmuls[6];
  const PackedTensor& t = m->tensor(0, 6);
  EXPECT_EQ(t.slice_k, 0);
  std::vector<uint8_t> back;
  ASSERT_TRUE(unpack_weights(d.dtype, down.k, down.n, {v2.data() + t.offset, t.bytes}, back, t.slice_k));
  EXPECT_EQ(back, values(synthetic_weights(d, 0, 6, 3), down.k * down.n));
}

std::string message_of(const Result<PackedModel>& m) { return m ? std::string("(accepted)") : m.error().message; }

TEST(PackInt4, BadVersionsRowsAndWidthsAreNamed) {
  const ModelDesc d = small_int4(1);
  const std::string path = scratch("int4_named.ork");
  ASSERT_TRUE(write_synthetic(path, d, 3));
  const auto b = read_all(path);
  const nlohmann::json j = description(b);
  EXPECT_NE(message_of(reread(with_head(b, 6, j))).find("packed model version 6: this build reads versions 2 to 5"),
            std::string::npos);
  // A version 3 row of six, a version 2 row of seven.
  nlohmann::json six = j;
  six["tensors"][1].erase(6);
  EXPECT_NE(message_of(reread(with_head(b, 3, six))).find("tensors[1] is not [layer, matmul, offset, bytes, scale offset, "
                                                         "scale bytes, slice_k]"), std::string::npos);
  EXPECT_NE(message_of(reread(with_head(b, 2, j))).find("tensors[0] is not [layer, matmul, offset, bytes, scale offset, "
                                                       "scale bytes]"), std::string::npos);
  for (const auto& [width, says] : {std::pair<int64_t, const char*>{1000, "int4 slice_k = 1000"},
                                    {448, "int4 slice_k = 448"}, {4128, "tensors[2][6] = 4128: must be an integer"}}) {
    nlohmann::json bad = j;
    bad["tensors"][2][6] = width;
    const std::string msg = message_of(reread(with_head(b, 4, bad)));
    EXPECT_NE(msg.find(says), std::string::npos) << msg;
    if (width != 4128) {
      EXPECT_NE(msg.find("tensor \"v\" of layer 0"), std::string::npos) << msg;
    }
  }
  // A width on a tensor of another dtype.
  auto d8 = synthetic_desc("small", 1, matmul::DType::int8);
  ASSERT_TRUE(d8);
  ASSERT_TRUE(write_synthetic(path, *d8, 3));
  const auto b8 = read_all(path);
  nlohmann::json j8 = description(b8);
  EXPECT_EQ(j8["tensors"][0][6], 0);
  j8["tensors"][0][6] = 1024;
  EXPECT_NE(message_of(reread(with_head(b8, 4, j8))).find("only int4 weights choose their K-slice width"), std::string::npos);
}

// A version 3 file's int4 tensors of their own width have a narrower last slice, which
// version 4 pads: refused, naming the version, the tensor and what to do. A version 3 file
// of another dtype (its layout unchanged) still reads.
TEST(PackInt4, VersionThreeInt4WidthsAreRefusedOtherDtypesRead) {
  const ModelDesc d = small_int4(1);
  const std::string path = scratch("int4_v3.ork");
  {  // 512 wide: q..up (K = 512) in one slice, down (K = 1408) in two of 512 and one of 384 before
    auto w = PackWriter::create(path, d);
    ASSERT_TRUE(w);
    for (int j = 0; j < 7; ++j) ASSERT_TRUE(w->add(0, j, synthetic_weights(d, 0, j, 3).data(), {}, 512));
    ASSERT_TRUE(w->finish());
  }
  const auto b = read_all(path);
  const std::string msg = message_of(reread(with_head(b, 3, description(b))));
  EXPECT_NE(msg.find(": packed model version 3: tensor \"down\" of layer 0 is int4 in K-slices of its own width with a "
                     "narrower last slice, which version 4 pads to full width; repack the model with ork_pack"),
            std::string::npos) << msg;
  ASSERT_TRUE(reread(b)) << "the same file as version 4";
  auto d8 = synthetic_desc("small", 1, matmul::DType::int8);
  ASSERT_TRUE(d8);
  ASSERT_TRUE(write_synthetic(path, *d8, 3));
  const auto b8 = read_all(path);
  auto m8 = reread(with_head(b8, 3, description(b8)));
  ASSERT_TRUE(m8) << m8.error().message;
  EXPECT_EQ(m8->tensor(0, 6).slice_k, 0);
}

// Version 5 lays an int8 tensor of K past 4096 out in the fewest K-slices of at most 3072
// (matmul::slice_width), where versions 2 to 4 had 2048 and a rest: such a tensor in an older
// file is refused naming the version, the tensor and what to do (its bytes, as many, would
// be read in another order); an int8 file of K at most 4096 still reads as version 4 (above:
// as version 3).
TEST(PackInt4, OlderInt8TensorsPast4096AreRefused) {
  ModelDesc d;
  d.dtype = matmul::DType::int8;
  d.hidden = 64;
  d.layers = 1;
  d.matmuls = {{"up", "up", 64, 4160, {"x"}, 12, {}}, {"down", "down", 4160, 64, {"up"}, 16, {}}};
  d.output = {"x", "down"};
  const std::string path = scratch("int8_v4.ork");
  ASSERT_TRUE(write_synthetic(path, d, 3));
  const auto b = read_all(path);
  ASSERT_TRUE(reread(b)) << "version 5";
  const std::string msg = message_of(reread(with_head(b, 4, description(b))));
  EXPECT_NE(msg.find("packed model version 4: tensor \"down\" of layer 0 is int8 of K = 4160 in K-slices of 2048, "
                     "which version 5 lays out in the fewest slices of at most 3072; repack the model with ork_pack"),
            std::string::npos) << msg;
}

}  // namespace
}  // namespace ork::exec
