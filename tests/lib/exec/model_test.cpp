// Model descriptions (lib/exec/model.h) from hostile text: nesting refused before anything
// recurses, every number that once narrowed silently refused naming its key and range, and a
// description at ork_pack's size limit checked in linear time (a scan per name made 100,000
// matmuls take over a minute; this test's timeout is the bound, no timing assert).
#include <gtest/gtest.h>

#include <string>

#include <fmt/format.h>

#include "lib/exec/model.h"

namespace ork::exec {
namespace {

// A valid description of one 64 x 64 matmul with `field` replaced (or added) by `value`.
std::string desc_with(const std::string& top, const std::string& matmul) {
  return fmt::format(R"({{"dtype": "int8", "hidden": 64, "layers": 2, {} "matmuls": [{{"name": "q", "k": 64, "n": 64,
                        "input": ["x"] {}}}], "output": ["x", "q"]}})", top, matmul);
}

std::string error_of(const std::string& text) {
  auto d = parse_desc(text);
  return d ? "accepted" : d.error().message;
}

TEST(ParseDesc, TheBaseDescriptionParses) {
  auto d = parse_desc(desc_with("", ""));
  ASSERT_TRUE(d) << d.error().message;
  EXPECT_EQ(d->layers, 2);
  EXPECT_EQ(d->matmuls[0].k, 64);
}

TEST(ParseDesc, DeepNestingIsRefusedBeforeAnythingRecurses) {
  for (const int levels : {65, 100000}) {
    const std::string deep = std::string(static_cast<size_t>(levels), '[') + std::string(static_cast<size_t>(levels), ']');
    EXPECT_EQ(error_of(deep), "model description: JSON nested more than 64 levels deep (arrays and objects), the "
                              "most this reader accepts");
    EXPECT_NE(error_of(desc_with(R"("name": )" + deep + ",", "")).find("nested more than 64 levels"), std::string::npos);
  }
}

// Each of these once became another number: 4294967298 layers packed 2, 1.9 packed 1, a K of
// 64.7 became 64 and a shift of 2^32 + 3 became 3.
TEST(ParseDesc, NumbersAreIntegersInRangeOrNamed) {
  const std::string layers = "must be an integer in 1..2147483647";
  EXPECT_EQ(error_of(desc_with(R"("layers": 4294967298,)", "")),
            "model description: \"layers\" = 4294967298: " + layers);
  EXPECT_EQ(error_of(desc_with(R"("layers": 1.9,)", "")), "model description: \"layers\" = 1.9: " + layers);
  EXPECT_EQ(error_of(desc_with(R"("layers": -1,)", "")), "model description: \"layers\" = -1: " + layers);
  EXPECT_EQ(error_of(desc_with(R"("layers": "2",)", "")), "model description: \"layers\" = \"2\": " + layers);
  EXPECT_EQ(error_of(R"({"dtype": "int8", "hidden": 64.0, "layers": 1, "matmuls": [], "output": ["x"]})"),
            "model description: \"hidden\" = 64.0: must be an integer in 1..1048576");
  EXPECT_EQ(error_of(R"({"dtype": "int8", "hidden": 64, "layers": 1, "matmuls": [{"name": "q", "k": 64.7, "n": 64,
                         "input": ["x"]}], "output": ["x"]})"),
            "model description: matmul 0: \"k\" = 64.7: must be an integer in 1..1048576");
  EXPECT_EQ(error_of(desc_with("", R"(, "shift": 4294967299)")),
            "model description: matmul 0: \"shift\" = 4294967299: must be an integer in 0..31");
  EXPECT_EQ(error_of(desc_with("", R"(, "shift": 3.0)")), "model description: matmul 0: \"shift\" = 3.0: must be an integer in 0..31");
  EXPECT_EQ(error_of(R"({"dtype": "int8", "hidden": 64, "layers": 1, "matmuls": [{"name": "q", "k": 64,
                         "n": 18446744073709551615, "input": ["x"]}], "output": ["x"]})"),
            "model description: matmul 0: \"n\" = 18446744073709551615: must be an integer in 1..1048576");
}

TEST(ParseDesc, ListsAndEntriesOfTheWrongTypeAreNamed) {
  EXPECT_EQ(error_of(R"({"dtype": "int8", "hidden": 64, "layers": 1, "matmuls": {}, "output": ["x"]})"),
            "model description: \"matmuls\" must be a list");
  EXPECT_EQ(error_of(R"({"dtype": "int8", "hidden": 64, "layers": 1, "matmuls": [7], "output": ["x"]})"),
            "model description: matmul 0: not a JSON object");
  EXPECT_EQ(error_of(desc_with("", "").replace(desc_with("", "").find(R"(["x", "q"])"), 10, R"(["x", 1])")),
            "model description: \"output\": must be a list of names, got a JSON number");
}

// A description of ork_pack's limit (16 MiB, tools/ork_pack/ork_pack.cpp) of the most
// matmuls that fit, each reading its predecessor: parsed and checked within the test's
// normal timeout, which a check quadratic in the matmuls exceeds by hours.
TEST(ParseDesc, ADescriptionAtTheSizeLimitParses) {
  constexpr size_t kLimit = size_t{16} << 20;
  std::string text = R"({"dtype": "int8", "hidden": 1, "layers": 1, "matmuls": [)";
  int count = 0;
  for (; text.size() + 100 < kLimit; ++count)
    text += fmt::format(R"({}{{"name":"m{}","k":1,"n":1,"input":["{}"]}})", count ? "," : "", count,
                        count ? fmt::format("m{}", count - 1) : "x");
  text += fmt::format(R"(], "output": ["m{}"]}})", count - 1);
  ASSERT_LE(text.size(), kLimit);
  auto d = parse_desc(text);
  ASSERT_TRUE(d) << d.error().message;
  ASSERT_EQ(static_cast<int>(d->matmuls.size()), count);
  EXPECT_GT(count, 300000);
  EXPECT_EQ(d->matmuls.back().inputs, std::vector<std::string>{fmt::format("m{}", count - 2)});
  // The index agrees with the scan it replaced, first and last.
  const MatmulIndex index(*d);
  EXPECT_EQ(index.find("m0"), d->find("m0"));
  EXPECT_EQ(index.find(fmt::format("m{}", count - 1)), count - 1);
  EXPECT_EQ(index.find("x"), -1);
}

}  // namespace
}  // namespace ork::exec
