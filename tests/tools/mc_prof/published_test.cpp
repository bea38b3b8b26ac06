// The published figures mc_prof fits to (tools/mc_prof/published.h): every figure of the
// experiment once, with its source, and the held-out ones marked.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "tools/mc_prof/model_fit.h"
#include "tools/mc_prof/published.h"

namespace ork::tools {
namespace {

TEST(PublishedFigures, EveryFigureOfTheExperimentWithItsSource) {
  const auto& all = published_figures();
  ASSERT_EQ(all.size(), 14u);  // 7 sweep points, 7 table cells (the 8th is "—")
  std::set<std::string> names;
  int held_out = 0;
  for (const Figure& f : all) {
    EXPECT_TRUE(names.insert(f.name).second) << f.name;
    EXPECT_GT(f.published_us, 0) << f.name;
    EXPECT_NE(f.source.find("oRKLLM/ork-driver"), std::string::npos) << f.name;
    held_out += f.train ? 0 : 1;
  }
  EXPECT_EQ(held_out, 4);
}

}  // namespace
}  // namespace ork::tools
