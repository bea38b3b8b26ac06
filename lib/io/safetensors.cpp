#include "lib/io/safetensors.h"

#include <fcntl.h>

#include <algorithm>
#include <unordered_set>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "driver/common/json.h"

namespace ork::io {
namespace {

using nlohmann::json;

Error tensor_error(const std::string& name, const std::string& what) {
  return make_error(-EINVAL, fmt::format("tensor \"{}\": {}", name, what));
}

// [4096, 11008]: the shape as JSON writes it, from the checked dimensions.
std::string shape_text(const std::vector<uint64_t>& shape) {
  return fmt::format("[{}]", fmt::join(shape, ","));
}

Result<TensorInfo> parse_tensor(const std::string& name, const json& entry, uint64_t data_bytes) {
  if (!entry.is_object()) return tensor_error(name, "entry is not a JSON object");
  TensorInfo t;
  t.name = name;
  const auto dtype = entry.find("dtype");
  if (dtype == entry.end() || !dtype->is_string()) return tensor_error(name, "no \"dtype\" string");
  t.dtype = dtype->get<std::string>();
  t.dtype_bytes = dtype_bytes(t.dtype);
  if (t.dtype_bytes == 0) return tensor_error(name, fmt::format("unknown dtype \"{}\"", t.dtype));
  const auto shape = entry.find("shape");
  if (shape == entry.end() || !shape->is_array()) return tensor_error(name, "no \"shape\" array");
  unsigned __int128 elements = 1;
  for (const json& d : *shape) {
    // json_int_value names the dimension's index and JSON type, never prints a container.
    auto dim = json_int_value<uint64_t>(d, fmt::format("shape dimension {}", t.shape.size()), 0, UINT64_MAX,
                                        fmt::format("tensor \"{}\"", name));
    if (!dim) return dim.error();
    t.shape.push_back(*dim);
    elements *= *dim;
    if (elements > (unsigned __int128){UINT64_MAX}) return tensor_error(name, "shape overflows 64 bits");
  }
  const auto offs = entry.find("data_offsets");
  if (offs == entry.end() || !offs->is_array() || offs->size() != 2)
    return tensor_error(name, "\"data_offsets\" is not [begin, end]");
  uint64_t* ends[] = {&t.begin, &t.end};
  for (size_t i = 0; i < 2; ++i) {
    auto v = json_int_value<uint64_t>((*offs)[i], fmt::format("data_offsets[{}]", i), 0, UINT64_MAX,
                                      fmt::format("tensor \"{}\"", name));
    if (!v) return v.error();
    *ends[i] = *v;
  }
  if (t.end < t.begin) {
    return tensor_error(name, fmt::format("data_offsets [{}, {}] end before they begin", t.begin, t.end));
  }
  // elements < 2^64 and dtype_bytes <= 8, so the product fits in 128 bits; it may not fit
  // in 64 (an F32 tensor of 2^62 + 4 elements needs 2^64 + 16 bytes, not 16).
  const unsigned __int128 need = elements * t.dtype_bytes;
  if (need > (unsigned __int128){UINT64_MAX}) {
    return tensor_error(name, fmt::format("{} {} needs more than 2^64 bytes", t.dtype, shape_text(t.shape)));
  }
  if (need != t.end - t.begin) {
    return tensor_error(name, fmt::format("data_offsets [{}, {}] hold {} bytes but {} {} needs "
                                          "{}", t.begin, t.end, t.end - t.begin, t.dtype,
                                          shape_text(t.shape), static_cast<uint64_t>(need)));
  }
  if (t.end > data_bytes) {
    return tensor_error(name, fmt::format("data_offsets [{}, {}] run past the end of the data "
                                          "({} bytes): the file is truncated", t.begin, t.end,
                                          data_bytes));
  }
  return t;
}

// Sorted by offset, the tensors must tile [0, data_bytes) exactly.
Status check_coverage(const std::vector<TensorInfo>& ts, uint64_t data_bytes) {
  uint64_t pos = 0;
  const TensorInfo* prev = nullptr;
  for (const TensorInfo& t : ts) {
    if (t.begin < pos) {
      return tensor_error(t.name, fmt::format("data_offsets [{}, {}] overlap tensor \"{}\" [{}, "
                                              "{}]", t.begin, t.end, prev->name, prev->begin, prev->end));
    }
    if (t.begin > pos) {
      return tensor_error(t.name, fmt::format("starts at {} but the previous tensor ends at {}: "
                                              "{} bytes belong to no tensor", t.begin, pos, t.begin - pos));
    }
    pos = t.end;
    prev = &t;
  }
  if (pos != data_bytes) {
    return make_error(-EINVAL, fmt::format("{} bytes after the last tensor belong to no tensor "
                                           "(data is {} bytes, tensors end at {})",
                                           data_bytes - pos, data_bytes, pos));
  }
  return {};
}

Status parse_metadata(const json& j, std::map<std::string, std::string>* out) {
  if (!j.is_object()) return make_error(-EINVAL, "\"__metadata__\" is not a JSON object");
  for (const auto& [k, v] : j.items()) {
    if (!v.is_string()) {
      return make_error(-EINVAL, fmt::format("\"__metadata__\" entry \"{}\" is not a string", k));
    }
    (*out)[k] = v.get<std::string>();
  }
  return {};
}

// SAX handler: remembers the first key that appears twice at the top level. Linear: one
// hash-set insertion per top-level key, nothing kept for deeper levels.
class TopLevelKeys final : public nlohmann::json_sax<json> {
 public:
  explicit TopLevelKeys(std::string* duplicate) : duplicate_(duplicate) {}
  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool start_object(std::size_t) override { return ++depth_, true; }
  bool end_object() override { return --depth_, true; }
  bool start_array(std::size_t) override { return ++depth_, true; }
  bool end_array() override { return --depth_, true; }
  bool key(string_t& k) override {
    if (depth_ == 1 && !seen_.insert(k).second && duplicate_->empty()) *duplicate_ = k;
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override { return false; }

 private:
  std::string* duplicate_;
  std::unordered_set<std::string> seen_;
  int64_t depth_ = 0;
};

}  // namespace

uint32_t dtype_bytes(const std::string& dtype) {
  // The dtype names of the safetensors format (huggingface/safetensors, Dtype enum).
  static const std::map<std::string, uint32_t, std::less<>> kSizes = {
      {"BOOL", 1}, {"U8", 1},   {"I8", 1},   {"F8_E5M2", 1}, {"F8_E4M3", 1},
      {"I16", 2},  {"U16", 2},  {"F16", 2},  {"BF16", 2},    {"I32", 4},
      {"U32", 4},  {"F32", 4},  {"F64", 8},  {"I64", 8},     {"U64", 8}};
  const auto it = kSizes.find(dtype);
  return it == kSizes.end() ? 0 : it->second;
}

Result<SafetensorsFile> parse_safetensors_header(std::string_view header, uint64_t file_bytes) {
  SafetensorsFile f;
  f.file_bytes = file_bytes;
  f.header_bytes = header.size();
  f.data_offset = 8 + header.size();
  if (f.data_offset > file_bytes) {
    return make_error(-EINVAL, fmt::format("header of {} bytes runs past the end of the file "
                                           "({} bytes)", header.size(), file_bytes));
  }
  const uint64_t data_bytes = file_bytes - f.data_offset;
  // Nesting bounded and the text parsed first (driver/common/json.h), then duplicate names:
  // JSON allows them, a parser keeps one, and the other tensor's bytes would silently go
  // missing. A SAX pass collects the top-level keys (depth 1); the JSON library's callback
  // parser could do it in one pass but rescans the enclosing object at every object end,
  // which is quadratic (16k tensors took 3.2 s, 100k over 10 minutes).
  auto parsed = parse_json_bounded(header, "header");
  if (!parsed) return parsed.error();
  const json& doc = *parsed;
  if (!doc.is_object()) return make_error(-EINVAL, "header is not a JSON object");
  std::string duplicate;
  TopLevelKeys keys(&duplicate);
  if (!json::sax_parse(header.begin(), header.end(), &keys, json::input_format_t::json, /*strict=*/true))
    return make_error(-EINVAL, "header is not valid JSON");
  if (!duplicate.empty()) {
    return tensor_error(duplicate, "appears twice in the header");
  }
  for (const auto& [name, entry] : doc.items()) {
    if (name == "__metadata__") {
      Status st = parse_metadata(entry, &f.metadata);
      if (!st) return st.error();
      continue;
    }
    auto t = parse_tensor(name, entry, data_bytes);
    if (!t) return t.error();
    t->file_offset = f.data_offset + t->begin;
    f.tensors.push_back(std::move(t.value()));
  }
  std::stable_sort(f.tensors.begin(), f.tensors.end(), [](const TensorInfo& a, const TensorInfo& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  Status st = check_coverage(f.tensors, data_bytes);
  if (!st) return st.error();
  return f;
}

}  // namespace ork::io
