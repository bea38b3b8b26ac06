// The parser's passes over pieces of the text (parse.cpp), and the first two of them: the
// declarations of a piece (buffers and headers), then all of them applied in line order.
// Internal to lib/sched.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "driver/common/result.h"
#include "lib/sched/names.h"
#include "lib/sched/stream.h"

namespace ork::sched::detail {

// An error at a line of the text: the first one a pass met in its piece. The passes run on
// pieces at once, so each keeps its first and the earliest line wins.
struct LineFault {
  bool failed = false;
  int line = 0;
  std::string what;
  bool set(int at, std::string message) {
    failed = true;
    line = at;
    what = std::move(message);
    return false;
  }
  explicit operator bool() const { return failed; }
  Error error() const { return make_error(-EINVAL, "line " + std::to_string(line) + ": " + what); }
};

inline void keep_first(LineFault& kept, const LineFault& other) {
  if (other && (!kept || other.line < kept.line)) kept = other;
}

// What a line is, by its first word (docs/sched.md section 2).
enum class LineKind { blank, header, buffer, op };

inline LineKind line_kind(std::string_view first) {
  if (first.empty()) return LineKind::blank;
  if (first == "memory" || first == "cores" || first == "slots" || first == "policy") return LineKind::header;
  return first == "buffer" ? LineKind::buffer : LineKind::op;
}

// Whole lines of the text; its first line's number once the pieces before it are counted.
struct Piece {
  const char* begin = nullptr;
  const char* end = nullptr;
  int first_line = 1;
};

// A header or buffer line, read by the first pass: a header is split again when it is applied
// (a stream has a few), a buffer is parsed and its name hashed there.
struct Declaration {
  int line = 0;                  // within the piece, from 0, until the pieces are counted
  const char* header = nullptr;  // a header's line; nullptr for a buffer
  std::string_view name;
  uint64_t hash = 0;
  int64_t bytes = 0;
  bool in_memory = true;
};

// The first pass over a piece: its declarations in order, up to its first fault, and its
// counts of lines and of op lines (complete when there is no fault). Op lines are skipped to
// their end.
struct Declarations {
  std::vector<Declaration> items;
  LineFault fault;  // its line within the piece, from 0
  int lines = 0;
  size_t ops = 0;
};

// The first pass over one piece (on any thread).
Declarations scan_declarations(Piece piece);

// The second pass, in line order on one thread: headers set the stream's fields and buffers
// enter the name table and the stream (ids in declaration order). A duplicate buffer name or
// a bad header is a fault; it stops at the first fault of any piece, past which no line counts.
// `where` are the pieces, numbered up to the first with a fault.
LineFault declare(const std::vector<Declarations>& pieces, const std::vector<Piece>& where, Stream& stream,
                  NameTable& names);

}  // namespace ork::sched::detail
