// Fuzz harness: the stream text format (lib/sched/parse). Whatever parses must format back to
// text that parses to the same stream (parse(format(s)) == s, parse.h): checked through the
// text, a mismatch traps.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "lib/sched/parse.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)ork::sched::parse_size(text.substr(0, 32));
  auto stream = ork::sched::parse_stream(text);
  if (!stream) return 0;
  const std::string once = ork::sched::format_stream(*stream);
  auto again = ork::sched::parse_stream(once);
  if (!again || ork::sched::format_stream(*again) != once) __builtin_trap();
  return 0;
}
