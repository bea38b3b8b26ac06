// The .npy reader and writer of tools/common: exact header bytes, round trips in every
// format version, and every malformed-file error naming the file and the problem.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "tools/common/npy.h"

namespace ork::tools {
namespace {

std::vector<uint8_t> bytes_of(const std::string& s) { return {s.begin(), s.end()}; }

// A file image with a hand-written header dict (version 1.0 unless told), padded like NumPy.
std::vector<uint8_t> raw_npy(const std::string& dict, std::vector<uint8_t> data, int major = 1) {
  std::string header = dict;
  const size_t prefix = major == 1 ? 10 : 12;
  header.append((64 - (prefix + header.size() + 1) % 64) % 64, ' ');
  header.push_back('\n');
  std::vector<uint8_t> out = {0x93, 'N', 'U', 'M', 'P', 'Y', static_cast<uint8_t>(major), 0};
  for (size_t i = 0; i < prefix - 8; ++i) out.push_back((header.size() >> (8 * i)) & 0xFF);
  out.insert(out.end(), header.begin(), header.end());
  out.insert(out.end(), data.begin(), data.end());
  return out;
}

std::string int8_dict(const std::string& shape) {
  return "{'descr': '|i1', 'fortran_order': False, 'shape': " + shape + ", }";
}

// Parses `file` as int8 and expects an error whose message names "x.npy" and contains `what`.
void expect_int8_error(const std::vector<uint8_t>& file, const std::string& what) {
  Result<NpyMatrix> r = npy_parse_matrix(file, NpyDtype::int8, "x.npy");
  ASSERT_FALSE(r.ok()) << "expected an error containing: " << what;
  EXPECT_EQ(r.error().code, -EINVAL);
  EXPECT_EQ(r.error().message.rfind("x.npy: ", 0), 0u) << r.error().message;
  EXPECT_NE(r.error().message.find(what), std::string::npos)
      << "message: " << r.error().message << "\nexpected to contain: " << what;
}

TEST(NpyWrite, HeaderBytesMatchNumpyV1) {
  const std::vector<uint8_t> data = {1, 2, 3, 0xFF, 0x80, 0x7F};
  Result<std::vector<uint8_t>> img = npy_encode_matrix(NpyDtype::int8, 2, 3, data);
  ASSERT_TRUE(img.ok()) << img.error().message;
  // numpy.save of np.int8 (2, 3) writes a 118-byte header: 10 + 118 = 128 = 2 x 64.
  std::string dict = "{'descr': '|i1', 'fortran_order': False, 'shape': (2, 3), }";
  dict.append(118 - dict.size() - 1, ' ');
  dict.push_back('\n');
  std::vector<uint8_t> want = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, 118, 0};
  want.insert(want.end(), dict.begin(), dict.end());
  want.insert(want.end(), data.begin(), data.end());
  EXPECT_EQ(*img, want);
}

TEST(NpyWrite, Int32HeaderV2HasFourByteLength) {
  const std::vector<uint8_t> data(4 * 2 * 1, 0xAB);
  Result<std::vector<uint8_t>> img = npy_encode_matrix(NpyDtype::int32, 2, 1, data, 2);
  ASSERT_TRUE(img.ok());
  ASSERT_EQ(img->size(), 128u + 8u);
  EXPECT_EQ((*img)[6], 2);
  EXPECT_EQ((*img)[8], 128 - 12);  // 12-byte prefix in v2: 4-byte little-endian length
  EXPECT_EQ((*img)[9], 0);
  EXPECT_EQ((*img)[10], 0);
  EXPECT_EQ((*img)[11], 0);
  const std::string header(img->begin() + 12, img->begin() + 128);
  EXPECT_EQ(header.rfind("{'descr': '<i4', 'fortran_order': False, 'shape': (2, 1), }", 0), 0u);
  EXPECT_EQ(header.back(), '\n');
}

TEST(NpyWrite, RejectsDataOfTheWrongSize) {
  const std::vector<uint8_t> data(5);
  Result<std::vector<uint8_t>> img = npy_encode_matrix(NpyDtype::int8, 2, 3, data);
  ASSERT_FALSE(img.ok());
  EXPECT_NE(img.error().message.find("data has 5 bytes"), std::string::npos);
  EXPECT_FALSE(npy_encode_matrix(NpyDtype::int8, 1, 1, std::vector<uint8_t>(1), 4).ok());
  EXPECT_FALSE(npy_encode_matrix(NpyDtype::int8, -1, 1, {}).ok());
}

TEST(NpyRoundTrip, EveryVersionAndDtype) {
  for (int major : {1, 2, 3}) {
    for (NpyDtype dtype : {NpyDtype::int8, NpyDtype::int32}) {
      const int64_t rows = 7, cols = 33;
      std::vector<uint8_t> data(static_cast<size_t>(rows * cols * npy_itemsize(dtype)));
      for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<uint8_t>(i * 37 + major);
      Result<std::vector<uint8_t>> img = npy_encode_matrix(dtype, rows, cols, data, major);
      ASSERT_TRUE(img.ok());
      EXPECT_EQ((img->size() - data.size()) % 64, 0u) << "data must be 64-byte aligned";
      Result<NpyMatrix> m = npy_parse_matrix(*img, dtype, "rt.npy");
      ASSERT_TRUE(m.ok()) << m.error().message;
      EXPECT_EQ(m->rows, rows);
      EXPECT_EQ(m->cols, cols);
      EXPECT_EQ(m->dtype, dtype);
      EXPECT_EQ(m->bytes, data);
    }
  }
}

TEST(NpyRoundTrip, ThroughAFile) {
  const std::string path = ::testing::TempDir() + "ork_npy_roundtrip.npy";
  const std::vector<uint8_t> data = {0x80, 0x7F, 0, 1, 0xFE, 0x10};
  ASSERT_TRUE(npy_write_matrix(path, NpyDtype::int8, 3, 2, data).ok());
  Result<NpyMatrix> m = npy_read_matrix(path, NpyDtype::int8);
  ASSERT_TRUE(m.ok()) << m.error().message;
  EXPECT_EQ(m->rows, 3);
  EXPECT_EQ(m->cols, 2);
  EXPECT_EQ(m->bytes, data);
  std::remove(path.c_str());
}

TEST(NpyRoundTrip, EmptyMatrixIsValid) {
  Result<std::vector<uint8_t>> img = npy_encode_matrix(NpyDtype::int8, 0, 5, {});
  ASSERT_TRUE(img.ok());
  Result<NpyMatrix> m = npy_parse_matrix(*img, NpyDtype::int8, "e.npy");
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->rows, 0);
  EXPECT_EQ(m->cols, 5);
  EXPECT_TRUE(m->bytes.empty());
}

TEST(NpyRead, AcceptsWhatOtherWritersProduce) {
  // Double quotes, another key order, no trailing comma, Python 2 long suffix, '<i1'.
  auto img = raw_npy("{\"shape\": (2L, 2L), \"fortran_order\": False, \"descr\": \"<i1\"}",
                     {1, 2, 3, 4});
  Result<NpyMatrix> m = npy_parse_matrix(img, NpyDtype::int8, "x.npy");
  ASSERT_TRUE(m.ok()) << m.error().message;
  EXPECT_EQ(m->rows, 2);
  EXPECT_EQ(m->cols, 2);
  EXPECT_EQ(m->bytes, (std::vector<uint8_t>{1, 2, 3, 4}));
  // Version 3.0 allows UTF-8 in the header (here in an extra space-padding position).
  auto v3 = raw_npy(int8_dict("(1, 1)"), {9}, 3);
  EXPECT_TRUE(npy_parse_matrix(v3, NpyDtype::int8, "x.npy").ok());
}

TEST(NpyRead, BadMagic) {
  expect_int8_error(bytes_of("PK\x03\x04 this is a zip"), "bad magic");
  expect_int8_error({}, "bad magic");
  expect_int8_error(bytes_of("\x93NUMP"), "bad magic");
}

TEST(NpyRead, UnsupportedVersion) {
  auto img = raw_npy(int8_dict("(1, 1)"), {0});
  img[6] = 4;
  expect_int8_error(img, "unsupported .npy version 4.0");
  img[6] = 1;
  img[7] = 1;
  expect_int8_error(img, "unsupported .npy version 1.1");
}

TEST(NpyRead, TruncatedHeader) {
  expect_int8_error(bytes_of("\x93NUMPY"), "truncated header");
  expect_int8_error({0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, 5}, "truncated header");
  auto img = raw_npy(int8_dict("(1, 1)"), {0});
  img.resize(40);
  expect_int8_error(img, "truncated header: it claims 118 bytes");
}

TEST(NpyRead, BadHeaderDict) {
  const std::vector<uint8_t> one = {0};
  expect_int8_error(raw_npy("['descr', '|i1']", one), "bad header: expected '{'");
  expect_int8_error(raw_npy("{'descr': '|i1', 'fortran_order': False}", one),
                    "bad header: key 'shape' is missing");
  expect_int8_error(raw_npy("{'descr': '|i1', 'fortran_order': False, 'shape': (1, 1), "
                            "'extra': 1}", one), "bad header: unknown key 'extra'");
  expect_int8_error(raw_npy("{'descr': '|i1', 'descr': '|i1'}", one),
                    "bad header: key 'descr' appears twice");
  expect_int8_error(raw_npy("{'descr': '|i1', 'fortran_order': 0, 'shape': (1, 1)}", one),
                    "'fortran_order' must be True or False");
  expect_int8_error(raw_npy("{'descr': [('a', '<i4')], 'fortran_order': False, 'shape': (1,)}",
                            one), "structured dtypes are not supported");
  expect_int8_error(raw_npy("{'descr': '|i1', 'fortran_order': False, 'shape': [1, 1]}", one),
                    "'shape' must be a tuple");
  expect_int8_error(raw_npy("{'descr': '|i1', 'fortran_order': False, 'shape': (1, -1)}", one),
                    "expected a non-negative integer in 'shape'");
  expect_int8_error(raw_npy("{'descr': '|i1, 'fortran_order': False, 'shape': (1, 1)}", one),
                    "bad header");
  expect_int8_error(raw_npy("{'descr': '|i1' 'fortran_order': False}", one),
                    "expected ',' or '}' after the value of 'descr'");
  expect_int8_error(raw_npy(int8_dict("(1, 1)") + " junk", one),
                    "unexpected text after the closing '}'");
  expect_int8_error(raw_npy("{'descr': '|i1', 'fortran_order': False, 'shape': (1, 1",
                            one), "bad header");
  expect_int8_error(raw_npy("{'descr': '|i1', 'fortran_order': False, 'shape': "
                            "(99999999999999999999, 1)}", one), "does not fit in 64 bits");
  auto non_ascii = raw_npy("{'descr': '|i1', 'fortran_order': False, 'shape': (1, 1)} \xC3\xA9",
                           one);
  expect_int8_error(non_ascii, "non-ASCII byte in a version 1 header");
}

TEST(NpyRead, WrongDtype) {
  expect_int8_error(raw_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1), }",
                            {0, 0, 0, 0}), "wrong dtype '<f4': expected int8 ('|i1')");
  expect_int8_error(raw_npy("{'descr': '|u1', 'fortran_order': False, 'shape': (1, 1), }", {0}),
                    "wrong dtype '|u1'");
  auto be = raw_npy("{'descr': '>i4', 'fortran_order': False, 'shape': (1, 1), }", {0, 0, 0, 1});
  Result<NpyMatrix> r = npy_parse_matrix(be, NpyDtype::int32, "c.npy");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("c.npy: wrong dtype '>i4': expected int32 ('<i4')"),
            std::string::npos) << r.error().message;
}

TEST(NpyRead, FortranOrder) {
  expect_int8_error(raw_npy("{'descr': '|i1', 'fortran_order': True, 'shape': (2, 2), }",
                            {1, 2, 3, 4}), "Fortran order");
}

TEST(NpyRead, NotTwoDimensional) {
  expect_int8_error(raw_npy(int8_dict("(4,)"), {1, 2, 3, 4}),
                    "not 2-D: shape (4,) has 1 dimension(s)");
  expect_int8_error(raw_npy(int8_dict("(1, 2, 2)"), {1, 2, 3, 4}),
                    "not 2-D: shape (1, 2, 2) has 3 dimension(s)");
  expect_int8_error(raw_npy(int8_dict("()"), {1}), "not 2-D: shape () has 0 dimension(s)");
}

TEST(NpyRead, TruncatedAndOverlongData) {
  expect_int8_error(raw_npy(int8_dict("(2, 3)"), {1, 2, 3, 4, 5}),
                    "truncated data: shape (2, 3) of '|i1' needs 6 bytes, the file has 5");
  expect_int8_error(raw_npy(int8_dict("(2, 3)"), {1, 2, 3, 4, 5, 6, 7}),
                    "1 unexpected bytes after the data");
  expect_int8_error(raw_npy(int8_dict("(4611686018427387904, 4)"), {1}), "is too large");
}

TEST(NpyRead, MissingFileNamesPathAndReason) {
  Result<NpyMatrix> r = npy_read_matrix("/nonexistent/dir/a.npy", NpyDtype::int8);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, -ENOENT);
  EXPECT_EQ(r.error().message, "/nonexistent/dir/a.npy: cannot open: No such file or directory");
}

}  // namespace
}  // namespace ork::tools
