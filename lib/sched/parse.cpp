#include "lib/sched/parse.h"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <limits>
#include <span>
#include <vector>

#include "lib/sched/names.h"

namespace ork::sched {

Result<int64_t> parse_size(std::string_view text) {
  if (text.empty()) return make_error(-EINVAL, "empty size");
  int64_t scale = 1;
  switch (text.back()) {
    case 'K': case 'k': scale = int64_t{1} << 10; break;
    case 'M': case 'm': scale = int64_t{1} << 20; break;
    case 'G': case 'g': scale = int64_t{1} << 30; break;
    default: break;
  }
  std::string_view digits = scale == 1 ? text : text.substr(0, text.size() - 1);
  int64_t value = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (ec != std::errc() || end != digits.data() + digits.size() || value < 0 || digits.empty())
    return make_error(-EINVAL, "'" + std::string(text) + "' is not a size (e.g. 4096, 30K, 2M)");
  if (value > std::numeric_limits<int64_t>::max() / scale)
    return make_error(-ERANGE, "size '" + std::string(text) + "' is too large");
  return value * scale;
}

namespace {

// Words are views into the text (no string per word); buffer names are interned to their
// index at declaration, so an access is one flat-table lookup.
struct LineParser {
  Stream& stream;
  NameTable buffers;
  int line = 0;

  Error fail(const std::string& what) const {
    return make_error(-EINVAL, "line " + std::to_string(line) + ": " + what);
  }

  // "w1" or "w1[4K:8K]" -> Access (whole buffer without a range).
  Result<Access> access(std::string_view item) const {
    size_t bracket = item.find('[');
    const std::string_view name = item.substr(0, bracket);
    const int id = buffers.find(name);
    if (id < 0) return fail("buffer " + std::string(name) + " is not declared");
    Access a{id, 0, stream.buffers[id].bytes};
    if (bracket == std::string_view::npos) return a;
    size_t colon = item.find(':', bracket);
    if (colon == std::string_view::npos || item.back() != ']')
      return fail("range '" + std::string(item) + "' must look like buf[offset:length]");
    auto off = parse_size(item.substr(bracket + 1, colon - bracket - 1));
    auto len = parse_size(item.substr(colon + 1, item.size() - colon - 2));
    if (!off) return fail(off.error().message);
    if (!len) return fail(len.error().message);
    a.offset = *off;
    a.length = *len;
    const int64_t bytes = stream.buffers[a.buffer].bytes;
    if (a.length == 0 || a.offset > bytes || a.length > bytes - a.offset)  // no offset + length: it can overflow
      return fail("range " + std::string(item) + " lies outside buffer " + std::string(name) + " of " +
                  std::to_string(stream.buffers[a.buffer].bytes) + " bytes");
    return a;
  }

  Status accesses(std::string_view list, std::vector<Access>& out) const {
    // One allocation for the list (growing 1 -> 2 copied and freed one per op: 7 % of a
    // 1M-op process).
    out.reserve(out.size() + static_cast<size_t>(std::count(list.begin(), list.end(), ',')) + 1);
    while (!list.empty()) {
      size_t comma = list.find(',');
      auto a = access(list.substr(0, comma));
      if (!a) return a.error();
      out.push_back(*a);
      list = comma == std::string_view::npos ? std::string_view{} : list.substr(comma + 1);
    }
    return {};
  }

  Status key_value(Op& op, std::string_view word) {
    size_t eq = word.find('=');
    if (eq == std::string_view::npos) return fail("expected key=value, got '" + std::string(word) + "'");
    const std::string_view key = word.substr(0, eq);
    std::string_view value = word.substr(eq + 1);
    if (key == "reads") return accesses(value, reads);
    if (key == "writes") return accesses(value, writes);
    if (key == "cycles") {
      auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), op.cycles);
      if (ec != std::errc() || end != value.data() + value.size() || op.cycles < 0 || op.cycles > kMaxOpCycles)
        return fail("cycles='" + std::string(value) + "' is not a count from 0 to " + std::to_string(kMaxOpCycles) +
                    " (2^40)");
      return {};
    }
    return fail("unknown key '" + std::string(key) + "' (reads, writes, cycles)");
  }

  Status header(const std::vector<std::string>& w) {
    if (w.size() != 2) return fail(w[0] + " takes one value");
    if (w[0] == "memory") {
      auto v = parse_size(w[1]);
      if (!v) return fail(v.error().message);
      stream.memory_bytes = *v;
      return {};
    }
    if (w[0] == "slots") {  // checked (a power of two, at most memory) by finalize_stream
      auto v = parse_size(w[1]);
      if (!v) return fail(v.error().message);
      stream.slot_align_bytes = *v;
      return {};
    }
    if (w[0] == "policy") {
      if (w[1] != "fifo" && w[1] != "critical-path" && w[1] != "best")
        return fail("policy '" + w[1] + "': expected fifo, critical-path or best");
      stream.policy = w[1];
      return {};
    }
    int cores = 0;
    auto [end, ec] = std::from_chars(w[1].data(), w[1].data() + w[1].size(), cores);
    if (ec != std::errc() || end != w[1].data() + w[1].size() || cores < 1 || cores > kMaxCores)
      return fail("cores '" + w[1] + "' must be a count from 1 to " + std::to_string(kMaxCores));
    stream.cores = cores;
    return {};
  }

  Status buffer(const std::vector<std::string_view>& w) {
    if (w.size() < 3 || w.size() > 4 || (w.size() == 4 && w[3] != "xram"))
      return fail("expected: buffer NAME SIZE [xram]");
    auto bytes = parse_size(w[2]);
    if (!bytes) return fail(bytes.error().message);
    if (*bytes == 0) return fail("buffer " + std::string(w[1]) + " has size 0");
    const int id = static_cast<int>(stream.buffers.size());
    if (buffers.insert(w[1], id) != id) return fail("duplicate buffer name " + std::string(w[1]));
    stream.buffers.push_back(Buffer{std::string(w[1]), *bytes, w.size() == 3, line});
    return {};
  }

  static bool op_kind(std::string_view word, OpKind& kind) {
    static constexpr std::pair<std::string_view, OpKind> kinds[] = {
        {"load", OpKind::load}, {"store", OpKind::store}, {"start", OpKind::start},
        {"wait", OpKind::wait}, {"barrier", OpKind::barrier}};
    for (const auto& [name, k] : kinds)
      if (word == name) return kind = k, true;
    return false;
  }

  Status op(const std::vector<std::string_view>& w) {
    OpKind kind = OpKind::barrier;
    if (!op_kind(w[0], kind))
      return fail("unknown op '" + std::string(w[0]) +
                  "' (memory, cores, slots, policy, buffer, load, store, start, wait, barrier)");
    if (w.size() < 2) return fail(std::string(w[0]) + " needs a name");
    Op op{.name = std::string(w[1]), .line = line, .kind = kind};
    reads.clear();
    writes.clear();
    for (size_t i = 2; i < w.size(); ++i)
      if (Status st = key_value(op, w[i]); !st) return st;
    if (stream.accesses.size() + reads.size() + writes.size() > UINT32_MAX)
      return fail("more than 2^32 - 1 accesses in the stream");
    stream.add(std::move(op), reads, writes);
    return {};
  }

  // Splits on blanks into `words` (reused from line to line: no allocation per line).
  std::vector<std::string_view> words;
  // The op's accesses as its line is read (a line may name reads= and writes= in either
  // order, or twice), then appended to the stream's one array (Stream::add); reused.
  std::vector<Access> reads, writes;

  Status parse_line(std::string_view text) {
    if (size_t hash = text.find('#'); hash != std::string_view::npos) text = text.substr(0, hash);
    words.clear();
    auto blank = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; };
    for (size_t i = 0; i < text.size();) {
      while (i < text.size() && blank(text[i])) ++i;
      const size_t begin = i;
      while (i < text.size() && !blank(text[i])) ++i;
      if (i > begin) words.push_back(text.substr(begin, i - begin));
    }
    const std::vector<std::string_view>& w = words;
    if (w.empty()) return {};
    if (w[0] == "memory" || w[0] == "cores" || w[0] == "slots" || w[0] == "policy")
      return header(std::vector<std::string>(w.begin(), w.end()));
    if (w[0] == "buffer") return buffer(w);
    return op(w);
  }
};

// The first line of `rest`, which moves past it.
std::string_view take_line(std::string_view& rest) {
  const size_t nl = rest.find('\n');
  const std::string_view line = rest.substr(0, nl);
  rest = nl == std::string_view::npos ? std::string_view{} : rest.substr(nl + 1);
  return line;
}

// When `line` declares a buffer ("buffer NAME ..."), the name's index slot starts loading
// (NameTable::prefetch): a hint only, so a line it misreads costs nothing but the load.
void prefetch_declaration(const NameTable& names, std::string_view line) {
  constexpr std::string_view kBuffer = "buffer";
  if (!line.starts_with(kBuffer) || line.size() <= kBuffer.size() || (line[kBuffer.size()] != ' ' && line[kBuffer.size()] != '\t'))
    return;
  const size_t begin = line.find_first_not_of(" \t", kBuffer.size());
  if (begin == std::string_view::npos) return;
  const size_t end = line.find_first_of(" \t\r#", begin);
  names.prefetch(line.substr(begin, end == std::string_view::npos ? end : end - begin));
}

// How many times c occurs in text, by memchr (glibc's is vectorised): std::count is a byte
// loop at -O2. Both counts over the 1M-op random stream's 57 MB took 58-61 ms that way, 27 ms
// this way (docs/sched.md "On the Intel machine").
size_t count_char(std::string_view text, char c) {
  if (text.empty()) return 0;  // memchr takes no null pointer, even for 0 bytes
  size_t n = 0;
  for (const char *p = text.data(), *end = p + text.size();
       (p = static_cast<const char*>(std::memchr(p, c, static_cast<size_t>(end - p)))) != nullptr; ++p)
    ++n;
  return n;
}

// Lines between a declaration's prefetch and its insert: enough for a miss to land (a line
// parses in ~0.1-0.3 us, a miss under a VM's nested paging takes ~0.1-0.2 us).
constexpr int kLookaheadLines = 16;

}  // namespace

Result<Stream> parse_stream(std::string_view text, ParseOverrides overrides) {
  Stream stream;
  const size_t lines = count_char(text, '\n') + 1;
  stream.ops.reserve(lines);  // an upper bound; untouched capacity costs no page
  stream.buffers.reserve(lines / 2);  // most streams declare fewer; growing copied every buffer
  // An access is a comma's or a key's: at most the commas and two per line.
  stream.accesses.reserve(count_char(text, ',') + 2 * lines);
  {  // the buffer names' table is freed before finalize_stream builds the op names': it reuses those pages
    LineParser parser{stream, NameTable(lines / 2), 0, {}};
    std::string_view ahead = text;
    for (int i = 0; i < kLookaheadLines && !ahead.empty(); ++i) prefetch_declaration(parser.buffers, take_line(ahead));
    while (!text.empty()) {
      ++parser.line;
      if (!ahead.empty()) prefetch_declaration(parser.buffers, take_line(ahead));
      if (Status st = parser.parse_line(take_line(text)); !st) return st.error();
    }
  }
  if (overrides.memory_bytes > 0) stream.memory_bytes = overrides.memory_bytes;
  if (overrides.cores > 0) stream.cores = overrides.cores;
  if (stream.memory_bytes <= 0)
    return make_error(-EINVAL, "no 'memory SIZE' line (or --memory) gives the memory size");
  if (Status st = finalize_stream(stream, false); !st) return st.error();
  return stream;
}

namespace {

// The text appended to one string, numbers by to_chars: an ostringstream regrew and copied
// its buffer as it grew, then str() copied it once more (15 % of `ork_run --plan-only` at
// 1M ops, docs/sched.md section 5).
struct TextOut {
  std::string& out;
  TextOut& operator<<(std::string_view text) { return out.append(text), *this; }
  TextOut& operator<<(char c) { return out.push_back(c), *this; }
  TextOut& operator<<(int64_t value) {
    char digits[24];  // an int64 is at most 20 characters with its sign
    const auto end = std::to_chars(digits, digits + sizeof digits, value).ptr;
    return out.append(digits, end), *this;
  }
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
    out << (op.unwaited_start ? "start" : kind_name(op.kind)) << ' ' << op.name;
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
