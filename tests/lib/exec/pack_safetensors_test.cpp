// ork_pack's real-model path: safetensors (N x K, as Hugging Face stores Linear weights)
// + a description -> a packed file whose tensors unpack to the expected K x N weights.
#include <cstring>
#include <utility>
#include <filesystem>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "lib/exec/pack_file.h"
#include "lib/exec/pack_safetensors.h"
#include "lib/exec/synthetic.h"
#include "lib/exec/unpack.h"
#include "lib/quant/qweights.h"
#include "driver/common/fp16.h"
#include "tests/lib/exec/exec_util.h"

namespace ork::exec {
namespace {

using testing::read_all;
using testing::scratch;
using testing::write_all;

// A safetensors file: tensors given as (name, dtype, shape, bytes), in order.
struct St {
  std::string name, dtype;
  std::vector<uint64_t> shape;
  std::vector<uint8_t> data;
};
void write_safetensors(const std::string& path, const std::vector<St>& tensors) {
  nlohmann::json h = nlohmann::json::object();
  uint64_t off = 0;
  for (const auto& t : tensors) {
    h[t.name] = {{"dtype", t.dtype}, {"shape", t.shape}, {"data_offsets", {off, off + t.data.size()}}};
    off += t.data.size();
  }
  const std::string text = h.dump();
  std::vector<uint8_t> b(8);
  const uint64_t n = text.size();
  std::memcpy(b.data(), &n, 8);
  b.insert(b.end(), text.begin(), text.end());
  for (const auto& t : tensors) b.insert(b.end(), t.data.begin(), t.data.end());
  write_all(path, b);
}

// Element (k, n) of a stored N x K tensor of `eb`-byte elements.
template <typename T>
T at_nk(const std::vector<uint8_t>& d, int64_t k, int64_t n, int64_t kk) {
  T v;
  std::memcpy(&v, d.data() + (n * kk + k) * static_cast<int64_t>(sizeof(T)), sizeof(T));
  return v;
}

std::vector<St> model_tensors(const ModelDesc& d, const std::string& dtype) {
  std::vector<St> out;
  uint64_t seed = 7;
  for (int l = 0; l < d.layers; ++l) {
    for (const auto& m : d.matmuls) {
      St t{tensor_name(m, l), dtype, {static_cast<uint64_t>(m.n), static_cast<uint64_t>(m.k)}, {}};
      const size_t count = static_cast<size_t>(m.k * m.n);
      for (size_t i = 0; i < count; ++i) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        const auto r = static_cast<uint8_t>(seed >> 56);
        if (dtype == "I8") {
          t.data.push_back(r);
        } else if (dtype == "F32") {
          const float f = (static_cast<float>(r) - 128.0f) / 37.0f;
          const auto* p = reinterpret_cast<const uint8_t*>(&f);
          t.data.insert(t.data.end(), p, p + 4);
        } else {  // F16 or BF16 of the same values
          const float f = (static_cast<float>(r) - 128.0f) / 64.0f;
          uint16_t h;
          if (dtype == "F16") {
            h = ork::float_to_half(f);
          } else {
            uint32_t bits;
            std::memcpy(&bits, &f, 4);
            h = static_cast<uint16_t>(bits >> 16);  // exact: these floats have 8 significant bits
          }
          t.data.push_back(static_cast<uint8_t>(h));
          t.data.push_back(static_cast<uint8_t>(h >> 8));
        }
      }
      out.push_back(std::move(t));
    }
  }
  return out;
}

std::vector<uint8_t> unpacked(const std::string& path, int l, int j) {
  auto m = read_packed(path);
  EXPECT_TRUE(m) << m.error().message;
  const auto bytes = read_all(path);
  const PackedTensor& t = m->tensor(l, j);
  const auto& md = m->desc.matmuls[static_cast<size_t>(j)];
  std::vector<uint8_t> w;
  EXPECT_TRUE(unpack_weights(m->desc.dtype, md.k, md.n, {bytes.data() + t.offset, t.bytes}, w));
  return w;
}

TEST(PackSafetensors, Int8CodesTransposed) {
  auto d = synthetic_desc("tiny", 2, matmul::DType::int8);
  ASSERT_TRUE(d);
  const auto tensors = model_tensors(*d, "I8");
  const std::string st = scratch("i8.safetensors"), out = scratch("i8.ork");
  write_safetensors(st, tensors);
  ASSERT_TRUE(pack_safetensors(st, *d, out));
  for (int j = 0; j < 7; ++j) {
    const auto& md = d->matmuls[static_cast<size_t>(j)];
    const auto w = unpacked(out, 1, j);
    const auto& src = tensors[static_cast<size_t>(7 + j)].data;
    for (int64_t k = 0; k < md.k; ++k)
      for (int64_t n = 0; n < md.n; ++n)
        ASSERT_EQ(w[static_cast<size_t>(k * md.n + n)], at_nk<uint8_t>(src, k, n, md.k)) << md.name << " " << k << "," << n;
  }
}

TEST(PackSafetensors, F32QuantisedPerColumnWithScales) {
  auto d = synthetic_desc("tiny", 1, matmul::DType::int8);
  ASSERT_TRUE(d);
  const auto tensors = model_tensors(*d, "F32");
  const std::string st = scratch("f32.safetensors"), out = scratch("f32.ork");
  write_safetensors(st, tensors);
  ASSERT_TRUE(pack_safetensors(st, *d, out));
  const auto& md = d->matmuls[4];
  std::vector<float> kn(static_cast<size_t>(md.k * md.n));
  for (int64_t k = 0; k < md.k; ++k)
    for (int64_t n = 0; n < md.n; ++n) kn[static_cast<size_t>(k * md.n + n)] = at_nk<float>(tensors[4].data, k, n, md.k);
  auto q = quant::QuantWeights::quantise(kn, md.k, md.n, {quant::Bits::int8, 0});
  ASSERT_TRUE(q);
  const auto w = unpacked(out, 0, 4);
  EXPECT_TRUE(std::equal(w.begin(), w.end(), q->codes().begin()));
  auto m = read_packed(out);
  ASSERT_TRUE(m);
  const PackedTensor& t = m->tensor(0, 4);
  ASSERT_EQ(t.scale_bytes, static_cast<uint64_t>(md.n) * 4);
  const auto bytes = read_all(out);
  EXPECT_EQ(std::memcmp(bytes.data() + t.scale_offset, q->scales().data(), t.scale_bytes), 0);
}

TEST(PackSafetensors, Bf16ToFp16Exactly) {
  auto d = synthetic_desc("tiny", 1, matmul::DType::fp16);
  ASSERT_TRUE(d);
  const auto f16 = model_tensors(*d, "F16"), bf16 = model_tensors(*d, "BF16");
  const std::string a = scratch("f16.safetensors"), b = scratch("bf16.safetensors");
  write_safetensors(a, f16);
  write_safetensors(b, bf16);
  ASSERT_TRUE(pack_safetensors(a, *d, scratch("f16.ork")));
  ASSERT_TRUE(pack_safetensors(b, *d, scratch("bf16.ork")));
  for (int j = 0; j < 7; ++j) EXPECT_EQ(unpacked(scratch("f16.ork"), 0, j), unpacked(scratch("bf16.ork"), 0, j));
}

TEST(PackSafetensors, MissingTensorNamed) {
  auto d = synthetic_desc("tiny", 2, matmul::DType::int8);
  ASSERT_TRUE(d);
  auto tensors = model_tensors(*d, "I8");
  tensors.erase(tensors.begin() + 12);  // layer 1, "up"
  const std::string st = scratch("miss.safetensors");
  write_safetensors(st, tensors);
  auto s = pack_safetensors(st, *d, scratch("miss.ork"));
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().message.find("\"model.layers.1.mlp.up_proj.weight\" is missing"), std::string::npos) << s.error().message;
}

TEST(PackSafetensors, WrongShapeNamed) {
  auto d = synthetic_desc("tiny", 1, matmul::DType::int8);
  ASSERT_TRUE(d);
  auto tensors = model_tensors(*d, "I8");
  std::swap(tensors[4].shape[0], tensors[4].shape[1]);  // stored K x N instead of N x K
  const std::string st = scratch("shape.safetensors");
  write_safetensors(st, tensors);
  auto s = pack_safetensors(st, *d, scratch("shape.ork"));
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().message.find("gate_proj.weight\" has shape"), std::string::npos) << s.error().message;
}

// An fp16 model refuses weights that are not finite fp16s, naming the tensor and the element
// (row k, column n of K x N), as the integer path does: NaN (F16), infinity (BF16), NaN (F32)
// and a finite F32 past 65504, which would round to infinity.
TEST(PackSafetensors, NonFiniteFp16WeightsNamed) {
  auto d = synthetic_desc("tiny", 1, matmul::DType::fp16);
  ASSERT_TRUE(d);
  const int64_t kk = d->matmuls[4].k, k = 2, n = 3;  // gate: stored N x K, element (k, n)
  const float big = 1e6f;
  const struct { std::string dtype; std::vector<uint8_t> bytes; std::string want; } cases[] = {
      {"F16", {0x00, 0x7e}, "W[2][3] = nan: fp16 weights must be finite"},
      {"BF16", {0x80, 0x7f}, "W[2][3] = inf: fp16 weights must be finite"},
      {"F32", {0x00, 0x00, 0xc0, 0x7f}, "W[2][3] = nan: fp16 weights must be finite"},
      {"F32", std::vector<uint8_t>(reinterpret_cast<const uint8_t*>(&big), reinterpret_cast<const uint8_t*>(&big) + 4),
       "W[2][3] = 1000000: fp16 weights must be finite (past fp16's 65504, it rounds to infinity)"}};
  for (const auto& c : cases) {
    auto tensors = model_tensors(*d, c.dtype);
    std::memcpy(tensors[4].data.data() + (n * kk + k) * static_cast<int64_t>(c.bytes.size()), c.bytes.data(), c.bytes.size());
    const std::string st = scratch("nonfinite.safetensors");
    write_safetensors(st, tensors);
    auto s = pack_safetensors(st, *d, scratch("nonfinite.ork"));
    ASSERT_FALSE(s) << c.dtype << " " << c.want;
    EXPECT_EQ(s.error().message, "tensor \"model.layers.0.mlp.gate_proj.weight\": " + c.want) << c.dtype;
  }
}

// The size computed before writing is the size written, exactly: with scales (F32 quantised
// to int8 and int4), without (I8 codes, fp16), and mixed.
TEST(PackSafetensors, ExactSizeIsTheSizeWritten) {
  for (auto [dtype, src] : {std::pair{matmul::DType::int8, "F32"}, std::pair{matmul::DType::int8, "I8"},
                            std::pair{matmul::DType::int4, "BF16"}, std::pair{matmul::DType::fp16, "F16"}}) {
    auto d = synthetic_desc("tiny", 2, dtype);
    ASSERT_TRUE(d);
    auto tensors = model_tensors(*d, src);
    if (std::string(src) == "I8") tensors[3] = model_tensors(*d, "F32")[3];  // one tensor with scales
    const std::string st = scratch("size.safetensors"), out = scratch("size.ork");
    write_safetensors(st, tensors);
    auto want = safetensors_pack_bytes(st, *d);
    ASSERT_TRUE(want) << want.error().message;
    ASSERT_TRUE(pack_safetensors(st, *d, out));
    EXPECT_EQ(std::filesystem::file_size(out), *want) << dtype_key(dtype) << " from " << src;
  }
}

// A description's layers are backed by tensors: a pattern without "{layer}" names one tensor
// for every layer (it once packed 100,000 copies from a 145-byte description); refused before
// anything is written, naming the bound.
TEST(PackSafetensors, LayersMustBeBackedByTensorsOfTheirOwn) {
  auto d = synthetic_desc("tiny", 1, matmul::DType::int8);
  ASSERT_TRUE(d);
  const std::string st = scratch("one_layer.safetensors"), out = scratch("many.ork");
  write_safetensors(st, model_tensors(*d, "I8"));
  std::filesystem::remove(out);
  ModelDesc many = *d;
  for (auto& m : many.matmuls) m.tensor = tensor_name(m, 0);  // no "{layer}": layer 0's tensors
  many.layers = 100000;
  auto s = pack_safetensors(st, many, out);
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().message.find("100000 layers x 7 matmuls name 700000 tensors; the file holds 7"),
            std::string::npos) << s.error().message;
  EXPECT_FALSE(safetensors_pack_bytes(st, many));
  many.layers = 2;  // within the count, but layer 1 names layer 0's tensors
  s = pack_safetensors(st, many, out);
  ASSERT_FALSE(s);
  EXPECT_FALSE(std::filesystem::exists(out));
  write_safetensors(st, model_tensors(*synthetic_desc("tiny", 2, matmul::DType::int8), "I8"));
  s = pack_safetensors(st, many, out);
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().message.find("is named by layer 0 and layer 1"), std::string::npos) << s.error().message;
  EXPECT_FALSE(std::filesystem::exists(out));
}

// A failed pack leaves an existing output byte for byte as it was, and no temporary file
// beside it (driver/common/safe_file.h): here a weight that fp16 cannot hold, in the last
// tensor, after the others were written.
TEST(PackSafetensors, FailureLeavesTheOutputAsItWas) {
  auto d = synthetic_desc("tiny", 2, matmul::DType::fp16);
  ASSERT_TRUE(d);
  const std::string dir = scratch("keep_dir");
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string st = dir + "/m.safetensors", out = dir + "/m.ork";
  auto tensors = model_tensors(*d, "F32");
  const float big = 1e9f;
  std::memcpy(tensors.back().data.data(), &big, 4);
  write_safetensors(st, tensors);
  const std::vector<uint8_t> old = {'o', 'l', 'd', '\n'};
  write_all(out, old);
  auto s = pack_safetensors(st, *d, out);
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().message.find("fp16 weights must be finite"), std::string::npos) << s.error().message;
  EXPECT_EQ(read_all(out), old);
  int entries = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir)) ++entries;
  EXPECT_EQ(entries, 2) << "a temporary file was left beside the output";
}

}  // namespace
}  // namespace ork::exec
