// The text format written back (parse.h: format_stream, append_stream_text, append_decimal).
#include <charconv>
#include <span>
#include <string>

#include "lib/sched/parse.h"

namespace ork::sched {

void append_decimal(std::string& out, int64_t value, size_t width) {
  char digits[24];  // an int64 is at most 20 characters with its sign
  const auto n = static_cast<size_t>(std::to_chars(digits, digits + sizeof digits, value).ptr - digits);
  if (n < width) out.append(width - n, ' ');
  out.append(digits, n);
}

namespace {

// The text appended to one string, numbers by to_chars: an ostringstream regrew and copied
// its buffer as it grew, then str() copied it once more (15 % of `ork_run --plan-only` at
// 1M ops, docs/sched.md section 5).
struct TextOut {
  std::string& out;
  TextOut& operator<<(std::string_view text) { return out.append(text), *this; }
  TextOut& operator<<(char c) { return out.push_back(c), *this; }
  TextOut& operator<<(int64_t value) { return append_decimal(out, value), *this; }
};

void format_accesses(TextOut& out, const Stream& s, std::string_view key, std::span<const Access> list) {
  if (list.empty()) return;
  out << ' ' << key << '=';
  for (size_t i = 0; i < list.size(); ++i) {
    const Access& a = list[i];
    if (i > 0) out << ',';
    out << s.buffers[a.buffer].name;
    if (a.offset != 0 || a.length != s.buffers[a.buffer].bytes) out << '[' << a.offset << ':' << a.length << ']';
  }
}

// Bytes the text will take at most, about: reserved once, so the string never regrows
// (untouched capacity costs no page).
size_t text_bound(const Stream& s) {
  size_t bytes = 128;
  for (const Buffer& b : s.buffers) bytes += b.name.size() + 36;  // "buffer ", the size, " xram\n"
  for (const Op& op : s.ops) {
    bytes += op.name.size() + 40;  // the kind, " cycles=", the count, "\n"
    for (const auto list : {s.reads(op), s.writes(op)})
      for (const Access& a : list) bytes += s.buffers[a.buffer].name.size() + 44;  // the range, the separators
  }
  return bytes;
}

}  // namespace

void append_stream_text(std::string& text, const Stream& s) {
  text.reserve(text.size() + text_bound(s));
  TextOut out{text};
  out << "memory " << s.memory_bytes << "\ncores " << int64_t{s.cores} << '\n';
  if (s.slot_align_bytes > 0) out << "slots " << s.slot_align_bytes << '\n';
  if (!s.policy.empty()) out << "policy " << s.policy << '\n';
  for (const Buffer& b : s.buffers) out << "buffer " << b.name << ' ' << b.bytes << (b.in_memory ? "" : " xram") << '\n';
  for (const Op& op : s.ops) {
    out << label_kind(op) << ' ' << op.name;
    format_accesses(out, s, "reads", s.reads(op));
    format_accesses(out, s, "writes", s.writes(op));
    if (op.kind != OpKind::wait) out << " cycles=" << op.cycles;
    out << '\n';
  }
}

std::string format_stream(const Stream& s) {
  std::string text;
  append_stream_text(text, s);
  return text;
}

}  // namespace ork::sched
