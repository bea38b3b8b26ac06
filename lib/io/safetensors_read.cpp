// Reading a safetensors header from disk, and grouping its tensors into layers.
#include <fcntl.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <optional>
#include <regex>
#include <set>

#include <fmt/format.h>

#include "lib/io/safetensors.h"

namespace ork::io {
namespace {

// Reads exactly `length` bytes (short reads continued, EINTR retried).
Status pread_all(FileOs& os, int fd, char* dst, uint64_t length, uint64_t offset,
                 const std::string& path) {
  uint64_t got = 0;
  while (got < length) {
    const ssize_t n = os.pread(fd, dst + got, length - got, static_cast<off_t>(offset + got));
    if (n == -EINTR) continue;
    if (n < 0) return make_error(static_cast<int>(n), fmt::format("read {}: {}", path,
                                                                  errno_text(static_cast<int>(n))));
    if (n == 0) return make_error(-EIO, fmt::format("{}: file shrank while reading", path));
    got += static_cast<uint64_t>(n);
  }
  return {};
}

struct FdCloser {
  FileOs& os;
  int fd;
  ~FdCloser() { os.close(fd); }
};

}  // namespace

Result<SafetensorsFile> read_safetensors(const std::string& path, FileOs& os) {
  const int fd = os.open(path.c_str(), O_RDONLY);
  if (fd < 0) return make_error(fd, open_error(path, fd));
  FdCloser closer{os, fd};
  uint64_t size = 0;
  const int rc = os.file_size(fd, &size);
  if (rc < 0) return make_error(rc, fmt::format("fstat {}: {}", path, errno_text(rc)));
  if (size < 8) {
    return make_error(-EINVAL, fmt::format("{}: file is {} bytes, too short for the 8-byte "
                                           "header length", path, size));
  }
  unsigned char prefix[8];
  Status st = pread_all(os, fd, reinterpret_cast<char*>(prefix), 8, 0, path);
  if (!st) return st.error();
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | prefix[i];  // little-endian u64
  if (n > kMaxHeaderBytes) {
    return make_error(-EINVAL, fmt::format("{}: header length {} bytes exceeds the {} byte "
                                           "limit", path, n, kMaxHeaderBytes));
  }
  if (n > size - 8) {
    return make_error(-EINVAL, fmt::format("{}: header length {} bytes runs past the end of "
                                           "the file ({} bytes): truncated", path, n, size));
  }
  std::string header(n, '\0');
  st = pread_all(os, fd, header.data(), n, 8, path);
  if (!st) return st.error();
  auto parsed = parse_safetensors_header(header, size);
  if (!parsed) return make_error(parsed.error().code, path + ": " + parsed.error().message);
  return parsed;
}

namespace {

// The default pattern without std::regex: the first ".N." of the name, as
// [digits_at, digits_end). libstdc++'s regex recurses per character it repeats, so a
// hostile name of a million digits would overflow the stack; this loop is linear.
bool find_dot_number_dot(const std::string& name, size_t* digits_at, size_t* digits_end) {
  for (size_t i = name.find('.'); i != std::string::npos; i = name.find('.', i + 1)) {
    size_t j = i + 1;
    while (j < name.size() && name[j] >= '0' && name[j] <= '9') ++j;
    if (j > i + 1 && j < name.size() && name[j] == '.') {
      *digits_at = i + 1;
      *digits_end = j;
      return true;
    }
  }
  return false;
}

// Longest name a custom pattern is run on (see above: the regex engine's recursion).
constexpr size_t kMaxPatternName = 4096;

Result<std::regex> compile_layer_pattern(const std::string& pattern) {
  std::regex re;
  try {
    re = std::regex(pattern, std::regex::ECMAScript);
  } catch (const std::regex_error& e) {
    return make_error(-EINVAL, fmt::format("layer pattern \"{}\": {}", pattern, e.what()));
  }
  if (re.mark_count() < 1) {
    return make_error(-EINVAL, fmt::format("layer pattern \"{}\" has no capture group for the "
                                           "layer number", pattern));
  }
  return re;
}

// Where a tensor's layer number is in its name: [at, end), or nothing when the name has
// none (the tensor belongs to no layer). `re` is null for the built-in pattern.
struct NumberSpan {
  size_t at = 0, end = 0;
};
Result<std::optional<NumberSpan>> find_layer_number(const std::string& name, const std::regex* re) {
  NumberSpan span;
  if (!re) {
    if (!find_dot_number_dot(name, &span.at, &span.end)) return std::optional<NumberSpan>{};
    return std::optional<NumberSpan>{span};
  }
  if (name.size() > kMaxPatternName) {
    return make_error(-EINVAL, fmt::format("tensor name of {} bytes (\"{}...\"): a layer pattern is matched only "
                                           "against names of at most {} bytes", name.size(),
                                           name.substr(0, 40), kMaxPatternName));
  }
  std::smatch m;
  if (!std::regex_search(name, m, *re)) return std::optional<NumberSpan>{};
  span.at = static_cast<size_t>(m.position(1));
  span.end = span.at + static_cast<size_t>(m.length(1));
  return std::optional<NumberSpan>{span};
}

// Keyed by the name up to the end of the number ("transformer.h.00"), ordered by the text
// before the number, then the number's value, then its spelling: "layers.0" and "layers.00"
// are two layers (distinct names stay distinct), "h.2" comes before "h.10".
struct LayerKey {
  std::string prefix;
  uint64_t number;
  std::string digits;
  auto operator<=>(const LayerKey&) const = default;
};

Result<LayerKey> layer_key(const std::string& name, NumberSpan span, const std::string& pattern) {
  const std::string digits = name.substr(span.at, span.end - span.at);
  if (digits.empty() || digits.size() > 9 ||
      !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return make_error(-EINVAL, "tensor \"" + name + "\": " + fmt::format("layer number \"{}\" from pattern \"{}\" "
                                                  "is not a decimal number of at most 9 digits", digits, pattern));
  }
  return LayerKey{name.substr(0, span.at), std::stoull(digits), digits};
}

// Every prefix's layers are numbered 0..n-1.
Status check_numbering(const std::map<std::string, std::set<uint64_t>>& numbers) {
  for (const auto& [prefix, set] : numbers) {
    uint64_t expect = 0;
    for (uint64_t number : set) {
      if (number != expect) {
        return make_error(-EINVAL, fmt::format("layers must be numbered 0..n-1: layer {}{} is "
                                               "missing (next is {})", prefix, expect, number));
      }
      ++expect;
    }
  }
  return Status::success();
}

// No tensor matched: one layer per tensor, in file order (an embedding-only file, or a naming
// scheme the pattern does not know), never an empty layout.
LayerLayout one_layer_per_tensor(const SafetensorsFile& file) {
  LayerLayout layout;
  for (size_t i = 0; i < file.tensors.size(); ++i) {
    const TensorInfo& t = file.tensors[i];
    layout.layers.push_back(Layer{i, t.name, {i}, Extent{t.file_offset, t.bytes()}});
  }
  return layout;
}

Extent extent_of(const SafetensorsFile& file, const Layer& layer) {
  uint64_t lo = UINT64_MAX, hi = 0;
  for (size_t ti : layer.tensors) {
    lo = std::min(lo, file.tensors[ti].file_offset);
    hi = std::max(hi, file.tensors[ti].file_offset + file.tensors[ti].bytes());
  }
  return Extent{lo, hi - lo};
}

}  // namespace

Result<LayerLayout> group_layers(const SafetensorsFile& file, const std::string& pattern) {
  std::optional<std::regex> custom;
  if (pattern != kDefaultLayerPattern) {
    auto re = compile_layer_pattern(pattern);
    if (!re) return re.error();
    custom = std::move(*re);
  }
  std::map<LayerKey, Layer> by_key;
  std::map<std::string, std::set<uint64_t>> numbers;  // per prefix, for the gap check
  LayerLayout layout;
  for (size_t i = 0; i < file.tensors.size(); ++i) {
    const std::string& name = file.tensors[i].name;
    auto span = find_layer_number(name, custom ? &*custom : nullptr);
    if (!span) return span.error();
    if (!*span) {
      layout.other.push_back(i);
      continue;
    }
    auto key = layer_key(name, **span, pattern);
    if (!key) return key.error();
    Layer& layer = by_key[*key];
    layer.number = key->number;
    layer.name = name.substr(0, (*span)->at + key->digits.size());
    layer.tensors.push_back(i);
    numbers[key->prefix].insert(key->number);
  }
  if (by_key.empty()) return one_layer_per_tensor(file);
  if (Status st = check_numbering(numbers); !st) return st.error();
  for (auto& [key, layer] : by_key) {
    layer.extent = extent_of(file, layer);
    layout.layers.push_back(std::move(layer));
  }
  return layout;
}

std::vector<Extent> layer_extents(const LayerLayout& layout) {
  std::vector<Extent> out;
  for (const Layer& l : layout.layers) out.push_back(l.extent);
  return out;
}

}  // namespace ork::io
