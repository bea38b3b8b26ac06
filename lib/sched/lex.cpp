// The text format's lines and words (lex.h).
#include "lib/sched/lex.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <cstring>

namespace ork::sched {

namespace {

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

}  // namespace

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

std::string_view first_word(const char* p, const char* end) {
  while (p < end && kCharClass[static_cast<unsigned char>(*p)] == kBlank) ++p;
  if (p == end || kCharClass[static_cast<unsigned char>(*p)] != kWordChar) return {};
  return {p, static_cast<size_t>(word_end(p, end) - p)};
}

const char* next_line(const char* p, const char* end) {
  const void* nl = std::memchr(p, '\n', static_cast<size_t>(end - p));
  return nl ? static_cast<const char*>(nl) + 1 : end;
}

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

}  // namespace ork::sched
