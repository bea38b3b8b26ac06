// The parser's first two passes (parse_pieces.h).
#include "lib/sched/parse_pieces.h"

#include <charconv>
#include <utility>

#include "lib/sched/lex.h"
#include "lib/sched/parse.h"

namespace ork::sched::detail {

namespace {

bool read_buffer(const std::vector<std::string_view>& w, int line, Declaration& d, LineFault& fault) {
  if (w.size() < 3 || w.size() > 4 || (w.size() == 4 && w[3] != "xram"))
    return fault.set(line, "expected: buffer NAME SIZE [xram]");
  auto bytes = parse_size(w[2]);
  if (!bytes) return fault.set(line, bytes.error().message);
  if (*bytes == 0) return fault.set(line, "buffer " + std::string(w[1]) + " has size 0");
  d = {line, nullptr, w[1], NameTable::hash(w[1]), *bytes, w.size() == 3};
  return true;
}

}  // namespace

Declarations scan_declarations(Piece piece) {
  Declarations out;
  std::vector<std::string_view> words;
  for (const char* p = piece.begin; p < piece.end; ++out.lines) {
    const LineKind kind = line_kind(first_word(p, piece.end));
    if (kind == LineKind::header) out.items.push_back({.line = out.lines, .header = p});
    if (kind == LineKind::op) ++out.ops;
    if (kind != LineKind::buffer) {
      p = next_line(p, piece.end);
      continue;
    }
    p = split_line(p, piece.end, words);
    Declaration d;
    if (!read_buffer(words, out.lines, d, out.fault)) return out;
    out.items.push_back(d);
  }
  return out;
}

namespace {

// "memory SIZE", "cores N", "slots SIZE", "policy NAME": set on the stream, the last one read
// winning.
bool apply_header(const std::vector<std::string_view>& w, int line, Stream& stream, LineFault& fault) {
  const std::string key(w[0]);
  if (w.size() != 2) return fault.set(line, key + " takes one value");
  if (key == "memory" || key == "slots") {  // slots: checked (a power of two, at most memory) by finalize_stream
    auto v = parse_size(w[1]);
    if (!v) return fault.set(line, v.error().message);
    (key == "memory" ? stream.memory_bytes : stream.slot_align_bytes) = *v;
    return true;
  }
  if (key == "policy") {
    if (w[1] != "fifo" && w[1] != "critical-path" && w[1] != "best")
      return fault.set(line, "policy '" + std::string(w[1]) + "': expected fifo, critical-path or best");
    stream.policy = w[1];
    return true;
  }
  int cores = 0;
  auto [end, ec] = std::from_chars(w[1].data(), w[1].data() + w[1].size(), cores);
  if (ec != std::errc() || end != w[1].data() + w[1].size() || cores < 1 || cores > kMaxCores)
    return fault.set(line, "cores '" + std::string(w[1]) + "' must be a count from 1 to " + std::to_string(kMaxCores));
  stream.cores = cores;
  return true;
}

// Declarations between a buffer's prefetch and its insert: enough for a miss to land (an
// insert takes ~0.05-0.1 us, a miss under a VM's nested paging ~0.1-0.2 us).
constexpr size_t kLookahead = 16;

}  // namespace

LineFault declare(const std::vector<Declarations>& pieces, const std::vector<Piece>& where, Stream& stream,
                  NameTable& names) {
  std::vector<std::string_view> words;
  for (size_t k = 0; k < pieces.size(); ++k) {
    const std::vector<Declaration>& items = pieces[k].items;
    for (size_t i = 0; i < items.size(); ++i) {
      if (i + kLookahead < items.size()) names.prefetch_hash(items[i + kLookahead].hash);
      const Declaration& d = items[i];
      const int line = where[k].first_line + d.line;
      LineFault fault;
      if (d.header) {
        split_line(d.header, where[k].end, words);
        if (!apply_header(words, line, stream, fault)) return fault;
        continue;
      }
      const int id = static_cast<int>(stream.buffers.size());
      if (names.insert(d.name, d.hash, id) != id) {
        fault.set(line, "duplicate buffer name " + std::string(d.name));
        return fault;
      }
      stream.buffers.push_back(Buffer{std::string(d.name), d.bytes, d.in_memory, line});
    }
    if (pieces[k].fault) return {true, where[k].first_line + pieces[k].fault.line, pieces[k].fault.what};
  }
  return {};
}

}  // namespace ork::sched::detail
