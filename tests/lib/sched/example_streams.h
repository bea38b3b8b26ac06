// Loads the example streams of tools/ork_sched/examples for the tests.
#pragma once

#include <fstream>
#include <sstream>
#include <string>

#include "lib/sched/parse.h"

namespace ork::sched::test {

inline Stream example(const std::string& file) {
  std::ifstream in(std::string(ORK_SCHED_EXAMPLES_DIR) + "/" + file);
  std::stringstream text;
  text << in.rdbuf();
  return parse_stream(text.str()).value();
}

inline std::vector<std::string> labels(const Stream& s, const std::vector<int>& order) {
  std::vector<std::string> out;
  for (int op : order) out.push_back(op_label(s.ops[op]));
  return out;
}

}  // namespace ork::sched::test
