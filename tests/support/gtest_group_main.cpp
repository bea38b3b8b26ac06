// The main of a test group: one GoogleTest program holding the tests of several sources of a
// folder, so that their headers (GoogleTest, gmock, fmt, nlohmann-json) are compiled once
// per folder instead of once per source (docs/reliability.md "CI time", lever 22). Each meson
// test still runs its own process and its own tests only:
//   GROUP_PROGRAM --ork-group=a_test.cpp,b_test.cpp --ork-source=b_test.cpp [gtest flags]
// runs the tests written in b_test.cpp (GoogleTest records each test's source file, from
// __FILE__), by adding every other test to the negative part of the filter, so a filter of
// the caller's own (--gtest_filter, GTEST_FILTER) still applies on top. --ork-group, which
// every meson test passes, names every source compiled into the program: a test from any
// other file (a TEST in a header, say) would be run by no meson test, so the program
// refuses to run. By hand both are optional: without --ork-source the program runs every
// test it holds (--gtest_filter as usual).
#include <gtest/gtest.h>

#include <cstdio>
#include <set>
#include <string>
#include <string_view>

namespace {

using GroupNames = std::set<std::string, std::less<>>;

std::string_view group_base_name(std::string_view path) {
  const auto slash = path.find_last_of('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

// "a.cpp,b.cpp" -> {a.cpp, b.cpp}; false on an empty list or item, or a name twice (two
// sources of one base name in a group could not be told apart).
bool group_split(std::string_view list, GroupNames& out) {
  if (list.empty()) return false;
  while (!list.empty()) {
    const auto comma = list.find(',');
    const auto item = list.substr(0, comma);
    if (item.empty() || !out.emplace(item).second) return false;
    list = comma == std::string_view::npos ? std::string_view{} : list.substr(comma + 1);
  }
  return true;
}

struct GroupArgs {
  GroupNames group;    // every source compiled into this program
  GroupNames sources;  // the sources whose tests this run selects; empty = all
};

// What InitGoogleTest left in argv: ours, and anything else (ignored, as gtest_main does).
bool group_parse(int argc, char** argv, GroupArgs& args) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    bool ok = true;
    if (arg.starts_with("--ork-group=")) {
      ok = group_split(arg.substr(12), args.group);
    } else if (arg.starts_with("--ork-source=")) {
      ok = group_split(arg.substr(13), args.sources);
    } else if (arg.starts_with("--ork-")) {
      ok = false;
    }
    if (!ok) {
      std::fprintf(stderr, "test group: bad argument '%s' (--ork-group=FILE[,FILE...] "
                           "--ork-source=FILE[,FILE...])\n", argv[i]);
      return false;
    }
  }
  for (const auto& source : args.sources) {
    if (!args.group.empty() && !args.group.contains(source)) {
      std::fprintf(stderr, "test group: --ork-source=%s is not in --ork-group\n", source.c_str());
      return false;
    }
  }
  return true;
}

// Every test not from args.sources, as "Suite.Name:..." (exact names, no wildcards: a test's
// name never holds '*' or '?'); false when a test comes from outside the group or the
// selection holds no test at all.
bool group_excluded(const GroupArgs& args, std::string& excluded) {
  const auto& unit = *testing::UnitTest::GetInstance();
  GroupNames selected_files;
  for (int s = 0; s < unit.total_test_suite_count(); ++s) {
    const auto& suite = *unit.GetTestSuite(s);
    for (int t = 0; t < suite.total_test_count(); ++t) {
      const auto& info = *suite.GetTestInfo(t);
      const auto file = group_base_name(info.file());
      if (!args.group.empty() && !args.group.contains(file)) {
        std::fprintf(stderr, "test group: %s.%s is written in %s, not in --ork-group: no "
                             "meson test would run it\n", info.test_suite_name(), info.name(),
                     info.file());
        return false;
      }
      if (args.sources.empty() || args.sources.contains(file)) {
        selected_files.emplace(file);
        continue;
      }
      excluded += excluded.empty() ? "" : ":";
      excluded += std::string(info.test_suite_name()) + "." + info.name();
    }
  }
  for (const auto& source : args.sources) {
    if (!selected_files.contains(source)) {
      std::fprintf(stderr, "test group: --ork-source=%s holds no test in this program\n",
                   source.c_str());
      return false;
    }
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  GroupArgs args;
  std::string excluded;
  if (!group_parse(argc, argv, args) || !group_excluded(args, excluded)) return 2;
  if (!excluded.empty()) {
    // GoogleTest's filter is POSITIVE[-NEGATIVE]: the negative part starts at the first '-'.
    std::string filter = GTEST_FLAG_GET(filter);
    filter += filter.find('-') == std::string::npos ? "-" : ":";
    GTEST_FLAG_SET(filter, filter + excluded);
  }
  return RUN_ALL_TESTS();
}
