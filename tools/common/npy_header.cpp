// The .npy header: magic, version, and the Python dict literal that describes the array.
// Only the subset NumPy writes is accepted (format.py, NEP 1): string keys, string /
// True / False / tuple-of-int values. Anything else is a "bad header" naming the spot.
#include <cctype>
#include <cstring>
#include <set>

#include <fmt/format.h>

#include "tools/common/npy.h"

namespace ork::tools {
namespace {

// "\x93NUMPY": the 6-byte magic string (NEP 1).
constexpr uint8_t kMagic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
constexpr size_t kMagicBytes = sizeof(kMagic);

// A cursor over the header text with the error prefix of the file.
class DictParser {
 public:
  DictParser(std::string_view text, std::string_view name) : text_(text), name_(name) {}

  Status parse(NpyHeader& header) {
    skip_space();
    if (!eat('{')) return fail("expected '{' at the start of the dict");
    std::set<std::string> seen;
    for (;;) {
      skip_space();
      if (eat('}')) break;
      std::string key;
      if (Status s = parse_string(key, "a dict key"); !s) return s;
      if (!seen.insert(key).second) return fail(fmt::format("key '{}' appears twice", key));
      skip_space();
      if (!eat(':')) return fail(fmt::format("expected ':' after key '{}'", key));
      skip_space();
      if (Status s = parse_value(key, header); !s) return s;
      skip_space();
      if (eat(',')) continue;
      if (eat('}')) break;
      return fail(fmt::format("expected ',' or '}}' after the value of '{}'", key));
    }
    for (; pos_ < text_.size(); ++pos_) {
      if (!std::isspace(static_cast<unsigned char>(text_[pos_])))
        return fail("unexpected text after the closing '}'");
    }
    for (const char* key : {"descr", "fortran_order", "shape"}) {
      if (!seen.count(key)) return fail(fmt::format("key '{}' is missing", key));
    }
    return Status::success();
  }

 private:
  Status fail(const std::string& what) const {
    return make_error(-EINVAL, fmt::format("{}: bad header: {} (at header byte {})", name_,
                                           what, pos_));
  }
  void skip_space() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  bool eat(char c) {
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  bool eat_word(std::string_view word) {
    if (text_.substr(pos_, word.size()) != word) return false;
    pos_ += word.size();
    return true;
  }

  Status parse_string(std::string& out, std::string_view what) {
    if (pos_ >= text_.size() || (text_[pos_] != '\'' && text_[pos_] != '"'))
      return fail(fmt::format("expected a quoted string for {}", what));
    const char quote = text_[pos_++];
    const size_t end = text_.find(quote, pos_);
    if (end == std::string_view::npos) return fail("unterminated string");
    out.assign(text_.substr(pos_, end - pos_));
    pos_ = end + 1;
    return Status::success();
  }

  Status parse_bool(bool& out, std::string_view key) {
    if (eat_word("True")) {
      out = true;
    } else if (eat_word("False")) {
      out = false;
    } else {
      return fail(fmt::format("'{}' must be True or False", key));
    }
    return Status::success();
  }

  Status parse_int(int64_t& out) {
    const size_t start = pos_;
    int64_t value = 0;
    while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
      const int digit = text_[pos_++] - '0';
      if (value > (INT64_MAX - digit) / 10) return fail("a dimension does not fit in 64 bits");
      value = value * 10 + digit;
    }
    if (pos_ == start) return fail("expected a non-negative integer in 'shape'");
    eat('L');  // Python 2 era NumPy wrote long integers as 3L
    out = value;
    return Status::success();
  }

  Status parse_shape(std::vector<int64_t>& shape) {
    if (!eat('(')) return fail("'shape' must be a tuple such as (3, 4)");
    for (;;) {
      skip_space();
      if (eat(')')) return Status::success();
      int64_t dim = 0;
      if (Status s = parse_int(dim); !s) return s;
      shape.push_back(dim);
      skip_space();
      if (eat(',')) continue;
      if (eat(')')) return Status::success();
      return fail("expected ',' or ')' in 'shape'");
    }
  }

  Status parse_value(const std::string& key, NpyHeader& header) {
    if (key == "descr") {
      if (pos_ < text_.size() && text_[pos_] == '[')
        return fail("'descr' is a list: structured dtypes are not supported");
      return parse_string(header.descr, "'descr'");
    }
    if (key == "fortran_order") return parse_bool(header.fortran_order, key);
    if (key == "shape") return parse_shape(header.shape);
    return fail(fmt::format("unknown key '{}'", key));
  }

  std::string_view text_;
  std::string_view name_;
  size_t pos_ = 0;
};

uint32_t read_le(std::span<const uint8_t> bytes) {
  uint32_t value = 0;
  for (size_t i = bytes.size(); i-- > 0;) value = (value << 8) | bytes[i];
  return value;
}

}  // namespace

Result<NpyHeader> npy_parse_header(std::span<const uint8_t> file, std::string_view name) {
  if (file.size() < kMagicBytes || std::memcmp(file.data(), kMagic, kMagicBytes) != 0)
    return make_error(-EINVAL,
                      fmt::format("{}: bad magic: not a .npy file (it must start with "
                                  "\"\\x93NUMPY\")", name));
  if (file.size() < kMagicBytes + 2)
    return make_error(-EINVAL, fmt::format("{}: truncated header: no version bytes", name));
  NpyHeader header;
  header.major = file[6];
  header.minor = file[7];
  if (header.major < 1 || header.major > 3 || header.minor != 0)
    return make_error(-EINVAL, fmt::format("{}: unsupported .npy version {}.{} (1.0, 2.0 and "
                                           "3.0 are known)", name, header.major, header.minor));
  // v1.0 stores the header length in 2 bytes, v2.0 and v3.0 in 4 (NEP 1, format.py).
  const size_t len_bytes = header.major == 1 ? 2 : 4;
  const size_t prefix = kMagicBytes + 2 + len_bytes;
  if (file.size() < prefix)
    return make_error(-EINVAL, fmt::format("{}: truncated header: no header length", name));
  const uint64_t header_len = read_le(file.subspan(kMagicBytes + 2, len_bytes));
  if (file.size() - prefix < header_len)
    return make_error(-EINVAL, fmt::format("{}: truncated header: it claims {} bytes, the file "
                                           "has {} after the length field", name, header_len,
                                           file.size() - prefix));
  const auto* text = reinterpret_cast<const char*>(file.data() + prefix);
  std::string_view dict(text, header_len);
  if (header.major < 3) {
    for (char c : dict) {
      if (static_cast<unsigned char>(c) >= 0x80)
        return make_error(-EINVAL, fmt::format("{}: bad header: non-ASCII byte in a version {} "
                                               "header (only 3.0 allows UTF-8)", name,
                                               header.major));
    }
  }
  DictParser parser(dict, name);
  if (Status s = parser.parse(header); !s) return s.error();
  header.data_offset = static_cast<int64_t>(prefix + header_len);
  return header;
}

}  // namespace ork::tools
