// The streams the tests share: the examples of tools/ork_sched/examples, loaded, and a
// small stream that must reload a buffer (placement_test.cpp, chooser_test.cpp).
#pragma once

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "lib/sched/parse.h"
#include "tools/ork_sched/examples_dir.h"

namespace ork::sched::test {

inline Stream example(const std::string& file) {
  std::ifstream in(std::string(examples_dir()) + "/" + file);
  std::stringstream text;
  text << in.rdbuf();
  return parse_stream(text.str()).value();
}

// b is needed again after P2, but a, b and c do not fit together: b (clean, loaded) is
// dropped for c, and reloaded before P3.
inline constexpr const char* kReload =
    "memory 256\nbuffer a 128\nbuffer b 128\nbuffer c 128\n"
    "load La writes=a cycles=10\nload Lb writes=b cycles=10\n"
    "start P1 reads=a,b cycles=50\nwait P1\n"
    "load Lc writes=c cycles=10\nstart P2 reads=a,c cycles=50\nwait P2\n"
    "start P3 reads=b cycles=50\nwait P3\n";

inline std::vector<std::string> labels(const Stream& s, const std::vector<int>& order) {
  std::vector<std::string> out;
  for (int op : order) out.push_back(op_label(s.ops[op]));
  return out;
}

}  // namespace ork::sched::test
