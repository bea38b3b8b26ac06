// The bounded JSON reader (driver/common/json.h): nesting refused before the parser sees it,
// whatever the brackets inside strings; every integer read whole and in range, a bad one
// named with its key and the range.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>

#include "driver/common/json.h"

namespace ork {
namespace {

using nlohmann::json;

std::string nested(int levels, char open, char close) {
  return std::string(static_cast<size_t>(levels), open) + std::string(static_cast<size_t>(levels), close);
}

TEST(JsonDepth, CountsBracketsOutsideStrings) {
  EXPECT_EQ(json_depth("1", 64), 0);
  EXPECT_EQ(json_depth("[]", 64), 1);
  EXPECT_EQ(json_depth(R"({"a": [{"b": [1]}], "c": {}})", 64), 4);
  EXPECT_EQ(json_depth(R"(["[[[[", "{{\"[[["])", 64), 1);  // brackets and an escaped quote in strings
  EXPECT_EQ(json_depth(R"(["\\", [[]]])", 64), 3);          // an escaped backslash ends no string
  EXPECT_EQ(json_depth(nested(100000, '[', ']'), 64), 65);  // stops at the first level too deep
}

TEST(ParseJsonBounded, RefusesDeepNestingNamingWhatAndTheLimit) {
  for (char open : {'[', '{'}) {
    const std::string text = open == '[' ? nested(100000, '[', ']') : std::string(100000, '{');
    auto r = parse_json_bounded(text, "model.json");
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, -EINVAL);
    EXPECT_NE(r.error().message.find("model.json"), std::string::npos) << r.error().message;
    EXPECT_NE(r.error().message.find("more than 64 levels"), std::string::npos) << r.error().message;
  }
  // The limit itself parses; one more does not.
  auto at = parse_json_bounded(nested(64, '[', ']'), "x");
  ASSERT_TRUE(at) << at.error().message;
  EXPECT_TRUE(at->is_array());
  EXPECT_FALSE(parse_json_bounded(nested(65, '[', ']'), "x"));
  EXPECT_TRUE(parse_json_bounded(nested(8, '[', ']'), "x", 8));
  EXPECT_FALSE(parse_json_bounded(nested(9, '[', ']'), "x", 8));
}

TEST(ParseJsonBounded, ParsesAndNamesWhatIsNotJson) {
  auto ok = parse_json_bounded(R"({"a": [1, 2], "b": "[{"})", "desc");
  ASSERT_TRUE(ok) << ok.error().message;
  EXPECT_EQ((*ok)["a"][1], 2);
  EXPECT_EQ((*ok)["b"], "[{");
  for (const char* bad : {"", "{", "[1,]", "{\"a\" 1}", "nul", "[1] 2"}) {
    auto r = parse_json_bounded(bad, "header of w.safetensors");
    ASSERT_FALSE(r) << bad;
    EXPECT_EQ(r.error().message.rfind("header of w.safetensors: not valid JSON: ", 0), 0u) << r.error().message;
  }
}

TEST(JsonInt, ReadsIntegersInRange) {
  const json j = json::parse(R"({"a": 7, "neg": -3, "big": 18446744073709551615, "zero": 0})");
  EXPECT_EQ(*json_int<int>(j, "a", 1, 10, "d"), 7);
  EXPECT_EQ(*json_int<int64_t>(j, "neg", -5, 5, "d"), -3);
  EXPECT_EQ(*json_int<uint64_t>(j, "big", 0, UINT64_MAX, "d"), UINT64_MAX);
  EXPECT_EQ(*json_int<uint64_t>(j, "zero", 0, 1, "d"), 0u);
  EXPECT_EQ(*json_int<int>(j, "a", 7, 7, "d"), 7);
}

// Every value that get<int>() once narrowed or truncated silently.
TEST(JsonInt, RefusesWhatWouldNarrowNamingKeyAndRange) {
  const json j = json::parse(R"({"layers": 4294967298, "l2": 1.9, "k": 64.7, "shift": 4294967299, "whole": 2.0,
                                 "neg": -1, "huge": 18446744073709551615, "min": -9223372036854775808,
                                 "s": "12", "arr": [1], "obj": {"a": 1}, "t": true, "n": null})");
  struct Case { const char* key; const char* shown; };
  for (const Case c : {Case{"layers", "= 4294967298"}, Case{"l2", "= 1.9"}, Case{"k", "= 64.7"},
                       Case{"shift", "= 4294967299"}, Case{"whole", "= 2.0"}, Case{"neg", "= -1"},
                       Case{"huge", "= 18446744073709551615"}, Case{"min", "= -9223372036854775808"},
                       Case{"s", "= \"12\""}, Case{"arr", "= a JSON array"}, Case{"obj", "= a JSON object"},
                       Case{"t", "= a JSON boolean"}, Case{"n", "= a JSON null"}}) {
    auto r = json_int<int>(j, c.key, 0, std::numeric_limits<int>::max(), "model description");
    ASSERT_FALSE(r) << c.key;
    EXPECT_EQ(r.error().code, -EINVAL);
    const std::string want = std::string("model description: \"") + c.key + "\" " + c.shown +
                             ": must be an integer in 0..2147483647";
    EXPECT_EQ(r.error().message, want);
  }
  auto missing = json_int<int>(j, "hidden", 1, 2, "model description");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().message, "model description: missing \"hidden\"");
  auto not_obj = json_int<int>(json::array({1}), "k", 1, 2, "matmul 0");
  ASSERT_FALSE(not_obj);
  EXPECT_EQ(not_obj.error().message, "matmul 0: not a JSON object where \"k\" belongs");
  auto elem = json_int_value<uint64_t>(json(8192.5), "tensors[0][2]", 0, UINT64_MAX, "packed model");
  ASSERT_FALSE(elem);
  EXPECT_EQ(elem.error().message, "packed model: tensors[0][2] = 8192.5: must be an integer in 0..18446744073709551615");
}

// A name given as a function is called for the error alone: a packed model's tensor table reads
// millions of integers, and building each one's name first was most of its parse's allocations.
TEST(JsonInt, ANameFunctionIsCalledOnlyForTheError) {
  int calls = 0;
  const auto name = [&calls] {
    ++calls;
    return std::string("tensors[7][3]");
  };
  auto ok = json_int_value<int>(json(12), name, 0, 100, "packed model");
  ASSERT_TRUE(ok);
  EXPECT_EQ(*ok, 12);
  EXPECT_EQ(calls, 0);
  auto bad = json_int_value<int>(json(101), name, 0, 100, "packed model");
  ASSERT_FALSE(bad);
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(bad.error().message, "packed model: tensors[7][3] = 101: must be an integer in 0..100");
  auto wrong_type = json_int_value<int>(json("12"), name, 0, 100, "");
  ASSERT_FALSE(wrong_type);
  EXPECT_EQ(calls, 2);
  EXPECT_EQ(wrong_type.error().message, "tensors[7][3] = \"12\": must be an integer in 0..100");
}

}  // namespace
}  // namespace ork
