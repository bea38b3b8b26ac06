// Fuzz harness: a regcmd buffer (raw little-endian u64 entries, what ork_regdump reads)
// through the decoder and the formatter of every entry (driver/regcmd/decode.cpp).
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "driver/regcmd/regcmd.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<uint64_t> entries(size / 8);
  if (!entries.empty()) std::memcpy(entries.data(), data, entries.size() * 8);
  for (const auto& w : ork::regcmd::decode_buffer(entries)) (void)ork::regcmd::format(w);
  return 0;
}
