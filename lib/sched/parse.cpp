#include "lib/sched/parse.h"

#include <algorithm>
#include <array>
#include <bit>
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

  // `hash`: NameTable::hash of the name, taken when the line was split ahead.
  Status buffer(const std::vector<std::string_view>& w, uint64_t hash) {
    if (w.size() < 3 || w.size() > 4 || (w.size() == 4 && w[3] != "xram"))
      return fail("expected: buffer NAME SIZE [xram]");
    auto bytes = parse_size(w[2]);
    if (!bytes) return fail(bytes.error().message);
    if (*bytes == 0) return fail("buffer " + std::string(w[1]) + " has size 0");
    const int id = static_cast<int>(stream.buffers.size());
    if (buffers.insert(w[1], hash, id) != id) return fail("duplicate buffer name " + std::string(w[1]));
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

  // The op's accesses as its line is read (a line may name reads= and writes= in either
  // order, or twice), then appended to the stream's one array (Stream::add); reused.
  std::vector<Access> reads, writes;

  // One line's words (views into the text); `hash` is its buffer name's when it declares one.
  Status parse_words(const std::vector<std::string_view>& w, uint64_t hash) {
    if (w.empty()) return {};
    if (w[0] == "memory" || w[0] == "cores" || w[0] == "slots" || w[0] == "policy")
      return header(std::vector<std::string>(w.begin(), w.end()));
    if (w[0] == "buffer") return buffer(w, hash);
    return op(w);
  }
};

// What a byte is to the line splitter: part of a word, a blank, the line's end, or a comment's
// start (the rest of the line is ignored).
enum CharClass : uint8_t { kWordChar, kBlank, kLineEnd, kComment };

constexpr std::array<CharClass, 256> kCharClass = [] {
  std::array<CharClass, 256> table{};
  for (const unsigned char c : {' ', '\t', '\r', '\v', '\f'}) table[c] = kBlank;
  table[static_cast<unsigned char>('\n')] = kLineEnd;
  table[static_cast<unsigned char>('#')] = kComment;
  return table;
}();

// Where the word at `p` ends (before `end`): 8 bytes a step while they last. Only a byte below
// 0x21 or a '#' can end a word, and the lowest such byte of a word is found exactly by the
// "has less than" and "has zero byte" tests (Sean Eron Anderson, Bit Twiddling Hacks; a
// borrow can only flag bytes above the first one); the table then says whether it does (the
// other control bytes are part of words). A byte a step was a fifth of the parse at 1M ops.
const char* word_end(const char* p, const char* end) {
  constexpr uint64_t kOnes = 0x0101010101010101ull, kHigh = 0x8080808080808080ull;
  while (end - p >= 8) {
    uint64_t bytes;
    std::memcpy(&bytes, p, sizeof bytes);
    const uint64_t hashes = bytes ^ (kOnes * static_cast<unsigned char>('#'));
    const uint64_t flags = ((bytes - kOnes * 0x21) & ~bytes & kHigh) | ((hashes - kOnes) & ~hashes & kHigh);
    if (flags == 0) {
      p += 8;
      continue;
    }
    const int first = std::endian::native == std::endian::little ? std::countr_zero(flags) : std::countl_zero(flags);
    const char* candidate = p + first / 8;
    if (kCharClass[static_cast<unsigned char>(*candidate)] != kWordChar) return candidate;
    p = candidate + 1;  // a control byte inside the word
  }
  while (p < end && kCharClass[static_cast<unsigned char>(*p)] == kWordChar) ++p;
  return p;
}

// Splits the line that starts at `p` into `words` and returns where the next line starts
// (`end` after the last line). One pass over each byte: finding the line's end, then its
// comment, then its words were three scans, a memchr call each (a tenth of the parse at 1M
// ops, docs/sched.md section 5, "The parse in one pass").
const char* split_line(const char* p, const char* end, std::vector<std::string_view>& words) {
  words.clear();
  while (p < end) {
    switch (kCharClass[static_cast<unsigned char>(*p)]) {
      case kBlank: ++p; break;
      case kLineEnd: return p + 1;
      case kComment: {
        const void* nl = std::memchr(p, '\n', static_cast<size_t>(end - p));
        return nl ? static_cast<const char*>(nl) + 1 : end;
      }
      case kWordChar: {
        const char* begin = p;
        p = word_end(p, end);
        words.emplace_back(begin, static_cast<size_t>(p - begin));
        break;
      }
    }
  }
  return end;
}

// A line split ahead of its parse. When it declares a buffer, the name is hashed and its
// index slot starts loading (NameTable::prefetch_hash) while the lines before it parse: a
// million-name index misses the cache on every new name, one miss at a time otherwise.
struct SplitLine {
  std::vector<std::string_view> words;
  uint64_t hash = 0;

  // Splits the line at `p` and returns where the next one starts.
  const char* split(const char* p, const char* end, const NameTable& names) {
    p = split_line(p, end, words);
    if (words.size() >= 2 && words[0] == "buffer") {
      hash = NameTable::hash(words[1]);
      names.prefetch_hash(hash);
    }
    return p;
  }
};

// How many times c occurs in text, 16 bytes a step in GCC's portable vectors (SSE2 on x86-64,
// NEON on arm64; 32-byte ones were lowered to a byte at a time without AVX), a byte counter
// per lane emptied every 255 steps before it can wrap. memchr, a call per match, took 27 ms
// for both counts over the 1M-op random stream's 57 MB; std::count is a byte loop at -O2
// (docs/sched.md section 5, "The parse in one pass").
size_t count_char(std::string_view text, char c) {
  using Bytes = signed char __attribute__((vector_size(16)));
  using Counts = unsigned char __attribute__((vector_size(16)));
  const Bytes needle = Bytes{} + static_cast<signed char>(c);
  const char* p = text.data();
  size_t left = text.size(), n = 0;
  while (left >= sizeof(Bytes)) {
    const size_t steps = std::min<size_t>(left / sizeof(Bytes), 255);
    Counts counts{};
    for (size_t i = 0; i < steps; ++i, p += sizeof(Bytes)) {
      Bytes chunk;
      std::memcpy(&chunk, p, sizeof chunk);
      counts -= reinterpret_cast<Counts>(chunk == needle);  // a match is all ones: -1
    }
    left -= steps * sizeof(Bytes);
    for (size_t lane = 0; lane < sizeof(Counts); ++lane) n += counts[lane];
  }
  for (; left > 0; --left, ++p) n += *p == c ? 1 : 0;
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
    LineParser parser{stream, NameTable(lines / 2), 0, {}, {}};
    // A ring of the next kLookaheadLines lines, split: each slot is parsed, then refilled.
    std::array<SplitLine, kLookaheadLines> ahead;
    const char *p = text.data(), *end = p + text.size();
    size_t next = 0, queued = 0;
    for (; queued < ahead.size() && p < end; ++queued) p = ahead[queued].split(p, end, parser.buffers);
    for (; queued > 0; next = (next + 1) % ahead.size()) {
      ++parser.line;
      if (Status st = parser.parse_words(ahead[next].words, ahead[next].hash); !st) return st.error();
      if (p < end) p = ahead[next].split(p, end, parser.buffers);
      else --queued;
    }
  }
  if (overrides.memory_bytes > 0) stream.memory_bytes = overrides.memory_bytes;
  if (overrides.cores > 0) stream.cores = overrides.cores;
  if (stream.memory_bytes <= 0)
    return make_error(-EINVAL, "no 'memory SIZE' line (or --memory) gives the memory size");
  if (Status st = finalize_stream(stream, false); !st) return st.error();
  return stream;
}

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
