// The packed model file: round trips of every dtype, and each corruption named.
#include <sys/stat.h>

#include <cstring>
#include <filesystem>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "lib/exec/activation.h"
#include "lib/exec/pack_file.h"
#include "lib/exec/synthetic.h"
#include "lib/exec/unpack.h"
#include "tests/lib/exec/exec_util.h"
#include "driver/common/int4.h"

namespace ork::exec {
namespace {

using testing::read_all;
using testing::scratch;
using testing::write_all;

// Weights as unpack_weights returns them (int4: one value per byte) from the generator's format.
std::vector<uint8_t> expected(const ModelDesc& d, int l, int j) {
  auto w = synthetic_weights(d, l, j, 1);
  if (d.dtype != matmul::DType::int4) return w;
  const auto& md = d.matmuls[static_cast<size_t>(j)];
  std::vector<uint8_t> out(static_cast<size_t>(md.k * md.n));
  for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<uint8_t>(ork::int4::value_at(w.data(), static_cast<int64_t>(i)));
  return out;
}

class PackRoundTrip : public ::testing::TestWithParam<matmul::DType> {};

TEST_P(PackRoundTrip, EveryTensorUnpacksToItsWeights) {
  auto d = synthetic_desc("tiny", 3, GetParam());
  ASSERT_TRUE(d) << d.error().message;
  const std::string path = scratch(std::string("rt_") + dtype_key(GetParam()) + ".ork");
  ASSERT_TRUE(write_synthetic(path, *d, 1));
  auto m = read_packed(path);
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(m->desc.layers, 3);
  EXPECT_EQ(m->file_bytes, read_all(path).size());
  EXPECT_EQ(m->file_bytes % kPackAlign, 0u);
  const auto bytes = read_all(path);
  for (int l = 0; l < 3; ++l) {
    for (int j = 0; j < 7; ++j) {
      const PackedTensor& t = m->tensor(l, j);
      EXPECT_EQ(t.offset % kPackAlign, 0u);
      const auto& md = m->desc.matmuls[static_cast<size_t>(j)];
      std::vector<uint8_t> w;
      ASSERT_TRUE(unpack_weights(m->desc.dtype, md.k, md.n, {bytes.data() + t.offset, t.bytes}, w, t.slice_k));
      EXPECT_EQ(w, expected(*d, l, j)) << "layer " << l << " " << md.name;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Dtypes, PackRoundTrip,
                         ::testing::Values(matmul::DType::int8, matmul::DType::int4, matmul::DType::fp16),
                         [](const auto& info) { return std::string(dtype_key(info.param)); });

class PackErrors : public ::testing::Test {
 protected:
  void SetUp() override {
    auto d = synthetic_desc("tiny", 2, matmul::DType::int8);
    ASSERT_TRUE(d);
    path_ = scratch("err.ork");
    ASSERT_TRUE(write_synthetic(path_, *d, 1));
    bytes_ = read_all(path_);
  }
  std::string message_for(const std::vector<uint8_t>& bytes) {
    const std::string p = scratch("bad.ork");
    write_all(p, bytes);
    auto m = read_packed(p);
    EXPECT_FALSE(m);
    return m ? "" : m.error().message;
  }
  // Rewrites the description JSON and both checksums (a well-formed file with other contents).
  std::vector<uint8_t> with_json(const nlohmann::json& j) {
    std::vector<uint8_t> b = bytes_;
    const std::string text = j.dump();
    uint64_t data_offset;
    std::memcpy(&data_offset, b.data() + 32, 8);
    std::fill(b.begin() + 4096, b.begin() + static_cast<long>(data_offset), 0);
    std::memcpy(b.data() + 4096, text.data(), text.size());
    const uint64_t len = text.size();
    std::memcpy(b.data() + 24, &len, 8);
    const uint64_t jf = fingerprint({reinterpret_cast<const uint8_t*>(text.data()), text.size()});
    std::memcpy(b.data() + 48, &jf, 8);
    const uint64_t hf = fingerprint({b.data(), 56});
    std::memcpy(b.data() + 56, &hf, 8);
    return b;
  }
  nlohmann::json json() const {
    uint64_t len;
    std::memcpy(&len, bytes_.data() + 24, 8);
    return nlohmann::json::parse(bytes_.begin() + 4096, bytes_.begin() + 4096 + static_cast<long>(len));
  }
  std::string path_;
  std::vector<uint8_t> bytes_;
};

TEST_F(PackErrors, UnchangedFileOpens) { EXPECT_TRUE(read_packed(path_)); }

TEST_F(PackErrors, BadMagic) {
  auto b = bytes_;
  b[0] = 'X';
  EXPECT_NE(message_for(b).find("bad magic"), std::string::npos);
}

TEST_F(PackErrors, OtherVersion) {
  auto b = bytes_;
  b[8] = 9;
  EXPECT_NE(message_for(b).find("version 9"), std::string::npos);
}

TEST_F(PackErrors, CorruptedHeaderField) {
  auto b = bytes_;
  b[41] ^= 1;  // file bytes
  EXPECT_NE(message_for(b).find("header is corrupted"), std::string::npos);
}

TEST_F(PackErrors, CorruptedDescription) {
  auto b = bytes_;
  b[4100] ^= 0x20;
  EXPECT_NE(message_for(b).find("description is corrupted"), std::string::npos);
}

TEST_F(PackErrors, TruncatedFile) {
  auto b = bytes_;
  b.resize(b.size() - 4096);
  EXPECT_NE(message_for(b).find("truncated"), std::string::npos);
}

TEST_F(PackErrors, TruncatedHeader) {
  auto b = bytes_;
  b.resize(100);
  EXPECT_NE(message_for(b).find("truncated"), std::string::npos);
}

// A short file that does not start like a packed model is one of another kind (a text file),
// not a truncated model; one that does start like it is truncated.
TEST_F(PackErrors, ShortFileOfOtherBytesIsBadMagicNotTruncated) {
  const std::string text = "root:x:0:0:root:/root:/bin/bash\n";
  EXPECT_EQ(message_for({text.begin(), text.end()}),
            scratch("bad.ork") + ": not a packed model file (bad magic; pack it with ork_pack)");
  EXPECT_EQ(message_for({bytes_.begin(), bytes_.begin() + 6}),
            scratch("bad.ork") + ": model file truncated: 6 bytes, smaller than the 4096-byte header");
}

// A directory opens for reading; its size is not a file's (ftell said LONG_MAX).
TEST_F(PackErrors, DirectoryIsNamedAsOne) {
  const std::string dir = scratch("a_dir.ork");
  std::filesystem::create_directories(dir);
  auto m = read_packed(dir);
  ASSERT_FALSE(m);
  EXPECT_EQ(m.error().message, dir + ": a directory, not a packed model file");
}

TEST_F(PackErrors, MissingTensor) {
  auto j = json();
  j["tensors"].erase(j["tensors"].begin() + 9);  // layer 1, "v"
  EXPECT_NE(message_for(with_json(j)).find("tensor \"v\" of layer 1 is missing"), std::string::npos);
}

TEST_F(PackErrors, MisalignedTensor) {
  auto j = json();
  j["tensors"][3][2] = j["tensors"][3][2].get<uint64_t>() + 16;
  EXPECT_NE(message_for(with_json(j)).find("not 4 KiB aligned"), std::string::npos);
}

TEST_F(PackErrors, WrongTensorSize) {
  auto j = json();
  j["tensors"][0][3] = 1024;
  EXPECT_NE(message_for(with_json(j)).find("packs to"), std::string::npos);
}

TEST_F(PackErrors, ShapesThatDoNotChain) {
  auto j = json();
  j["model"]["matmuls"][3]["k"] = 48;  // o reads q (64 wide)
  EXPECT_NE(message_for(with_json(j)).find("do not chain"), std::string::npos);
}

// Numbers in a packed header that once became others: a layer index of 2^32 read as 0, an
// offset of 8192.5 as 8192, 4294967298 layers as 2 (checksums recomputed each time).
TEST_F(PackErrors, TableAndModelNumbersAreIntegersInRange) {
  auto j = json();
  j["tensors"][0][0] = uint64_t{1} << 32;
  EXPECT_NE(message_for(with_json(j)).find(
                "packed model tensor table: tensors[0][0] = 4294967296: must be an integer in 0..2147483647"),
            std::string::npos);
  j = json();
  j["tensors"][1][2] = 8192.5;
  EXPECT_NE(message_for(with_json(j)).find("tensors[1][2] = 8192.5: must be an integer in 0..18446744073709551615"),
            std::string::npos);
  j = json();
  j["tensors"][2][3] = -4096;
  EXPECT_NE(message_for(with_json(j)).find("tensors[2][3] = -4096: must be an integer"), std::string::npos);
  j = json();
  j["tensors"][0] = {0, 0, 8192};
  EXPECT_NE(message_for(with_json(j)).find("tensors[0] is not [layer, matmul, offset, bytes"), std::string::npos);
  j = json();
  j["model"]["layers"] = 4294967298u;
  EXPECT_NE(message_for(with_json(j)).find("\"layers\" = 4294967298: must be an integer in 1..2147483647"),
            std::string::npos);
}

// A packed header and description around any JSON `text` (checksums computed, the data
// right after it, one 4 KiB block of it): what a hostile writer can make.
std::vector<uint8_t> packed_around(const std::string& text) {
  const uint64_t data = align_up(kPackHeaderBytes + text.size(), kPackAlign), file = data + kPackAlign;
  std::vector<uint8_t> b(data, 0);
  std::memcpy(b.data(), kPackMagic, 8);
  const uint32_t fields32[] = {kPackVersion, static_cast<uint32_t>(kPackHeaderBytes)};
  std::memcpy(b.data() + 8, fields32, 8);
  const uint64_t fields[] = {kPackHeaderBytes, text.size(), data, file,
                             fingerprint({reinterpret_cast<const uint8_t*>(text.data()), text.size()})};
  std::memcpy(b.data() + 16, fields, sizeof fields);
  const uint64_t hf = fingerprint({b.data(), 56});
  std::memcpy(b.data() + 56, &hf, 8);
  std::memcpy(b.data() + kPackHeaderBytes, text.data(), text.size());
  return b;
}

// 100,000 nested '[' once overflowed the stack of read_packed's caller (the description was
// serialised recursively): refused before anything recurses, from a file as ork_run opens it.
TEST(PackHostile, DeepNestingInTheDescriptionIsRefused) {
  for (const char* where : {"model", "tensors"}) {
    nlohmann::json j = {{"model", 1}, {"tensors", 2}};
    std::string text = j.dump();
    const std::string deep = std::string(100000, '[') + std::string(100000, ']');
    text.replace(text.find(where == std::string("model") ? "1" : "2"), 1, deep);
    std::vector<uint8_t> b = packed_around(text);
    b.resize(b.size() + kPackAlign, 0);
    const std::string path = scratch("deep.ork");
    write_all(path, b);
    auto m = read_packed(path);
    ASSERT_FALSE(m) << where;
    EXPECT_EQ(m.error().message, path + ": packed model description: JSON nested more than 64 levels deep (arrays and "
                                        "objects), the most this reader accepts");
  }
}

// A description of read_packed's limit (kPackMaxDescriptionBytes) with the most matmuls that
// fit, one tensor each: parsed and checked within the test's normal timeout, which a check
// quadratic in the matmuls (100,000 took over a minute) exceeds by hours.
TEST(PackHostile, ADescriptionAtTheSizeLimitParses) {
  std::string matmuls, table;
  int count = 0;
  const uint64_t data = kPackHeaderBytes + kPackMaxDescriptionBytes;
  auto bytes = packed_bytes(matmul::DType::int8, 1, 1);
  ASSERT_TRUE(bytes);
  ASSERT_LE(*bytes, kPackAlign);  // every tensor fits the one block of data packed_around gives
  while (matmuls.size() + table.size() + 200 < kPackMaxDescriptionBytes) {
    matmuls += fmt::format(R"({}{{"name":"m{}","k":1,"n":1,"input":["x"]}})", count ? "," : "", count);
    table += fmt::format("{}[0,{},{},{},0,0,0]", count ? "," : "", count, data, *bytes);
    ++count;
  }
  const std::string text = R"({"model":{"dtype":"int8","hidden":1,"layers":1,"matmuls":[)" + matmuls +
                           R"(],"output":["x"]},"tensors":[)" + table + "]}";
  ASSERT_LE(text.size(), kPackMaxDescriptionBytes);
  std::vector<uint8_t> head = packed_around(text);
  ASSERT_EQ(head.size(), data);
  auto m = parse_packed(head, data + kPackAlign);
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(static_cast<int>(m->desc.matmuls.size()), count);
  EXPECT_EQ(m->tensors.size(), static_cast<size_t>(count));
  EXPECT_GT(count, 800000);
  EXPECT_EQ(m->tensors.back().matmul, count - 1);
}

TEST(ModelDesc, ChecksNameEverySource) {
  auto d = synthetic_desc("tiny", 1, matmul::DType::int8);
  ASSERT_TRUE(d);
  d->matmuls[4].inputs = {"x", "nothere"};
  auto s = check_desc(*d);
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().message.find("unknown source \"nothere\""), std::string::npos);
  d->matmuls[4].inputs = {"x", "down"};
  s = check_desc(*d);
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().message.find("comes later"), std::string::npos);
  d->matmuls[4].inputs = {"x", "k"};
  s = check_desc(*d);
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().message.find("do not chain"), std::string::npos);
}

TEST(ModelDesc, JsonRoundTrip) {
  auto d = synthetic_desc("qwen2.5-1.5b", 28, matmul::DType::int8);
  ASSERT_TRUE(d);
  auto back = parse_desc(desc_to_json(*d));
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(desc_to_json(*back), desc_to_json(*d));
  EXPECT_EQ(back->matmuls[6].k, 8960);
  EXPECT_EQ(back->matmuls[1].n, 256);
}

TEST(Activation, RoundHalfEvenAndClamp) {
  EXPECT_EQ(round_shift(5, 1), 2);    // 2.5 -> 2
  EXPECT_EQ(round_shift(7, 1), 4);    // 3.5 -> 4
  EXPECT_EQ(round_shift(-5, 1), -2);  // -2.5 -> -2
  EXPECT_EQ(round_shift(-7, 1), -4);  // -3.5 -> -4
  EXPECT_EQ(round_shift(-6, 2), -2);  // -1.5 -> -2
  EXPECT_EQ(round_shift(13, 3), 2);   // 1.625 -> 2
  const int32_t c[] = {100000, -100000, 300, -300};
  Activation a;
  requantise(matmul::DType::int8, c, 1, 4, 1, a);
  EXPECT_EQ(a.i8, (std::vector<int8_t>{127, -128, 127, -128}));
  requantise(matmul::DType::int4, c + 2, 1, 2, 6, a);  // 4.6875 -> 5, -5
  EXPECT_EQ(a.i8, (std::vector<int8_t>{5, -5}));
  Activation x{1, 3, {100, -100, 3}, {}}, y{1, 3, {100, -100, 4}, {}};
  const Activation* src[] = {&x, &y};
  Activation sum;
  combine(matmul::DType::int8, src, sum);
  EXPECT_EQ(sum.i8, (std::vector<int8_t>{127, -128, 7}));
}

// packed_file_bytes is the size PackWriter writes, exactly for int8 and fp16, at most for
// int4 (its widths, and so its padding, are the weights'), for every layer count.
TEST(PackFile, ExactSizeIsTheSizeWritten) {
  for (auto dtype : {matmul::DType::int8, matmul::DType::int4, matmul::DType::fp16}) {
    for (int layers : {1, 3}) {
      auto d = synthetic_desc("tiny", layers, dtype);
      ASSERT_TRUE(d);
      const std::string path = scratch("exact.ork");
      ASSERT_TRUE(write_synthetic(path, *d, 1));
      auto want = packed_file_bytes(*d);
      ASSERT_TRUE(want) << want.error().message;
      if (dtype == matmul::DType::int4)
        EXPECT_LE(std::filesystem::file_size(path), *want) << layers;
      else
        EXPECT_EQ(std::filesystem::file_size(path), *want) << dtype_key(dtype) << " x " << layers;
    }
  }
}

// An output that is not a regular file or a new path is refused and left alone; a new
// output replaces the old one by rename (another inode), with its permission bits.
TEST(PackFile, OutputsAreNewPathsOrRegularFilesReplacedByRename) {
  auto d = synthetic_desc("tiny", 1, matmul::DType::int8);
  ASSERT_TRUE(d);
  const std::string fifo = scratch("out.fifo");
  std::filesystem::remove(fifo);
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  auto w = PackWriter::create(fifo, *d);
  ASSERT_FALSE(w);
  EXPECT_NE(w.error().message.find("a FIFO, not a regular file: refusing to write it"), std::string::npos);
  EXPECT_TRUE(std::filesystem::is_fifo(fifo));
  const std::string dir = scratch("out_dir");
  std::filesystem::create_directories(dir);
  EXPECT_FALSE(PackWriter::create(dir, *d));
  EXPECT_TRUE(std::filesystem::is_directory(dir));
  const std::string path = scratch("replace.ork");
  write_all(path, {1, 2, 3});
  ASSERT_EQ(::chmod(path.c_str(), 0640), 0);
  struct stat before {};
  ASSERT_EQ(::stat(path.c_str(), &before), 0);
  ASSERT_TRUE(write_synthetic(path, *d, 1));
  struct stat after {};
  ASSERT_EQ(::stat(path.c_str(), &after), 0);
  EXPECT_NE(before.st_ino, after.st_ino);
  EXPECT_EQ(after.st_mode & 07777, 0640u);
  EXPECT_TRUE(read_packed(path));
}

// FNV-1a of the published test vectors (http://www.isthe.com/chongo/tech/comp/fnv/): the
// packed file's checksums agree with any standard FNV-1a tool.
TEST(PackFile, FingerprintIsStandardFnv1a) {
  EXPECT_EQ(fingerprint({}), 0xcbf29ce484222325ull);
  const uint8_t a[] = {'a'};
  EXPECT_EQ(fingerprint(a), 0xaf63dc4c8601ec8cull);
  const uint8_t foobar[] = {'f', 'o', 'o', 'b', 'a', 'r'};
  EXPECT_EQ(fingerprint(foobar), 0x85944171f73967e8ull);
}

}  // namespace
}  // namespace ork::exec
