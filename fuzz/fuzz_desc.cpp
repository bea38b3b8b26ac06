// Fuzz harness: a model description (lib/exec/model.h: the JSON `ork_pack --desc` reads)
// through parse_desc. An accepted description must pass check_desc and round-trip:
// desc_to_json of what parsing its own JSON gives is that JSON. Errors are fine; a crash,
// a sanitizer report or a description that does not round-trip is a bug.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "lib/exec/model.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ork::exec;
  auto d = parse_desc(std::string(reinterpret_cast<const char*>(data), size));
  if (!d) return 0;
  if (!check_desc(*d)) std::abort();
  const std::string text = desc_to_json(*d);
  auto back = parse_desc(text);
  if (!back || desc_to_json(*back) != text) std::abort();
  return 0;
}
