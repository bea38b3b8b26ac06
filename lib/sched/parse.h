// The text format of docs/sched.md section 2: one op per line, '#' comments,
// sizes with K/M/G suffixes (KiB/MiB/GiB). Errors name the line and the problem.
#pragma once

#include <string>
#include <string_view>

#include "driver/common/result.h"
#include "lib/sched/stream.h"

namespace ork::sched {

struct ParseOverrides {
  int64_t memory_bytes = 0;  // > 0 replaces the file's "memory" line
  int cores = 0;             // > 0 replaces the file's "cores" line
};

// Parses and finalizes (finalize_stream) a stream. A long text is read in pieces on several
// threads; `pieces` > 0 fixes their number (tests: every count gives the same stream, or the
// same error, as one piece), 0 chooses by the text's size and the machine.
Result<Stream> parse_stream(std::string_view text, ParseOverrides overrides = {}, int pieces = 0);

// "30K" -> 30720, "2M" -> 2097152, "100" -> 100. Used by the tool's --memory too.
Result<int64_t> parse_size(std::string_view text);

// `value` in decimal appended to `out`, right-aligned in `width` columns (fmt's "{:6}"):
// numbers as the text format and the reports write them, with no string of their own.
void append_decimal(std::string& out, int64_t value, size_t width = 0);

// Writes a stream back in the text format (parse(format(s)) == s).
std::string format_stream(const Stream& stream);
// The same text appended to `text` (a plan's header first, with no copy of the stream's text).
void append_stream_text(std::string& text, const Stream& stream);

}  // namespace ork::sched
