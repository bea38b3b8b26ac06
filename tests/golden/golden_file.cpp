#include "golden_file.h"

#include <fstream>
#include <sstream>

namespace golden {
namespace {

bool parse_u64(const std::string& s, uint64_t& v) {
  try {
    size_t used = 0;
    v = std::stoull(s, &used, 0);
    return used == s.size();
  } catch (...) {
    return false;
  }
}

}  // namespace

GoldenFile read_golden(const std::string& path, std::string& error) {
  GoldenFile g;
  g.path = path;
  std::ifstream in(path);
  if (!in) {
    error = path + ": cannot open";
    return g;
  }
  std::string text;
  for (int line_no = 1; std::getline(in, text); ++line_no) {
    std::string reason;
    if (auto hash = text.find('#'); hash != std::string::npos) {
      reason = text.substr(hash + 1);
      text.resize(hash);
    }
    std::istringstream ls(text);
    std::string kw;
    if (!(ls >> kw)) continue;
    const std::string where = path + ":" + std::to_string(line_no) + ": ";
    auto bad = [&](const char* what) { error = where + what; };
    if (kw == "name") {
      ls >> g.name;
    } else if (kw == "source") {
      std::getline(ls >> std::ws, g.source);
    } else if (kw == "matmul") {
      if (!(ls >> g.dtype >> g.m >> g.k >> g.n >> g.out)) return bad("matmul DTYPE M K N OUT"), g;
    } else if (kw == "iova") {
      std::string a, b, c;
      uint64_t va, vb, vc;
      if (!(ls >> a >> b >> c) || !parse_u64(a, va) || !parse_u64(b, vb) || !parse_u64(c, vc))
        return bad("iova FEATURE WEIGHTS OUTPUT"), g;
      g.feature_iova = static_cast<uint32_t>(va);
      g.weight_iova = static_cast<uint32_t>(vb);
      g.output_iova = static_cast<uint32_t>(vc);
    } else if (kw == "entry") {
      std::string w;
      Entry e;
      e.line = line_no;
      if (!(ls >> w >> e.name) || !parse_u64(w, e.word)) return bad("entry WORD NAME"), g;
      g.entries.push_back(e);
    } else if (kw == "differ") {
      Difference d;
      std::string a, b;
      if (!(ls >> d.key >> a >> b) || !parse_u64(a, d.golden) || !parse_u64(b, d.ork))
        return bad("differ KEY GOLDEN ORK # reason"), g;
      d.reason = reason;
      if (d.reason.find_first_not_of(' ') == std::string::npos) return bad("differ without a reason"), g;
      g.differences.push_back(d);
    } else {
      return bad("unknown keyword"), g;
    }
  }
  if (g.name.empty() || g.source.empty() || g.dtype.empty() || g.entries.empty())
    error = path + ": needs name, source, matmul and entries";
  return g;
}

}  // namespace golden
