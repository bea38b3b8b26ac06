// .npy files for the tools: a strict reader and a writer for 2-D C-order arrays.
//
// Format facts (NumPy's format.py / NEP 1, "A Simple File Format for NumPy Arrays"):
// magic "\x93NUMPY", one byte major and one byte minor version, then the header length as
// little-endian uint16 (v1.x) or uint32 (v2.x and v3.x), then the header: an ASCII (v3:
// UTF-8) Python dict literal with the keys 'descr', 'fortran_order' and 'shape', padded
// with spaces and ended by '\n' so that the data starts at a multiple of 64 bytes. The data
// follows, prod(shape) * itemsize bytes.
//
// The reader names the file and the problem in every error (bad magic, bad header, wrong
// dtype, Fortran order, not 2-D, truncated data, ...): users feed it files from numpy
// scripts, and "bad file" alone is useless to them.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "driver/common/result.h"

namespace ork::tools {

// The element types the tools read and write.
enum class NpyDtype { int8, int32, fp32, fp16 };

// The dtype string NumPy writes for it: "|i1" for int8, "<i4" for int32, "<f4" for fp32,
// "<f2" for fp16 (IEEE binary16, little-endian).
const char* npy_descr(NpyDtype dtype);
int64_t npy_itemsize(NpyDtype dtype);

// The parsed header of a .npy file.
struct NpyHeader {
  int major = 0, minor = 0;
  std::string descr;          // as written, e.g. "|i1"
  bool fortran_order = false;
  std::vector<int64_t> shape;
  int64_t data_offset = 0;    // bytes from the start of the file to the data
};

// A 2-D C-order matrix of one dtype, its bytes in file order (little-endian).
struct NpyMatrix {
  NpyDtype dtype = NpyDtype::int8;
  int64_t rows = 0, cols = 0;
  std::vector<uint8_t> bytes;  // rows * cols * itemsize
};

// Parses the magic, version and header dict. `name` (usually the path) prefixes every error.
Result<NpyHeader> npy_parse_header(std::span<const uint8_t> file, std::string_view name);

// Parses a whole file image as a 2-D C-order matrix of `dtype`; every other case (another
// dtype, big-endian, Fortran order, 1-D or 3-D, short or long data) is an error.
Result<NpyMatrix> npy_parse_matrix(std::span<const uint8_t> file, NpyDtype dtype,
                                   std::string_view name);

// Reads `path` and parses it as above. -ENOENT etc. when it cannot be read.
Result<NpyMatrix> npy_read_matrix(const std::string& path, NpyDtype dtype);

// The file image of a 2-D C-order matrix, format version `major`.0 (1, 2 or 3).
// `data` must hold rows * cols * itemsize bytes (checked: -EINVAL otherwise).
Result<std::vector<uint8_t>> npy_encode_matrix(NpyDtype dtype, int64_t rows, int64_t cols,
                                               std::span<const uint8_t> data, int major = 1);

// Encodes and writes to `path` (replaced if it exists).
Status npy_write_matrix(const std::string& path, NpyDtype dtype, int64_t rows, int64_t cols,
                        std::span<const uint8_t> data, int major = 1);

// Whole-file helpers shared by the tools.
Result<std::vector<uint8_t>> read_file(const std::string& path);
Status write_file(const std::string& path, std::span<const uint8_t> bytes);

}  // namespace ork::tools
