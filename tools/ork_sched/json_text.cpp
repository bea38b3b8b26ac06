// The JSON report written directly as text: the same bytes as render_json(...).dump(2), without
// a JSON tree. At 1M ops the tree (a string node per op label, a map node per program) and its
// dump took a quarter of the ork_sched process (docs/sched.md "Speed at 1M ops").
// tests/tools/ork_sched/render_test.cpp checks the bytes against the tree's dump.
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <future>
#include <string_view>
#include <utility>
#include <vector>

#include "lib/sched/beside.h"
#include "tools/ork_sched/render.h"

namespace ork::sched {

namespace {

// RFC 3629 UTF-8 (no overlongs, no surrogates, at most U+10FFFF): what nlohmann's dump
// accepts; it throws on anything else, and so the caller falls back to it for the error.
bool valid_utf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    const size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xe ? 3 : (c >> 3) == 0x1e ? 4 : 0;
    if (n == 0 || i + n > s.size()) return false;
    uint32_t cp = n == 1 ? c : c & (0x7f >> n);
    for (size_t k = 1; k < n; ++k) {
      const auto cc = static_cast<unsigned char>(s[i + k]);
      if ((cc & 0xc0) != 0x80) return false;
      cp = (cp << 6) | (cc & 0x3f);
    }
    const uint32_t min[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < min[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return false;
    i += n;
  }
  return true;
}

// A JSON string as nlohmann's dump writes it (ensure_ascii off): two-character escapes for
// " \ \b \f \n \r \t, \u00xx (lower-case hex) for the other control characters. Runs of
// characters that need none are appended whole: a switch and a push_back per character were a
// third of this writer at 1M ops.
void escaped(std::string& out, std::string_view s) {
  size_t plain = 0;  // the first character not yet appended
  for (size_t i = 0; i < s.size(); ++i) {
    const char ch = s[i];
    if (static_cast<unsigned char>(ch) >= 0x20 && ch != '"' && ch != '\\') continue;
    out.append(s.data() + plain, i - plain);
    plain = i + 1;
    switch (ch) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default: out += fmt::format("\\u{:04x}", static_cast<unsigned char>(ch));
    }
  }
  out.append(s.data() + plain, s.size() - plain);
}

void quoted(std::string& out, std::string_view s) {
  out += '"';
  escaped(out, s);
  out += '"';
}

// Members of one object, rendered; written in key order (nlohmann's objects are std::maps).
struct Members {
  std::vector<std::pair<std::string, std::string>> items;
  void add(std::string key, std::string value) { items.emplace_back(std::move(key), std::move(value)); }
  void add(std::string key, int64_t value) { add(std::move(key), std::to_string(value)); }
  void flag(std::string key, bool value) { add(std::move(key), std::string(value ? "true" : "false")); }
  void text(std::string key, std::string_view value) {
    std::string v;
    quoted(v, value);
    add(std::move(key), std::move(v));
  }
  // `indent`: spaces before this object's closing brace.
  std::string render(size_t indent) {
    if (items.empty()) return "{}";
    std::sort(items.begin(), items.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    size_t bytes = indent + 4;
    for (const auto& [key, value] : items) bytes += indent + key.size() + value.size() + 8;
    std::string out;
    out.reserve(bytes);  // the order alone is tens of MB at 1M ops: one allocation, no regrowth
    out += "{\n";
    for (size_t i = 0; i < items.size(); ++i) {
      out.append(indent + 2, ' ');
      quoted(out, items[i].first);
      out += ": ";
      out += items[i].second;
      out += i + 1 < items.size() ? ",\n" : "\n";
    }
    out.append(indent, ' ');
    out += '}';  // appended, not `out + "}"`: that copied the whole report once more
    return out;
  }
};

// A JSON array at one level of nesting under the root: each element on its own line.
std::string array(const std::vector<std::string>& elements) {
  if (elements.empty()) return "[]";
  std::string out = "[\n";
  for (size_t i = 0; i < elements.size(); ++i) out += "    " + elements[i] + (i + 1 < elements.size() ? ",\n" : "\n");
  return out + "  ]";
}

// The order's labels ("load L1", as op_label), written straight into one string: a string per
// label was most of this writer's time at 1M ops.
std::string order_array(const Stream& s, const Schedule& r) {
  if (r.order.empty()) return "[]";
  size_t bytes = 16;
  for (int op : r.order) bytes += s.ops[op].name.size() + 16;
  std::string out;
  out.reserve(bytes);
  out += "[\n";
  for (size_t i = 0; i < r.order.size(); ++i) {
    const Op& op = s.ops[r.order[i]];
    out += "    \"";
    out += label_kind(op);
    out += ' ';
    escaped(out, op.name);
    out += i + 1 < r.order.size() ? "\",\n" : "\"\n";
  }
  out += "  ]";
  return out;
}

bool names_valid(const Stream& s) {
  return std::all_of(s.ops.begin(), s.ops.end(), [](const Op& op) { return valid_utf8(op.name); });
}

// {program name: core}, by name; for a name that two programs share, the later one in the
// order (a map assignment keeps the last). Written straight into one string, as the order.
struct Named {
  uint64_t prefix;  // the name's first 8 bytes, big-endian, zero-padded: most comparisons end here
  std::string_view first;
  int second;       // the op
};

uint64_t prefix_of(std::string_view name) {
  uint64_t key = 0;
  for (size_t i = 0; i < 8; ++i) key = key << 8 | (i < name.size() ? static_cast<unsigned char>(name[i]) : 0u);
  return key;
}

std::string cores_object(const Stream& s, const Schedule& r) {
  std::vector<Named> named;
  for (int op : r.order)
    if (r.core_of[op] >= 0) named.push_back({prefix_of(s.ops[op].name), s.ops[op].name, op});
  if (named.empty()) return "{}";
  // Byte order, as std::map<std::string>; equal prefixes (or a name with a zero byte) compare
  // whole. A memcmp per comparison was a tenth of this writer at 1M ops.
  std::stable_sort(named.begin(), named.end(), [](const Named& a, const Named& b) {
    return a.prefix != b.prefix ? a.prefix < b.prefix : a.first < b.first;
  });
  std::string out = "{\n";
  out.reserve(named.size() * 24);
  bool first = true;
  for (size_t i = 0; i < named.size(); ++i) {
    if (i + 1 < named.size() && named[i + 1].first == named[i].first) continue;
    out += first ? "    \"" : ",\n    \"";
    first = false;
    escaped(out, named[i].first);
    out += "\": ";
    out += std::to_string(r.core_of[named[i].second]);
  }
  out += "\n  }";
  return out;
}

std::string attempts_array(const Schedule& r) {
  std::vector<std::string> out;
  for (const Attempt& a : r.attempts) {
    Members m;
    m.text("pass", pass_name(a.pass));
    m.text("policy", policy_name(a.policy));
    m.flag("dma_lookahead", a.dma_lookahead);
    m.add("prefetch_percent", int64_t{a.prefetch_percent});
    m.add("cap_percent", int64_t{a.cap_percent});
    m.add("predicted", a.predicted);
    m.flag("placed", a.placed);
    m.add("priced", a.priced);
    m.add("swaps", int64_t{a.swaps});
    out.push_back(m.render(4));
  }
  return array(out);
}

}  // namespace

std::string render_json_text(const Stream& s, const Schedule& r) {
  if (!names_valid(s)) return render_json(s, r).dump(2);  // throws its own error, as before
  Members bounds;
  bounds.add("critical_path", r.bounds.critical_path);
  bounds.add("stream_load", r.bounds.stream_load);
  bounds.add("core_load", r.bounds.core_load);
  bounds.add("pipeline", r.bounds.pipeline);
  bounds.add("memory", r.bounds.memory);
  Members j;
  // The core object (a sort of the programs' names) is written beside the order from 65,536 ops:
  // both only read the stream and the schedule (about 0.06 s each of the 1M-op random DAG's report).
  std::future<std::string> cores = run_beside(static_cast<int>(s.ops.size()), [&s, &r] { return cores_object(s, r); });
  j.add("order", order_array(s, r));
  j.add("core", cores.get());
  j.add("makespan_input", r.makespan_input);
  j.add("makespan_input_priced", r.makespan_input_priced);
  j.add("makespan", r.makespan);
  j.add("peak_bytes", r.peak_bytes);
  j.add("memory", s.memory_bytes);
  j.add("cores", int64_t{s.cores});
  j.add("lower_bound", r.bounds.value);
  j.add("bounds", bounds.render(2));
  if (r.pass == Pass::input) j.text("pass", "input");
  else j.add("pass", int64_t{r.pass == Pass::zero ? 0 : 1});
  j.add("cap_percent", int64_t{r.cap_percent});
  j.text("policy", policy_name(r.policy));
  j.flag("dma_lookahead", r.dma_lookahead);
  j.add("prefetch_percent", int64_t{r.prefetch_percent});
  j.add("swaps", static_cast<int64_t>(r.swaps.size()));
  j.add("swap_bytes", r.swap_bytes);
  j.add("attempts", attempts_array(r));
  return j.render(0);
}

}  // namespace ork::sched
