// The text format's lines and words (docs/sched.md section 2): the splitter the parser reads
// every line with, and the counts that size its tables. Words are views into the text.
#pragma once

#include <cstddef>
#include <string_view>
#include <vector>

namespace ork::sched {

// Splits the line that starts at `p` into `words` (blank-separated, up to a '#' comment) and
// returns where the next line starts (`end` after the last line).
const char* split_line(const char* p, const char* end, std::vector<std::string_view>& words);

// The first word of the line at `p` (empty for a blank or comment-only line), without
// splitting the rest: what the parser's passes tell lines apart by.
std::string_view first_word(const char* p, const char* end);

// Where the line after the one at `p` starts (`end` after the last line).
const char* next_line(const char* p, const char* end);

// How many times c occurs in text.
size_t count_char(std::string_view text, char c);

}  // namespace ork::sched
