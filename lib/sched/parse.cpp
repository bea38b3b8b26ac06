#include "lib/sched/parse.h"

#include <algorithm>
#include <charconv>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "lib/sched/beside.h"
#include "lib/sched/lex.h"
#include "lib/sched/names.h"
#include "lib/sched/parse_pieces.h"

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

using detail::Declarations;
using detail::LineFault;
using detail::LineKind;
using detail::Piece;
using detail::keep_first;
using detail::line_kind;

// The third pass over a piece: its op lines, up to its first fault, into the stream's ops
// from `ops` on (the first pass counted them, so each piece writes its own places) and into
// accesses of its own (Op::first_access counted from the piece's first; join_accesses moves
// it). Buffer names are looked up in the finished table, which threads share read-only (each
// with its own guesses); a name declared on a later line is not declared yet.
//
// With no `ops` the lines are read for their faults only and nothing is kept (past kMaxOps op
// lines, parse_stream); `before` is then the accesses of the lines before the piece, when known.
class OpReader {
 public:
  OpReader(const std::vector<Buffer>& declared, const NameTable& names, Op* ops, std::vector<Access>& accesses,
           uint64_t before = 0)
      : declared_(declared), names_(names), ops_(ops), accesses_(accesses), before_(before) {}

  // The accesses of the lines read.
  uint64_t accesses_read() const { return ops_ ? accesses_.size() : counted_; }

  // The piece's lines before `stop` (a fault's line: its piece's first pass counted the op
  // lines before it only).
  LineFault read(Piece piece, int stop) {
    std::vector<std::string_view> words;
    line_ = piece.first_line;
    for (const char* p = piece.begin; p < piece.end && line_ < stop; ++line_) {
      if (line_kind(first_word(p, piece.end)) != LineKind::op) {
        p = next_line(p, piece.end);
        continue;
      }
      p = split_line(p, piece.end, words);
      if (!op(words)) break;
    }
    return std::move(fault_);
  }

 private:
  // "w1" or "w1[4K:8K]" -> Access (whole buffer without a range).
  bool access(std::string_view item, Access& a) {
    const size_t bracket = item.find('[');
    const std::string_view name = item.substr(0, bracket);
    const int id = names_.find(name, NameTable::hash(name), guesses_);
    if (id < 0 || declared_[id].line >= line_) return fault_.set(line_, "buffer " + std::string(name) + " is not declared");
    const int64_t bytes = declared_[id].bytes;
    a = {id, 0, bytes};
    if (bracket == std::string_view::npos) return true;
    const size_t colon = item.find(':', bracket);
    if (colon == std::string_view::npos || item.back() != ']')
      return fault_.set(line_, "range '" + std::string(item) + "' must look like buf[offset:length]");
    auto off = parse_size(item.substr(bracket + 1, colon - bracket - 1));
    auto len = parse_size(item.substr(colon + 1, item.size() - colon - 2));
    if (!off) return fault_.set(line_, off.error().message);
    if (!len) return fault_.set(line_, len.error().message);
    a.offset = *off;
    a.length = *len;
    if (a.length == 0 || a.offset > bytes || a.length > bytes - a.offset)  // no offset + length: it can overflow
      return fault_.set(line_, "range " + std::string(item) + " lies outside buffer " + std::string(name) + " of " +
                                   std::to_string(bytes) + " bytes");
    return true;
  }

  bool accesses(std::string_view list, std::vector<Access>& out) {
    while (!list.empty()) {
      const size_t comma = list.find(',');
      Access a;
      if (!access(list.substr(0, comma), a)) return false;
      out.push_back(a);
      list = comma == std::string_view::npos ? std::string_view{} : list.substr(comma + 1);
    }
    return true;
  }

  bool key_value(Op& op, std::string_view word) {
    const size_t eq = word.find('=');
    if (eq == std::string_view::npos) return fault_.set(line_, "expected key=value, got '" + std::string(word) + "'");
    const std::string_view key = word.substr(0, eq), value = word.substr(eq + 1);
    if (key == "reads") return accesses(value, reads_);
    if (key == "writes") return accesses(value, writes_);
    if (key != "cycles") return fault_.set(line_, "unknown key '" + std::string(key) + "' (reads, writes, cycles)");
    auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), op.cycles);
    if (ec != std::errc() || end != value.data() + value.size() || op.cycles < 0 || op.cycles > kMaxOpCycles)
      return fault_.set(line_, "cycles='" + std::string(value) + "' is not a count from 0 to " +
                                   std::to_string(kMaxOpCycles) + " (2^40)");
    return true;
  }

  static bool op_kind(std::string_view word, OpKind& kind) {
    static constexpr std::pair<std::string_view, OpKind> kinds[] = {
        {"load", OpKind::load}, {"store", OpKind::store}, {"start", OpKind::start},
        {"wait", OpKind::wait}, {"barrier", OpKind::barrier}};
    for (const auto& [name, k] : kinds)
      if (word == name) return kind = k, true;
    return false;
  }

  bool op(const std::vector<std::string_view>& w) {
    OpKind kind = OpKind::barrier;
    if (!op_kind(w[0], kind))
      return fault_.set(line_, "unknown op '" + std::string(w[0]) +
                                   "' (memory, cores, slots, policy, buffer, load, store, start, wait, barrier)");
    if (w.size() < 2) return fault_.set(line_, std::string(w[0]) + " needs a name");
    Op op{.name = std::string(w[1]), .line = line_, .kind = kind};
    reads_.clear();
    writes_.clear();
    for (size_t i = 2; i < w.size(); ++i)
      if (!key_value(op, w[i])) return false;
    if (before_ + accesses_read() + reads_.size() + writes_.size() > UINT32_MAX) return fault_.set(line_, kTooManyAccesses);
    if (!ops_) {
      counted_ += reads_.size() + writes_.size();
      return true;
    }
    op.first_access = static_cast<uint32_t>(accesses_.size());
    op.read_count = static_cast<uint32_t>(reads_.size());
    op.write_count = static_cast<uint32_t>(writes_.size());
    accesses_.insert(accesses_.end(), reads_.begin(), reads_.end());
    accesses_.insert(accesses_.end(), writes_.begin(), writes_.end());
    *ops_++ = std::move(op);
    return true;
  }

  static constexpr const char* kTooManyAccesses = "more than 2^32 - 1 accesses in the stream";

  const std::vector<Buffer>& declared_;
  const NameTable& names_;
  Op* ops_;
  std::vector<Access>& accesses_;
  uint64_t before_ = 0, counted_ = 0;
  NameTable::Guesses guesses_;
  LineFault fault_;
  int line_ = 0;
  // The op's accesses as its line is read (a line may name reads= and writes= in either
  // order, or twice), then appended to the piece's one array (Stream::add); reused.
  std::vector<Access> reads_, writes_;
};

// Texts from this many bytes are read on several threads: about kBesideOps ops of the
// generators' streams (57 bytes a line), below which a thread's start (~50 us) is a tenth of
// the work it takes over.
constexpr size_t kThreadedBytes = size_t{4} << 20;
// Pieces a thread: the threads take the next piece as they finish one, so a piece of
// declarations (slow in the first pass, skipped in the third) and one of ops even out.
constexpr int kPiecesPerThread = 8;

int threads_for(std::string_view text, int pieces_wanted) {
  const int machine = piece_threads();
  if (pieces_wanted > 0) return std::min(pieces_wanted, machine);
  return text.size() < kThreadedBytes ? 1 : machine;
}

// `n` pieces of whole lines: each ends at the first line start at or after its share of the
// bytes (a piece may be empty).
std::vector<Piece> cut(std::string_view text, int n) {
  std::vector<Piece> pieces(static_cast<size_t>(n));
  const char *begin = text.data(), *end = begin + text.size(), *at = begin;
  for (int k = 0; k < n; ++k) {
    pieces[k].begin = at;
    const char* share = k + 1 < n ? begin + text.size() * static_cast<size_t>(k + 1) / static_cast<size_t>(n) : end;
    if (share > at && share < end && share[-1] != '\n') share = next_line(share, end);
    at = std::max(at, share);
    pieces[k].end = at;
  }
  return pieces;
}

// out[k] = pass(k), on the threads as for_pieces.
template <class Out, class Pass>
std::vector<Out> on_pieces(size_t n, int threads, const Pass& pass) {
  static_assert(!std::is_same_v<Out, bool>, "vector<bool> packs its elements: the threads would race on them");
  std::vector<Out> out(n);
  for_pieces(n, threads, [&](size_t k) { out[k] = pass(k); });
  return out;
}

// One piece's accesses (Op::first_access counted from its first; none kept past kMaxOps op
// lines, only counted) and its first fault.
struct PieceOps {
  std::vector<Access> accesses;
  uint64_t access_count = 0;
  LineFault fault;
};

// The pieces' accesses in one array, in order, and each op's first access moved past the
// pieces before its own (on the threads, a piece each).
void join_accesses(Stream& stream, std::vector<PieceOps>& pieces, const std::vector<size_t>& ops, int threads) {
  std::vector<uint32_t> base(pieces.size() + 1, 0);
  for (size_t k = 0; k < pieces.size(); ++k) base[k + 1] = base[k] + static_cast<uint32_t>(pieces[k].accesses.size());
  stream.accesses = std::move(pieces[0].accesses);
  stream.accesses.reserve(base.back());
  for (size_t k = 1; k < pieces.size(); ++k)
    stream.accesses.insert(stream.accesses.end(), pieces[k].accesses.begin(), pieces[k].accesses.end());
  for_pieces(pieces.size(), threads, [&](size_t k) {
    for (size_t i = ops[k]; i < ops[k + 1]; ++i) stream.ops[i].first_access += base[k];
  });
}

// The third pass on the pieces up to the first one with a fault (the lines after it do not
// count, and the pieces after it are not numbered); `ops[k]` is where piece k's ops go.
// The ops are kept when `stream.ops` has their places, else only counted.
std::vector<PieceOps> read_ops(const std::vector<Piece>& pieces, int threads, const std::vector<size_t>& ops,
                               Stream& stream, const NameTable& names, int stop) {
  const bool keep = stream.ops.size() == ops.back();
  return on_pieces<PieceOps>(ops.size() - 1, threads, [&](size_t k) {
    PieceOps out;
    const Piece& piece = pieces[k];
    if (piece.first_line >= stop) return out;
    const std::string_view text(piece.begin, static_cast<size_t>(piece.end - piece.begin));
    // At most the commas and two a line; untouched capacity costs no page.
    if (keep) out.accesses.reserve(count_char(text, ',') + 2 * (ops[k + 1] - ops[k]));
    OpReader reader(stream.buffers, names, keep ? stream.ops.data() + ops[k] : nullptr, out.accesses);
    out.fault = reader.read(piece, stop);
    out.access_count = reader.accesses_read();
    return out;
  });
}

// When the pieces' accesses pass 2^32 - 1 (Op::first_access is 32 bits; each piece checked only
// its own): the lines read again in order, on this thread, nothing kept, for the first op past
// it (or a fault before it).
LineFault first_fault_in_order(const std::vector<Piece>& pieces, const std::vector<PieceOps>& read,
                               const std::vector<Buffer>& declared, const NameTable& names, int stop) {
  uint64_t total = 0;
  for (const PieceOps& p : read) total += p.access_count;
  if (total <= UINT32_MAX) return {};
  std::vector<Access> none;
  uint64_t before = 0;
  for (size_t k = 0; k < read.size() && pieces[k].first_line < stop; ++k) {
    OpReader reader(declared, names, nullptr, none, before);
    if (LineFault fault = reader.read(pieces[k], stop)) return fault;
    before += reader.accesses_read();
  }
  return {};
}

// The pieces numbered (their first lines) up to the first with a fault; the number of them,
// and where each one's ops begin in the stream (`ops`, one more entry than pieces).
size_t number_pieces(std::vector<Piece>& pieces, const std::vector<Declarations>& declared, std::vector<size_t>& ops) {
  size_t counted = 1;
  ops.assign({0, declared[0].ops});
  for (; counted < pieces.size() && !declared[counted - 1].fault; ++counted) {
    pieces[counted].first_line = pieces[counted - 1].first_line + declared[counted - 1].lines;
    ops.push_back(ops.back() + declared[counted].ops);
  }
  return counted;
}

}  // namespace

// Three passes over pieces of the text (docs/sched.md section 2 for the format, section 5 for
// why): the declarations of each piece, on the threads; the declarations applied in line
// order, on this one (buffer ids are declaration order); the op lines of each piece, on the
// threads, against the finished name table. Each pass keeps its first fault and the earliest
// line wins, so the error is the one a reading line by line meets first, whatever the pieces.
Result<Stream> parse_stream(std::string_view text, ParseOverrides overrides, int pieces_wanted) {
  const int threads = threads_for(text, pieces_wanted);
  std::vector<Piece> pieces = cut(text, pieces_wanted > 0 ? pieces_wanted : threads * (threads > 1 ? kPiecesPerThread : 1));
  std::vector<Declarations> declared =
      on_pieces<Declarations>(pieces.size(), threads, [&](size_t k) { return scan_declarations(pieces[k]); });
  std::vector<size_t> ops;
  const size_t counted = number_pieces(pieces, declared, ops);
  size_t buffers = 0;
  for (size_t k = 0; k < counted; ++k) buffers += declared[k].items.size();
  Stream stream;
  stream.buffers.reserve(buffers);
  // Past kMaxOps op lines no stream is valid (finalize_stream): the ops are read for their faults
  // and counted, not kept (a 256 MiB text of short op lines would make 8 GB of them).
  const bool keep = ops.back() <= static_cast<size_t>(kMaxOps);
  if (keep) stream.ops.resize(ops.back());
  std::vector<PieceOps> read;
  LineFault fault;
  {  // the buffer names' table is freed before finalize_stream builds the op names': it reuses those pages
    NameTable names(buffers);
    fault = declare(declared, pieces, stream, names);
    declared = {};
    const int stop = fault ? fault.line : std::numeric_limits<int>::max();
    read = read_ops(pieces, threads, ops, stream, names, stop);
    keep_first(fault, first_fault_in_order(pieces, read, stream.buffers, names, stop));
  }
  for (const PieceOps& p : read) keep_first(fault, p.fault);
  if (fault) return fault.error();
  if (overrides.memory_bytes > 0) stream.memory_bytes = overrides.memory_bytes;
  if (overrides.cores > 0) stream.cores = overrides.cores;
  if (stream.memory_bytes <= 0)
    return make_error(-EINVAL, "no 'memory SIZE' line (or --memory) gives the memory size");
  if (!keep) {
    uint64_t accesses = 0;
    for (const PieceOps& p : read) accesses += p.access_count;
    return check_stream_bounds(stream, ops.back(), accesses).error();  // past kMaxOps: an error
  }
  join_accesses(stream, read, ops, threads);
  read = {};
  if (Status st = finalize_stream(stream, false); !st) return st.error();
  return stream;
}

}  // namespace ork::sched
