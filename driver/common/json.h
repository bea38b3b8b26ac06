// Reading JSON that came from outside (model descriptions, packed-model headers,
// safetensors headers, board reports, tool outputs): the one way every layer parses it and
// turns its numbers into integers (docs/reliability.md "Hostile input").
//
// parse_json_bounded bounds the nesting before anything recurses: the parser itself is
// iterative, but serialising, copying or comparing a parsed value recurses once per level,
// and 100,000 nested '[' overflowed the stack of a caller that re-serialised a description.
// A linear pre-scan of the bracket depth outside strings rejects such text before the parser
// sees it. json_int reads an integer field whole and in range: JSON has one number type, and
// nlohmann's get<int>() narrows (4294967298 -> 2) and truncates (64.7 -> 64) silently.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <new>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include <nlohmann/json.hpp>

#include "driver/common/result.h"

namespace ork {

// Deep enough for every format the project reads (a packed model's header nests 5 levels:
// object, "model", "matmuls", a matmul, its "input"), shallow enough that any recursion
// over a parsed value stays far inside a thread's stack (8 MiB main, 2 MiB and up others).
constexpr int kJsonMaxDepth = 64;

// The deepest nesting of arrays and objects in `text` (0 for a scalar), counting brackets
// outside strings; stops early at max_depth + 1. Invalid JSON is the parser's to reject.
inline int json_depth(std::string_view text, int max_depth) {
  int depth = 0, deepest = 0;
  bool in_string = false, escaped = false;
  for (const char ch : text) {
    if (in_string) {
      if (escaped) escaped = false;
      else if (ch == '\\') escaped = true;
      else if (ch == '"') in_string = false;
    } else if (ch == '"') {
      in_string = true;
    } else if (ch == '[' || ch == '{') {
      deepest = std::max(deepest, ++depth);
      if (deepest > max_depth) return deepest;
    } else if ((ch == ']' || ch == '}') && depth > 0) {
      --depth;
    }
  }
  return deepest;
}

// `text` parsed, or an error naming `what` (a file, "model description") and why: nested
// deeper than max_depth, not JSON (with the parser's position), or out of memory.
inline Result<nlohmann::json> parse_json_bounded(std::string_view text, std::string_view what,
                                                 int max_depth = kJsonMaxDepth) {
  if (json_depth(text, max_depth) > max_depth)
    return make_error(-EINVAL, std::string(what) + ": JSON nested more than " + std::to_string(max_depth) +
                                   " levels deep (arrays and objects), the most this reader accepts");
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    return make_error(-EINVAL, std::string(what) + ": not valid JSON: " + e.what());
  } catch (const std::bad_alloc&) {
    return make_error(-ENOMEM, std::string(what) + ": out of memory parsing " + std::to_string(text.size()) +
                                   " bytes of JSON");
  }
}

// `v` as a T when it is a JSON integer in [lo, hi]; else an error naming `name` (the key or
// the element, e.g. "\"layers\"", "tensors[3][0]"; after `what` and ": " unless that is empty)
// and the range. Floats are refused even
// when whole (1.0): every integer field the project reads is written as an integer.
// `name` is a string or a function returning one, called only for the error: the texts are
// built on the error path alone, as a packed model's tensor table at its size limit reads
// 5.6 million integers (docs/reliability.md "CI time", lever 26).
template <typename T, typename Name>
Result<T> json_int_value(const nlohmann::json& v, const Name& name, T lo, T hi, std::string_view what) {
  static_assert(std::numeric_limits<T>::is_integer && sizeof(T) <= 8);
  auto refuse = [&](const std::string& got) {
    std::string n;
    if constexpr (std::is_invocable_v<const Name&>) n = name();
    else n = std::string(std::string_view(name));
    const std::string where = what.empty() ? n : std::string(what) + ": " + n;
    return make_error(-EINVAL, where + " = " + got + ": must be an integer in " + std::to_string(lo) + ".." +
                                   std::to_string(hi));
  };
  if (!v.is_number_integer()) {
    // Scalars are shown (a float, a string up to 40 bytes); a container only by its type:
    // printing it would recurse through it.
    std::string got = std::string("a JSON ") + v.type_name();
    if (v.is_number_float()) got = v.dump();
    else if (v.is_string() && v.get_ref<const std::string&>().size() <= 40) got = v.dump();
    return refuse(got);
  }
  if (v.is_number_unsigned()) {
    const uint64_t u = v.get<uint64_t>();
    if (std::cmp_less(u, lo) || std::cmp_greater(u, hi)) return refuse(std::to_string(u));
    return static_cast<T>(u);
  }
  const int64_t s = v.get<int64_t>();
  if (std::cmp_less(s, lo) || std::cmp_greater(s, hi)) return refuse(std::to_string(s));
  return static_cast<T>(s);
}

// obj[key] as a T in [lo, hi] (json_int_value); an error when obj is no object or lacks it.
template <typename T>
Result<T> json_int(const nlohmann::json& obj, std::string_view key, T lo, T hi, std::string_view what) {
  const std::string name = "\"" + std::string(key) + "\"";
  if (!obj.is_object()) return make_error(-EINVAL, std::string(what) + ": not a JSON object where " + name + " belongs");
  const auto it = obj.find(std::string(key));
  if (it == obj.end()) return make_error(-EINVAL, std::string(what) + ": missing " + name);
  return json_int_value<T>(*it, name, lo, hi, what);
}

}  // namespace ork
