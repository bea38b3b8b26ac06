// Packed-weight export / import: a blob from one backend makes weights on every backend that
// give the same C bytes with no repacking on an NPU device; each bad blob (truncated header,
// truncated or corrupted payload, another layout or header version, a bad dtype or shape)
// gets its own message; a too-small capacity returns the size needed.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "lib/api/weights_blob.h"
#include "lib/matmul/layout_source.h"
#include "ork/ork.h"
#include "weights_test_util.h"

namespace {

using namespace ork::weights_testing;
namespace blob = ork::api::blob;

TEST(Crc32, CheckValueAndSlicingEqualsBytewise) {
  const std::string s = "123456789";
  EXPECT_EQ(blob::crc32({reinterpret_cast<const uint8_t*>(s.data()), s.size()}), 0xCBF43926u);
  std::vector<uint8_t> data(1000);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<uint8_t>(i * 37 + 11);
  uint32_t chained = 0;  // one byte at a time (never the 8-byte loop) must equal one call
  for (uint8_t b : data) chained = blob::crc32({&b, 1}, chained);
  EXPECT_EQ(blob::crc32(data), chained);
}

class Packed : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override { ASSERT_EQ(ork_device_open(GetParam(), &dev_), ORK_OK) << ork_last_error(); }
  void TearDown() override { ork_device_close(dev_); }
  ork_device* dev_ = nullptr;
};

// Exported on this device, imported on each: same C, same blob back.
TEST_P(Packed, RoundTripOnEveryBackend) {
  for (ork_dtype dtype : {ORK_DTYPE_INT8, ORK_DTYPE_FP16, ORK_DTYPE_INT4}) {
    for (auto [m, k, n] : {std::tuple{3, 70, 33}, std::tuple{2, 1000, 40}}) {
      SCOPED_TRACE(::testing::Message() << "dtype " << dtype << " K " << k << " N " << n);
      const auto dense = random_dense(dtype, k, n, 3);
      const auto a = random_a(dtype, m, k, 4);
      ork_weights* w = nullptr;
      ASSERT_EQ(ork_weights_create(dev_, dtype, k, n, dense.data(), &w), ORK_OK) << ork_last_error();
      const auto want = run(dev_, w, a, m, n);
      const auto b = export_blob(w);
      for (const char* other : kDevices) {
        ork_device* d2 = nullptr;
        ASSERT_EQ(ork_device_open(other, &d2), ORK_OK);
        ork_weights* w2 = nullptr;
        ASSERT_EQ(ork_weights_import_packed(d2, b.data(), b.size(), &w2), ORK_OK) << other << ": " << ork_last_error();
        EXPECT_EQ(run(d2, w2, a, m, n), want) << other;
        EXPECT_EQ(export_blob(w2), b) << other;
        ork_weights_destroy(w2);
        ork_device_close(d2);
      }
      ork_weights_destroy(w);
    }
  }
}

// The header's fields at their documented offsets.
TEST_P(Packed, HeaderFieldsAtTheDocumentedOffsets) {
  const auto dense = random_dense(ORK_DTYPE_INT8, 70, 33, 3);
  ork_weights* w = nullptr;
  ASSERT_EQ(ork_weights_create(dev_, ORK_DTYPE_INT8, 70, 33, dense.data(), &w), ORK_OK);
  const auto b = export_blob(w);
  ork_weights_destroy(w);
  auto u32 = [&](size_t at) { return uint32_t{b[at]} | uint32_t{b[at + 1]} << 8 | uint32_t{b[at + 2]} << 16 | uint32_t{b[at + 3]} << 24; };
  EXPECT_EQ(std::string(b.begin(), b.begin() + 4), "ORKW");
  EXPECT_EQ(u32(4), 1u);    // header version
  EXPECT_EQ(u32(8), 64u);   // header bytes
  EXPECT_EQ(u32(12), ork::matmul::kWeightLayoutVersion);
  EXPECT_EQ(u32(16), 1u);   // int8
  EXPECT_EQ(u32(24), 70u);  // K (low word)
  EXPECT_EQ(u32(32), 33u);  // N
  // 70 x 33 int8: kp = 96, np = 64, one slice: 6144 payload bytes.
  EXPECT_EQ(u32(40), 6144u);
  EXPECT_EQ(b.size(), 64u + 6144u);
  EXPECT_EQ(u32(48), blob::crc32({b.data() + 64, b.size() - 64}));
  EXPECT_EQ(u32(60), blob::crc32({b.data(), 60}));
}

class BadBlobs : public Packed {
 protected:
  void SetUp() override {
    Packed::SetUp();
    const auto dense = random_dense(ORK_DTYPE_INT4, 64, 32, 8);
    ASSERT_EQ(ork_weights_create(dev_, ORK_DTYPE_INT4, 64, 32, dense.data(), &w_), ORK_OK);
    good_ = export_blob(w_);
  }
  void TearDown() override {
    ork_weights_destroy(w_);
    Packed::TearDown();
  }
  // Imports `b`; expects a refusal whose message contains `what`, and no weights.
  void expect_refused(const std::vector<uint8_t>& b, const std::string& what) {
    ork_weights* w = reinterpret_cast<ork_weights*>(&w_);
    EXPECT_EQ(ork_weights_import_packed(dev_, b.data(), b.size(), &w), ORK_E_INVALID_ARGUMENT);
    EXPECT_EQ(w, nullptr);
    EXPECT_NE(std::string(ork_last_error()).find(what), std::string::npos) << ork_last_error();
  }
  // Sets a u32 header field and re-seals the header checksum (a well-formed blob that lies).
  std::vector<uint8_t> with_field(size_t at, uint32_t v) {
    auto b = good_;
    for (int i = 0; i < 4; ++i) b[at + static_cast<size_t>(i)] = static_cast<uint8_t>(v >> (8 * i));
    const uint32_t crc = blob::crc32({b.data(), 60});
    for (int i = 0; i < 4; ++i) b[60 + static_cast<size_t>(i)] = static_cast<uint8_t>(crc >> (8 * i));
    return b;
  }
  ork_weights* w_ = nullptr;
  std::vector<uint8_t> good_;
};

TEST_P(BadBlobs, EachDefectNamed) {
  expect_refused(std::vector<uint8_t>(good_.begin(), good_.begin() + 40),
                 "ork_weights_import_packed: truncated header: the blob holds 40 bytes, the header alone is 64");
  expect_refused(std::vector<uint8_t>(good_.begin(), good_.end() - 1), "truncated payload: the header announces");
  auto extra = good_;
  extra.push_back(0);
  expect_refused(extra, "(trailing bytes)");
  auto bad_payload = good_;
  bad_payload[100] ^= 0x10;
  expect_refused(bad_payload, "payload checksum mismatch");
  expect_refused(bad_payload, "the payload is corrupted");
  auto bad_header = good_;
  bad_header[24] ^= 0x01;  // K, without re-sealing
  expect_refused(bad_header, "header checksum mismatch");
  auto bad_magic = good_;
  bad_magic[0] = 'X';
  expect_refused(bad_magic, "bad magic: not a libork packed-weight blob");
  expect_refused(with_field(12, ork::matmul::kWeightLayoutVersion + 1),
                 "layout version 3: this library packs weights in layout version 2");
  expect_refused(with_field(4, 7), "header version 7: this library reads header version 1");
  expect_refused(with_field(16, ORK_DTYPE_FP32), "dtype 5 in the header: packed weights are int8 (1), fp16 (2) or int4 (3)");
  expect_refused(with_field(16, ORK_DTYPE_FP16), "payload of 2048 bytes: 64 x 32 weights in layout version 2 are 4096 bytes");
  expect_refused(with_field(24, 0), "K = 0, N = 32 in the header");
  ork_weights* w = nullptr;
  EXPECT_EQ(ork_weights_import_packed(dev_, nullptr, 10, &w), ORK_E_INVALID_ARGUMENT);
  EXPECT_STREQ(ork_last_error(), "ork_weights_import_packed: blob is NULL");
  EXPECT_EQ(ork_weights_import_packed(nullptr, good_.data(), good_.size(), &w), ORK_E_INVALID_ARGUMENT);
  EXPECT_EQ(ork_weights_import_packed(dev_, good_.data(), good_.size(), nullptr), ORK_E_INVALID_ARGUMENT);
  ASSERT_EQ(ork_weights_import_packed(dev_, good_.data(), good_.size(), &w), ORK_OK) << "usable after: " << ork_last_error();
  ork_weights_destroy(w);
}

TEST_P(BadBlobs, SmallCapacityReturnsTheSizeNeeded) {
  size_t size = 0;
  std::vector<uint8_t> b(good_.size() - 1);
  EXPECT_EQ(ork_weights_export_packed(w_, b.data(), b.size(), &size), ORK_E_INVALID_ARGUMENT);
  EXPECT_EQ(size, good_.size());
  EXPECT_EQ(std::string(ork_last_error()),
            "ork_weights_export_packed: capacity = " + std::to_string(b.size()) + " bytes: the blob needs " +
                std::to_string(good_.size()) + " (returned in *size)");
  EXPECT_EQ(ork_weights_export_packed(w_, b.data(), b.size(), nullptr), ORK_E_INVALID_ARGUMENT);
  EXPECT_EQ(ork_weights_export_packed(nullptr, b.data(), b.size(), &size), ORK_E_INVALID_ARGUMENT);
}

// The bytes the device's buffer of each weight holds, before it exists: what the blob's
// payload is on every device, and on emu what the window gives the buffer (its 4 KiB pages,
// the fake kernel's exact figure: ork_device_memory's exact = 1).
uint64_t packed_window_used(ork_device* d) {
  ork_memory_info m{};
  m.struct_size = sizeof m;
  EXPECT_EQ(ork_device_memory(d, &m), ORK_OK) << ork_last_error();
  return m.window_bytes - m.window_free_bytes;
}

TEST_P(Packed, PackedBytesIsTheBufferBeforeTheWeightsExist) {
  const bool npu = std::string(GetParam()) != "cpu";
  for (ork_dtype dtype : {ORK_DTYPE_INT8, ORK_DTYPE_FP16, ORK_DTYPE_INT4}) {
    for (auto [k, n] : {std::pair{70, 33}, std::pair{1000, 40}, std::pair{1536, 256}, std::pair{5000, 17}}) {
      SCOPED_TRACE(::testing::Message() << "dtype " << dtype << " K " << k << " N " << n);
      uint64_t bytes = 0;
      ASSERT_EQ(ork_weights_packed_bytes(dtype, k, n, &bytes), ORK_OK) << ork_last_error();
      const auto dense = random_dense(dtype, k, n, 3);
      const uint64_t before = npu ? packed_window_used(dev_) : 0;
      ork_weights* w = nullptr;
      ASSERT_EQ(ork_weights_create(dev_, dtype, k, n, dense.data(), &w), ORK_OK) << ork_last_error();
      if (npu) {
        EXPECT_EQ(packed_window_used(dev_) - before, (bytes + 4095) / 4096 * 4096);
      }
      EXPECT_EQ(export_blob(w).size(), blob::kHeaderBytes + bytes);
      ork_weights_destroy(w);
    }
  }
}

TEST(PackedBytes, RefusesBadArguments) {
  uint64_t bytes = 7;
  EXPECT_EQ(ork_weights_packed_bytes(ORK_DTYPE_INT8, 4, 4, nullptr), ORK_E_INVALID_ARGUMENT);
  EXPECT_NE(std::string(ork_last_error()).find("bytes is NULL"), std::string::npos) << ork_last_error();
  EXPECT_EQ(ork_weights_packed_bytes(ORK_DTYPE_FP32, 4, 4, &bytes), ORK_E_INVALID_ARGUMENT);
  EXPECT_NE(std::string(ork_last_error()).find("dtype 5"), std::string::npos) << ork_last_error();
  EXPECT_EQ(ork_weights_packed_bytes(ORK_DTYPE_INT8, 0, 4, &bytes), ORK_E_INVALID_ARGUMENT);
  EXPECT_NE(std::string(ork_last_error()).find("K = 0"), std::string::npos) << ork_last_error();
  EXPECT_EQ(ork_weights_packed_bytes(ORK_DTYPE_INT8, 4, int64_t{1} << 40, &bytes), ORK_E_INVALID_ARGUMENT);
  EXPECT_EQ(bytes, 7u);
}

INSTANTIATE_TEST_SUITE_P(All, Packed, ::testing::ValuesIn(kDevices));
INSTANTIATE_TEST_SUITE_P(All, BadBlobs, ::testing::ValuesIn(kDevices));

}  // namespace
