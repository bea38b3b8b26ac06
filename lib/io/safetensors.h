// safetensors: an 8-byte little-endian header length N, N bytes of JSON, then the raw
// tensor data. Each JSON entry is "name": {"dtype", "shape", "data_offsets": [begin, end]}
// with offsets relative to the data start; "__metadata__" maps strings to strings. The
// format (huggingface/safetensors README) requires the tensors to cover the data exactly:
// no overlaps, no holes. We check every tensor's dtype, shape and offsets against each other
// and against the file size, and name the tensor in every error.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "driver/common/result.h"
#include "lib/io/file_os.h"
#include "lib/io/read_plan.h"

namespace ork::io {

// The header-length limit of the reference implementation (100 MB): larger is corruption.
inline constexpr uint64_t kMaxHeaderBytes = 100'000'000;

struct TensorInfo {
  std::string name;
  std::string dtype;              // "F16", "BF16", "F32", "I8", ...
  uint32_t dtype_bytes = 0;
  std::vector<uint64_t> shape;
  uint64_t begin = 0;             // relative to the data start
  uint64_t end = 0;
  uint64_t file_offset = 0;       // absolute: data start + begin
  uint64_t bytes() const { return end - begin; }
};

struct SafetensorsFile {
  uint64_t file_bytes = 0;
  uint64_t header_bytes = 0;      // N
  uint64_t data_offset = 0;       // 8 + N
  std::vector<TensorInfo> tensors;  // sorted by offset
  std::map<std::string, std::string> metadata;
};

// Bytes per element of a safetensors dtype name; 0 for an unknown name.
uint32_t dtype_bytes(const std::string& dtype);

// Parses and checks a header. `header` holds the JSON (N bytes, N = header.size()); the
// whole file is file_bytes long.
Result<SafetensorsFile> parse_safetensors_header(std::string_view header, uint64_t file_bytes);

// Reads the length prefix and header of `path` and parses them.
Result<SafetensorsFile> read_safetensors(const std::string& path, FileOs& os = real_file_os());

// Tensors grouped into layers by name: `pattern` is a regular expression (ECMAScript,
// searched anywhere in the name) whose first capture group is the layer number. The
// default, "\.(\d+)\.", takes the first ".N." of any name: model.layers.N. (Llama),
// transformer.h.N. (GPT-2), encoder.layer.N. ... A layer is named by the tensor name up to
// the end of its number, so "layers.0" and "layers.00" stay two layers; within one prefix
// the numbers must run 0..n-1 without gaps. Tensors that do not match go to `other`; when no
// tensor matches, every tensor is a layer of its own (an embedding-only file). A layer's
// extent spans its tensors' bytes.
struct Layer {
  size_t number = 0;
  std::string name;               // "model.layers.3" (or the tensor's name, one per tensor)
  std::vector<size_t> tensors;    // indices into SafetensorsFile::tensors
  Extent extent;
};
struct LayerLayout {
  std::vector<Layer> layers;      // by prefix, then number, then the number's spelling
  std::vector<size_t> other;      // tensors outside any layer (embeddings, final norm, ...)
};
inline constexpr const char* kDefaultLayerPattern = R"(\.(\d+)\.)";

Result<LayerLayout> group_layers(const SafetensorsFile& file,
                                 const std::string& pattern = kDefaultLayerPattern);

std::vector<Extent> layer_extents(const LayerLayout& layout);

}  // namespace ork::io
