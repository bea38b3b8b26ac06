// Fuzz harness: the stream text format (lib/sched/parse). Whatever parses must format back to
// text that parses to the same stream (parse(format(s)) == s, parse.h), and a text read in
// pieces must give what one piece gives (the stream with its source lines, or the same error):
// checked through the text, a mismatch traps.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "lib/sched/parse.h"

namespace {

std::string outcome(const ork::Result<ork::sched::Stream>& s) {
  if (!s) return "error: " + s.error().message;
  std::string text = ork::sched::format_stream(s.value());
  for (const ork::sched::Buffer& b : s.value().buffers) text += " " + std::to_string(b.line);
  for (const ork::sched::Op& op : s.value().ops) text += " " + std::to_string(op.line);
  return text;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)ork::sched::parse_size(text.substr(0, 32));
  auto stream = ork::sched::parse_stream(text, {}, 1);
  if (outcome(ork::sched::parse_stream(text, {}, 3)) != outcome(stream)) __builtin_trap();
  if (!stream) return 0;
  const std::string once = ork::sched::format_stream(*stream);
  auto again = ork::sched::parse_stream(once);
  if (!again || ork::sched::format_stream(*again) != once) __builtin_trap();
  return 0;
}
