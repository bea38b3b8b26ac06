// .npy matrices: dtype / order / rank / size checks on top of the header parser, the
// encoder, and whole-file I/O. Format facts: see npy.h.
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

#include <fmt/format.h>

#include "tools/common/npy.h"

#include "driver/common/safe_file.h"

namespace ork::tools {
namespace {

// The data of a .npy file starts at a multiple of 64 bytes (format.py ARRAY_ALIGN = 64).
constexpr size_t kArrayAlign = 64;

bool descr_matches(const std::string& descr, NpyDtype dtype) {
  if (dtype == NpyDtype::int8) {
    // One byte has no byte order: NumPy writes '|i1'; '<i1', '>i1', '=i1', 'i1' mean the same.
    return descr == "|i1" || descr == "<i1" || descr == ">i1" || descr == "=i1" ||
           descr == "i1";
  }
  if (dtype == NpyDtype::fp32) return descr == "<f4";  // little-endian IEEE binary32
  if (dtype == NpyDtype::fp16) return descr == "<f2";  // little-endian IEEE binary16
  return descr == "<i4";  // little-endian only: we copy the bytes as they are
}

const char* dtype_word(NpyDtype dtype) {
  return dtype == NpyDtype::int8 ? "int8" : dtype == NpyDtype::int32 ? "int32" : dtype == NpyDtype::fp16 ? "float16" : "float32";
}

std::string shape_string(const std::vector<int64_t>& shape) {
  if (shape.size() == 1) return fmt::format("({},)", shape[0]);
  return fmt::format("({})", fmt::join(shape, ", "));
}

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};
using FilePtr = std::unique_ptr<std::FILE, FileCloser>;

Error io_error(const std::string& path, const char* what) {
  const int err = errno;
  return make_error(-err, fmt::format("{}: cannot {}: {}", path, what, std::strerror(err)));
}

}  // namespace

const char* npy_descr(NpyDtype dtype) {
  return dtype == NpyDtype::int8 ? "|i1" : dtype == NpyDtype::int32 ? "<i4" : dtype == NpyDtype::fp16 ? "<f2" : "<f4";
}
int64_t npy_itemsize(NpyDtype dtype) { return dtype == NpyDtype::int8 ? 1 : dtype == NpyDtype::fp16 ? 2 : 4; }

Result<NpyMatrix> npy_parse_matrix(std::span<const uint8_t> file, NpyDtype dtype,
                                   std::string_view name) {
  Result<NpyHeader> parsed = npy_parse_header(file, name);
  if (!parsed) return parsed.error();
  const NpyHeader& h = *parsed;
  if (!descr_matches(h.descr, dtype))
    return make_error(-EINVAL, fmt::format("{}: wrong dtype '{}': expected {} ('{}')", name,
                                           h.descr, dtype_word(dtype),
                                           npy_descr(dtype)));
  if (h.fortran_order)
    return make_error(-EINVAL, fmt::format("{}: Fortran order (column-major) is not supported: "
                                           "save a C-order array (numpy.ascontiguousarray)",
                                           name));
  if (h.shape.size() != 2)
    return make_error(-EINVAL, fmt::format("{}: not 2-D: shape {} has {} dimension(s), "
                                           "expected (rows, cols)", name,
                                           shape_string(h.shape), h.shape.size()));
  NpyMatrix m{dtype, h.shape[0], h.shape[1], {}};
  const int64_t item = npy_itemsize(dtype);
  if (m.cols != 0 && m.rows > INT64_MAX / item / m.cols)
    return make_error(-EINVAL, fmt::format("{}: shape {} is too large", name,
                                           shape_string(h.shape)));
  const uint64_t want = static_cast<uint64_t>(m.rows * m.cols * item);
  const uint64_t have = file.size() - static_cast<uint64_t>(h.data_offset);
  if (have < want)
    return make_error(-EINVAL, fmt::format("{}: truncated data: shape {} of '{}' needs {} bytes, "
                                           "the file has {}", name, shape_string(h.shape),
                                           h.descr, want, have));
  if (have > want)
    return make_error(-EINVAL, fmt::format("{}: {} unexpected bytes after the data (shape {} of "
                                           "'{}' is {} bytes)", name, have - want,
                                           shape_string(h.shape), h.descr, want));
  auto data = file.subspan(static_cast<size_t>(h.data_offset));
  m.bytes.assign(data.begin(), data.end());
  return m;
}

Result<NpyMatrix> npy_read_matrix(const std::string& path, NpyDtype dtype) {
  Result<std::vector<uint8_t>> file = read_file(path);
  if (!file) return file.error();
  return npy_parse_matrix(*file, dtype, path);
}

Result<std::vector<uint8_t>> npy_encode_matrix(NpyDtype dtype, int64_t rows, int64_t cols,
                                               std::span<const uint8_t> data, int major) {
  if (major < 1 || major > 3)
    return make_error(-EINVAL, fmt::format("npy version {}: must be 1, 2 or 3", major));
  if (rows < 0 || cols < 0)
    return make_error(-EINVAL, fmt::format("shape ({}, {}): negative dimension", rows, cols));
  const uint64_t want = static_cast<uint64_t>(rows) * static_cast<uint64_t>(cols) *
                        static_cast<uint64_t>(npy_itemsize(dtype));
  if (data.size() != want)
    return make_error(-EINVAL, fmt::format("data has {} bytes, shape ({}, {}) of '{}' needs {}",
                                           data.size(), rows, cols, npy_descr(dtype), want));
  // The dict as NumPy writes it, padded with spaces and ended by '\n' so the data is
  // 64-byte aligned.
  std::string dict = fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': ({}, {}), }}",
                                 npy_descr(dtype), rows, cols);
  const size_t prefix = 6 + 2 + (major == 1 ? 2 : 4);
  const size_t unpadded = prefix + dict.size() + 1;
  dict.append((kArrayAlign - unpadded % kArrayAlign) % kArrayAlign, ' ');
  dict.push_back('\n');
  std::vector<uint8_t> out = {0x93, 'N', 'U', 'M', 'P', 'Y', static_cast<uint8_t>(major), 0};
  for (size_t i = 0; i < prefix - 8; ++i) out.push_back((dict.size() >> (8 * i)) & 0xFF);
  out.insert(out.end(), dict.begin(), dict.end());
  out.insert(out.end(), data.begin(), data.end());
  return out;
}

Status npy_write_matrix(const std::string& path, NpyDtype dtype, int64_t rows, int64_t cols,
                        std::span<const uint8_t> data, int major) {
  Result<std::vector<uint8_t>> image = npy_encode_matrix(dtype, rows, cols, data, major);
  if (!image) return image.error();
  return write_file(path, *image);
}

Result<std::vector<uint8_t>> read_file(const std::string& path) {
  auto fd = open_regular_input(path);  // a FIFO or device is refused, never waited on
  if (!fd && fd.error().code == -EINVAL) return fd.error();
  if (!fd) {
    const int err = -fd.error().code;
    return make_error(-err, fmt::format("{}: cannot open: {}", path, std::strerror(err)));
  }
  FilePtr f(::fdopen(*fd, "rb"));
  if (!f) {
    ::close(*fd);
    return io_error(path, "open");
  }
  std::vector<uint8_t> bytes;
  uint8_t chunk[1 << 16];
  size_t got = 0;
  while ((got = std::fread(chunk, 1, sizeof(chunk), f.get())) > 0)
    bytes.insert(bytes.end(), chunk, chunk + got);
  if (std::ferror(f.get())) return io_error(path, "read");
  return bytes;
}

Status write_file(const std::string& path, std::span<const uint8_t> bytes) {
  // Beside the output, renamed over it when complete (driver/common/safe_file.h).
  return write_file_atomically(path, {reinterpret_cast<const char*>(bytes.data()), bytes.size()});
}

}  // namespace ork::tools
