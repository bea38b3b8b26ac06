// A golden stream file (tests/golden/data/*.golden, format in docs/regcmd-contract.md
// section 8): a public capture or public writer's register command stream for one matmul
// shape, and the differences from libork that are intentional, each with its reason.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace golden {

struct Entry {
  uint64_t word = 0;
  std::string name;  // what the file says the word is: "CNA.CBUF_CON0", "PADDING", ...
  int line = 0;
};

struct Difference {
  std::string key;  // "CNA.CONV_CON1.GROUP_LINE_OFF", "trailer.2", "only_golden CNA.X"
  uint64_t golden = 0, ork = 0;
  std::string reason;
  friend bool operator==(const Difference& a, const Difference& b) {
    return a.key == b.key && a.golden == b.golden && a.ork == b.ork;
  }
};

struct GoldenFile {
  std::string path, name, source;
  std::string dtype, out;  // "int8"/"fp16"/"int4"; "int32"/"fp32"/"fp16"/"int16"
  int64_t m = 0, k = 0, n = 0;
  uint32_t feature_iova = 0, weight_iova = 0, output_iova = 0;
  std::vector<Entry> entries;
  std::vector<Difference> differences;
};

// Parses a file; on a malformed line `error` names the file, line and problem.
GoldenFile read_golden(const std::string& path, std::string& error);

}  // namespace golden
